#include "attnspec/base/memory.hpp"

#include <unistd.h>

#include <cmath>

#include "attnspec/base/errors.hpp"

namespace attnspec {
namespace {
double g_limit = -1;  // < 0: not set, use the default
}

double physical_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return 0;
    return static_cast<double>(pages) * static_cast<double>(page);
}

double default_memory_limit_bytes() {
    const double phys = physical_memory_bytes();
    return phys > 0 ? 0.5 * phys : 8.0 * (1ull << 30);
}

double memory_limit_bytes() { return g_limit < 0 ? default_memory_limit_bytes() : g_limit; }

void set_memory_limit_bytes(double bytes) {
    if (!(bytes > 0 && std::isfinite(bytes)))
        fail_usage("memory limit = " + value_text(bytes) + " bytes must be positive and finite",
                   "max_bytes");
    g_limit = bytes;
}

}  // namespace attnspec
