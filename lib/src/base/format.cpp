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
        std::string t = format_number(x, p);
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
    if (lo == hi && value == lo) {  // a point: the shortest exact text says everything
        const std::string t = format_exact(value);
        return t + " in [" + t + ", " + t + "]";
    }
    const int p = enclosure_digits(lo, hi);
    // Beyond six digits keep trailing zeros, so the three numbers show the same digits.
    auto text = [p](double x) {
        if (p <= 6 || !std::isfinite(x)) return format_number(x, p);
        char buf[64];
        std::snprintf(buf, sizeof buf, "%#.*g", p, x);
        return std::string(buf);
    };
    return text(value) + " in [" + text(lo) + ", " + text(hi) + "]";
}

}  // namespace attnspec
