// Software rounding to fp16, bf16, tf32, fp32 (kernels/precision.hpp) against exact values from
// IEEE 754-2019 and the formats' definitions: ties to even, the largest finite value and the
// overflow threshold, the smallest subnormal and its half-way point, signs, NaN and infinity.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "attnspec/kernels/precision.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::kernels;

namespace {
double p2(int e) { return std::ldexp(1.0, e); }
const double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("round_to fp16: ties to even, largest finite, overflow, subnormals", "[kernels]") {
    CHECK(round_to(1 + p2(-11), Format::fp16) == 1.0);                    // tie -> even (1)
    CHECK(round_to(1 + 3 * p2(-11), Format::fp16) == 1 + p2(-9));         // tie -> even (1 + 2^-9)
    CHECK(round_to(1 + p2(-11) + p2(-30), Format::fp16) == 1 + p2(-10));  // above the tie
    CHECK(round_to(65504.0, Format::fp16) == 65504.0);                    // largest finite
    CHECK(largest_finite(Format::fp16) == 65504.0);
    CHECK(round_to(65519.99, Format::fp16) == 65504.0);
    CHECK(round_to(65520.0, Format::fp16) == kInf);  // the tie with 2^16 rounds to even: overflow
    CHECK(round_to(-65520.0, Format::fp16) == -kInf);
    CHECK(round_to(p2(-24), Format::fp16) == p2(-24));  // smallest subnormal
    CHECK(round_to(p2(-25), Format::fp16) == 0.0);      // half of it: tie -> even (0)
    CHECK(round_to(p2(-25) + p2(-40), Format::fp16) == p2(-24));
    CHECK(round_to(3 * p2(-25), Format::fp16) == p2(-23));  // 1.5 units: tie -> even (2 units)
    CHECK(round_to(p2(-14) + p2(-24), Format::fp16) == p2(-14) + p2(-24));  // subnormal spacing
    CHECK(std::signbit(round_to(-p2(-30), Format::fp16)));                  // -0 keeps its sign
    CHECK(round_to(2049.0, Format::fp16) == 2048.0);  // spacing 2 above 2048: tie -> even
    CHECK(round_to(2051.0, Format::fp16) == 2052.0);
    CHECK(round_to(0.1, Format::fp16) == 0.0999755859375);  // the fp16 nearest to 0.1
}

TEST_CASE("round_to bf16 and tf32: 8 and 11 significand bits, the fp32 exponent range",
          "[kernels]") {
    CHECK(round_to(1 + p2(-8), Format::bf16) == 1.0);
    CHECK(round_to(1 + 3 * p2(-8), Format::bf16) == 1 + p2(-6));
    CHECK(largest_finite(Format::bf16) == (2 - p2(-7)) * p2(127));
    CHECK(round_to((2 - p2(-8)) * p2(127), Format::bf16) == kInf);  // the overflow tie
    CHECK(round_to(p2(-133), Format::bf16) == p2(-133));            // smallest subnormal
    CHECK(round_to(p2(-134), Format::bf16) == 0.0);
    CHECK(round_to(1.5 * p2(-133), Format::bf16) == p2(-132));
    CHECK(round_to(3.140625, Format::bf16) == 3.140625);  // representable: 1.1001001b x 2
    CHECK(round_to(1 + p2(-11), Format::tf32) == 1.0);
    CHECK(round_to(1 + p2(-11) + p2(-20), Format::tf32) == 1 + p2(-10));
    CHECK(largest_finite(Format::tf32) == (2 - p2(-10)) * p2(127));
    CHECK(round_to(p2(-136), Format::tf32) == p2(-136));  // smallest tf32 subnormal
    CHECK(round_to(p2(-137), Format::tf32) == 0.0);
}

TEST_CASE("round_to fp32 and fp64, NaN and infinity pass through", "[kernels]") {
    CHECK(round_to(1 + p2(-24), Format::fp32) == 1.0);
    CHECK(round_to(1 + p2(-24) + p2(-40), Format::fp32) == 1 + p2(-23));
    CHECK(round_to(p2(-149), Format::fp32) == p2(-149));
    CHECK(round_to(p2(-150), Format::fp32) == 0.0);
    CHECK(round_to((2 - p2(-24)) * p2(127), Format::fp32) == kInf);  // the overflow tie
    CHECK(round_to(0.1, Format::fp64) == 0.1);
    for (Format f : {Format::fp16, Format::bf16, Format::tf32, Format::fp32}) {
        CHECK(std::isnan(round_to(std::nan(""), f)));
        CHECK(round_to(kInf, f) == kInf);
        CHECK(round_to(-kInf, f) == -kInf);
        CHECK(round_to(1e300, f) == kInf);
    }
}

TEST_CASE("unit roundoffs, underflow errors and format names", "[kernels]") {
    CHECK(unit_roundoff(Format::fp16) == p2(-11));
    CHECK(unit_roundoff(Format::bf16) == p2(-8));
    CHECK(unit_roundoff(Format::tf32) == p2(-11));
    CHECK(unit_roundoff(Format::fp32) == p2(-24));
    CHECK(unit_roundoff(Format::fp64) == p2(-53));
    CHECK(underflow_error(Format::fp16) == p2(-25));
    CHECK(smallest_normal(Format::bf16) == p2(-126));
    CHECK(output_format(Format::tf32) == Format::fp32);
    CHECK(parse_format("bf16", "dtype") == Format::bf16);
    CHECK(std::string(format_name(Format::tf32)) == "tf32");
    const Error e = test::error_of([] { parse_format("fp8", "dtype"); });
    CHECK(e.code() == ExitCode::Usage);
    CHECK(e.parameter() == "dtype");
    CHECK(test::has(e, "expected fp16, bf16, tf32, fp32 or fp64"));
}

TEST_CASE("round_to agrees with rounding by the definition on random values", "[kernels]") {
    // The nearest value with p significant bits at x's exponent (emin below the normal range),
    // ties to even, written out here independently of precision.cpp's bit manipulation.
    auto by_definition = [](double x, Format f) {
        const FormatSpec s = format_spec(f);
        const int exponent = std::max(std::ilogb(x), s.emin);
        const double unit = std::ldexp(1.0, exponent - (s.p - 1));
        const double k = std::floor(std::fabs(x) / unit), rest = std::fabs(x) / unit - k;
        const double up = rest > 0.5 || (rest == 0.5 && std::fmod(k, 2.0) == 1) ? k + 1 : k;
        const double r = std::copysign(up * unit, x);
        return std::fabs(r) > largest_finite(f) ? std::copysign(kInf, x) : r;
    };
    std::mt19937_64 rng(31);
    std::uniform_real_distribution<double> mant(-1, 1);
    std::uniform_int_distribution<int> expo(-150, 20);
    int checked = 0;
    for (Format f : {Format::fp16, Format::bf16, Format::tf32})
        for (int i = 0; i < 20000; ++i) {
            double x = std::ldexp(mant(rng), expo(rng));
            if (i % 4 == 0) {  // exact ties and near-ties at the format's spacing
                const FormatSpec s = format_spec(f);
                const int e = std::max(std::ilogb(x), s.emin) - s.p;
                x = std::ldexp(std::nearbyint(std::ldexp(x, -e)), e) +
                    (i % 8 == 0 ? 0.0 : p2(e - 30));
            }
            if (x == 0) continue;
            INFO(format_name(f) << " " << x);
            REQUIRE(round_to(x, f) == by_definition(x, f));
            ++checked;
        }
    CHECK(checked > 50000);  // ties far below the subnormal range become 0 and are skipped
}
