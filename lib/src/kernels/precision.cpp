// Software rounding to fp16, bf16, tf32, fp32, fp64 (kernels/precision.hpp).
#include "attnspec/kernels/precision.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "attnspec/base/enum_names.hpp"

namespace attnspec::kernels {
namespace {
constexpr EnumName<Format> kFormatNames[] = {
    {Format::fp16, "fp16"}, {Format::bf16, "bf16"}, {Format::tf32, "tf32"},
    {Format::fp32, "fp32"}, {Format::fp64, "fp64"},
};

// The smallest normal and the largest finite value of each format, computed once.
struct Limits {
    double normal = 0, largest = 0;
};
const Limits& limits(Format f) {
    static const auto table = [] {
        std::array<Limits, 5> t{};
        for (Format g : {Format::fp16, Format::bf16, Format::tf32, Format::fp32, Format::fp64})
            t[static_cast<size_t>(g)] = {smallest_normal(g), largest_finite(g)};
        return t;
    }();
    return table[static_cast<size_t>(f)];
}
}  // namespace

FormatSpec format_spec(Format f) {
    switch (f) {
        case Format::fp16:
            return {11, -14, 15};
        case Format::bf16:
            return {8, -126, 127};
        case Format::tf32:
            return {11, -126, 127};
        case Format::fp32:
            return {24, -126, 127};
        case Format::fp64:
            break;
    }
    return {53, -1022, 1023};
}

const char* format_name(Format f) { return enum_name(f, kFormatNames); }

Format parse_format(const std::string& text, const std::string& parameter) {
    return enum_from_name(text, kFormatNames, "format", parameter);
}

double round_to_narrow(double x, Format f) {
    if (f == Format::fp64 || x == 0 || !std::isfinite(x)) return x;
    if (f == Format::fp32) return static_cast<double>(static_cast<float>(x));  // IEEE RNE
    const FormatSpec s = format_spec(f);
    const Limits& lim = limits(f);
    if (std::fabs(x) >= lim.normal) {
        // A normal result: round the binary64 significand to p bits, to nearest even, on its
        // bits (a carry moves into the exponent as it should); the same value as the general
        // path below, without frexp/ldexp per call.
        const int drop = 53 - s.p;
        std::uint64_t bits = 0;
        std::memcpy(&bits, &x, sizeof bits);
        bits += ((std::uint64_t{1} << (drop - 1)) - 1) + ((bits >> drop) & 1);
        bits &= ~((std::uint64_t{1} << drop) - 1);
        double r = 0;
        std::memcpy(&r, &bits, sizeof r);
        return std::fabs(r) > lim.largest ? std::copysign(HUGE_VAL, x) : r;
    }
    int e = 0;
    std::frexp(x, &e);  // |x| = m 2^e, m in [1/2, 1): x's exponent is e - 1
    const int exponent = std::max(e - 1, s.emin);
    const int quantum = exponent - (s.p - 1);  // spacing 2^quantum at x
    const double r = std::ldexp(std::nearbyint(std::ldexp(x, -quantum)), quantum);  // RNE
    return std::fabs(r) > largest_finite(f) ? std::copysign(HUGE_VAL, x) : r;
}

double unit_roundoff(Format f) { return std::ldexp(1.0, -format_spec(f).p); }

double underflow_error(Format f) {
    const FormatSpec s = format_spec(f);
    return std::ldexp(1.0, s.emin - s.p);
}

double smallest_normal(Format f) { return std::ldexp(1.0, format_spec(f).emin); }

double largest_finite(Format f) {
    const FormatSpec s = format_spec(f);
    return std::ldexp(2.0 - std::ldexp(1.0, 1 - s.p), s.emax);
}

bool representable(double x, Format f) { return round_to(x, f) == x; }

Format output_format(Format f) { return f == Format::tf32 ? Format::fp32 : f; }

}  // namespace attnspec::kernels
