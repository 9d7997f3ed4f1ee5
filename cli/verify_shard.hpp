// `attnspec verify --shard i/n`: the deterministic split of a check selection over n shards, the
// shard attributes a shard report carries (reports/SCHEMA.md, "Shard reports") and what `report
// merge` compares to accept shards as parts of one run. CPU only.
#pragma once
#include <string>
#include <vector>

#include "attnspec/io/h5.hpp"
#include "attnspec/proofs/registry.hpp"

namespace attnspec::cli {

struct ShardSpec {
    int index = 0, count = 0;  // count 0: not sharded
    bool active() const { return count > 0; }
};

// Parses "i/n" (0 <= i < n, 1 <= n <= 100000). Throws Error(Usage) naming --shard otherwise.
ShardSpec parse_shard(const std::string& text);

// The estimated cost (seconds on 2 cores) of running `c` with `opt`: the check's measured time per
// instance (CheckInfo::cost, proofs/registry.cpp) times the instances the options ask for; 1 s for
// a check without a measurement.
double shard_cost_estimate(const proofs::CheckInfo& c, const proofs::RunOptions& opt);

// Splits `todo` over `count` shards: checks by decreasing cost estimate (ties: selection order),
// each to the shard with the least estimated cost so far (ties: the lowest index). Returns, per
// shard, the positions in `todo` it holds, in selection order. A shard may hold none (count >
// checks). Deterministic: depends only on the names, the options and count.
std::vector<std::vector<size_t>> plan_shards(const std::vector<const proofs::CheckInfo*>& todo,
                                             const proofs::RunOptions& opt, int count);

// The run options that decide a report's numbers, one "key=value" per line, in a fixed order:
// seed, trials, thorough, time budget, shape, regimes, kappa convention, search budget, embedded
// heads, dataset. Two runs with equal text and selection draw the same instances.
std::string shard_options_text(const proofs::RunOptions& opt);

// "verify-all.h5" -> "verify-all.shard-3-of-8.h5" (the default report name of a shard).
std::string shard_report_name(const std::string& name, const ShardSpec& s);

// The shard attributes at the root of a shard report: shard_index, shard_count, shard_selection
// (every selected check, comma-separated, in order), shard_checks (those this shard holds, "" for
// none) and shard_options (shard_options_text).
void write_shard_attributes(H5Group& root, const ShardSpec& s,
                            const std::vector<std::string>& selection,
                            const std::vector<std::string>& held, const std::string& options);

// Names of the shard attributes (report merge reads them, and leaves them out of the merged
// report).
extern const char* const kShardAttributes[5];

}  // namespace attnspec::cli
