// The shard attributes and a shard's report name (report/shard.hpp).
#include "attnspec/report/shard.hpp"

#include <cstdint>

namespace attnspec {

const char* const kShardAttributes[5] = {"shard_index", "shard_count", "shard_selection",
                                         "shard_checks", "shard_options"};

std::string shard_report_name(const std::string& name, const ShardSpec& s) {
    const std::string stem = name.size() > 3 && name.substr(name.size() - 3) == ".h5"
                                 ? name.substr(0, name.size() - 3)
                                 : name;
    return stem + ".shard-" + std::to_string(s.index) + "-of-" + std::to_string(s.count) + ".h5";
}

void write_shard_attributes(H5Group& root, const ShardSpec& s,
                            const std::vector<std::string>& selection,
                            const std::vector<std::string>& held, const std::string& options) {
    const auto join = [](const std::vector<std::string>& v) {
        std::string out;
        for (const auto& x : v) out += (out.empty() ? "" : ",") + x;
        return out;
    };
    root.attr(kShardAttributes[0], static_cast<std::int64_t>(s.index));
    root.attr(kShardAttributes[1], static_cast<std::int64_t>(s.count));
    root.attr(kShardAttributes[2], join(selection));
    root.attr(kShardAttributes[3], join(held));
    root.attr(kShardAttributes[4], options);
}

}  // namespace attnspec
