// Value text for human output (base/format.hpp).
#include "attnspec/base/format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace attnspec {

std::string format_number(double x, int digits) {
    digits = std::clamp(digits, 1, 17);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, x);
    return buf;
}

std::string format_exact(double x) {
    if (!std::isfinite(x)) return format_number(x);
    for (int p = 1; p < 17; ++p) {
        const std::string t = format_number(x, p);
        if (std::strtod(t.c_str(), nullptr) == x) return t;
    }
    return format_number(x, 17);
}

int enclosure_digits(double lo, double hi) {
    if (!std::isfinite(lo) || !std::isfinite(hi)) return 17;
    for (int p = 6; p < 17; ++p)
        if (format_number(lo, p) != format_number(hi, p)) return p;
    return 17;
}

std::string format_enclosure(double value, double lo, double hi) {
    const int p = enclosure_digits(lo, hi);
    return format_number(value, p) + " in [" + format_number(lo, p) + ", " + format_number(hi, p) +
           "]";
}

}  // namespace attnspec
