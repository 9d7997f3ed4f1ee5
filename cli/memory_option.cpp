#include "memory_option.hpp"

#include <cmath>
#include <cstdlib>

#include "attnspec/base/memory.hpp"

namespace attnspec::cli {

double parse_size(const std::string& s, const std::string& option, bool allow_zero) {
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    const std::string unit = end ? end : "";
    double mult = 0;
    if (unit.empty() || unit == "B")
        mult = 1;
    else if (unit == "KiB" || unit == "K")
        mult = 1024.0;
    else if (unit == "MiB" || unit == "M")
        mult = 1024.0 * 1024;
    else if (unit == "GiB" || unit == "G")
        mult = 1024.0 * 1024 * 1024;
    else if (unit == "TiB" || unit == "T")
        mult = 1024.0 * 1024 * 1024 * 1024;
    if (end == s.c_str() || mult == 0 || !(allow_zero ? v >= 0 : v > 0) || !std::isfinite(v * mult))
        fail_usage(option + " expects " + (allow_zero ? "a size" : "a positive size") +
                   " like 512MiB, 4GiB or a byte count, got '" + s + "'");
    constexpr double kMaxSize = 1125899906842624.0 * 1024;  // 1 EiB (2^60 bytes)
    if (v * mult > kMaxSize)
        fail_usage(option + " expects a size of at most 1 EiB (2^60 bytes), got '" + s + "'");
    return v * mult;
}

void add_memory_option(po::options_description& desc, std::string& value) {
    desc.add_options()("max-memory", po::value(&value),
                       ("memory budget (default half of physical memory, " +
                        human_bytes(default_memory_limit_bytes()) + " here)")
                           .c_str());
}

double apply_memory_option(const std::string& value) {
    const double bytes =
        value.empty() ? default_memory_limit_bytes() : parse_size(value, "--max-memory");
    set_memory_limit_bytes(bytes);
    return bytes;
}

}  // namespace attnspec::cli
