// Value text for human output (base/format.hpp).
#include "attnspec/base/format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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

int supported_digits(double lo, double hi) {
    if (!std::isfinite(lo) || !std::isfinite(hi) || lo == hi) return 17;
    for (int p = 1; p < 17; ++p)
        if (format_number(lo, p) != format_number(hi, p)) return p;
    return 17;
}

int column_digits(const std::vector<double>& values, int min_digits, int max_digits) {
    max_digits = std::clamp(max_digits, 1, 17);
    min_digits = std::clamp(min_digits, 1, max_digits);
    std::vector<double> v;
    for (double x : values)
        if (std::isfinite(x)) v.push_back(x);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    // Sorted and distinct: a collision at p digits shows between neighbours. A value that is not
    // an integer must not print as one (0.99996 is not "1").
    for (int p = min_digits; p < max_digits; ++p) {
        bool distinct = true;
        for (size_t i = 0; i < v.size() && distinct; ++i) {
            const std::string t = format_cell(v[i], p);
            distinct = (i == 0 || format_cell(v[i - 1], p) != t) &&
                       (v[i] == std::floor(v[i]) || t.find_first_of(".e") != std::string::npos);
        }
        if (distinct) return p;
    }
    return max_digits;
}

std::string format_cell(double x, int digits) {
    if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 1e15) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.0f", x);
        return std::string(buf) == "-0" ? "0" : buf;
    }
    return format_number(x, digits);
}

std::vector<std::string> format_column(const std::vector<double>& values, int min_digits,
                                       int max_digits) {
    const int p = column_digits(values, min_digits, max_digits);
    std::vector<std::string> out;
    out.reserve(values.size());
    for (double x : values) out.push_back(format_cell(x, p));
    return out;
}

std::string format_duration(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) return "n/a";
    // Thresholds at 0.9995 of the unit: 0.99996 s is "1 s", never "1e+03 ms".
    if (seconds >= 99.95) return format_number(seconds / 60, 3) + " min";
    if (seconds >= 0.9995) return format_number(seconds, 3) + " s";
    if (seconds >= 0.9995e-3) return format_number(seconds * 1e3, 3) + " ms";
    return format_number(seconds * 1e6, 3) + " \u00b5s";
}

std::string escape_controls(const std::string& s, const char* keep) {
    std::string out;
    out.reserve(s.size());
    for (unsigned char c : s) {
        if ((c < 0x20 || c == 0x7f) && (c == 0 || !std::strchr(keep, c))) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

}  // namespace attnspec
