#include "attnspec/base/errors.hpp"

#include <cmath>
#include <cstdio>

namespace attnspec {

std::string human_bytes(double bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 5) {
        bytes /= 1024.0;
        ++u;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
    return buf;
}

void check_allocation(double bytes, double limit_bytes, const std::string& what) {
    if (!(bytes <= limit_bytes))
        throw Error(ExitCode::DataError, what + " would need " + human_bytes(bytes) +
                                             ", above the limit of " + human_bytes(limit_bytes) +
                                             " (raise it with --max-memory)");
}

}  // namespace attnspec
