// Software rounding to fp16, bf16, tf32, fp32 (kernels/precision.hpp) against exact values from
// IEEE 754-2019 and the formats' definitions: ties to even, the largest finite value and the
// overflow threshold, the smallest subnormal and its half-way point, signs, NaN and infinity.
#include <cmath>
#include <limits>

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
