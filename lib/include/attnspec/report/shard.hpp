// Shard reports (`verify --shard i/n`, reports/SCHEMA.md, "Shard reports"): the shard attributes
// a shard report carries at its root, written by `verify` and read by `report merge`
// (report/merge.hpp), and the default name of a shard's report. CPU only.
#pragma once
#include <string>
#include <vector>

#include "attnspec/io/h5.hpp"

namespace attnspec {

struct ShardSpec {
    int index = 0, count = 0;  // count 0: not sharded
    bool active() const { return count > 0; }
};

// "verify-all.h5" -> "verify-all.shard-3-of-8.h5" (the default report name of a shard).
std::string shard_report_name(const std::string& name, const ShardSpec& s);

// The shard attributes at the root of a shard report: shard_index, shard_count, shard_selection
// (every selected check, comma-separated, in order), shard_checks (those this shard holds, "" for
// none) and shard_options (the run options that decide the numbers, one "key=value" per line).
void write_shard_attributes(H5Group& root, const ShardSpec& s,
                            const std::vector<std::string>& selection,
                            const std::vector<std::string>& held, const std::string& options);

// Names of the shard attributes, in the order above (report merge reads them, and leaves them out
// of the merged report).
extern const char* const kShardAttributes[5];

}  // namespace attnspec
