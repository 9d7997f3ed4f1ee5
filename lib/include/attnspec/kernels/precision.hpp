// Floating-point formats a user's kernel declares (fp16, bf16, tf32, fp32, fp64) and software
// rounding to them: round to nearest, ties to even, from a double, with gradual underflow
// (subnormals) and overflow to infinity, so that attnspec can run a plain implementation "at the
// declared precision" one operation at a time. Rounding a double result of +, -, *, / of two
// values of a format with p <= 24 bits gives the correctly rounded result of that format (2p + 2
// <= 53: double rounding is innocuous). CPU only; header + kernels/precision.cpp.
#pragma once
#include <string>

namespace attnspec::kernels {

enum class Format { fp16, bf16, tf32, fp32, fp64 };

// IEEE-style parameters: p significand bits (the implicit one included), emin the exponent of
// the smallest normal number, emax that of the largest finite number.
struct FormatSpec {
    int p;
    int emin;
    int emax;
};
FormatSpec format_spec(Format f);

// "fp16", "bf16", "tf32", "fp32", "fp64"; parse_format throws Error(Usage) naming `parameter`.
const char* format_name(Format f);
Format parse_format(const std::string& text, const std::string& parameter);

// x rounded to the nearest value of `f` (ties to even); NaN, +-inf and zeros (with their sign)
// pass through; |x| beyond the largest finite value after rounding gives +-inf. O(1); fp64 and
// fp32 inline (the hardware's conversion), the narrower formats in precision.cpp.
double round_to_narrow(double x, Format f);
inline double round_to(double x, Format f) {
    if (f == Format::fp64) return x;
    if (f == Format::fp32) return static_cast<double>(static_cast<float>(x));  // IEEE RNE
    return round_to_narrow(x, f);
}

// Unit roundoff u = 2^-p (relative error of rounding a normal number).
double unit_roundoff(Format f);
// Largest absolute error of rounding a number below the smallest normal: half the subnormal
// spacing, 2^(emin - p).
double underflow_error(Format f);
// Smallest positive normal number, 2^emin (bounds what a flush to zero loses).
double smallest_normal(Format f);
// Largest finite number, (2 - 2^(1-p)) 2^emax.
double largest_finite(Format f);
// Whether x is exactly representable in `f` (round_to(x, f) == x).
bool representable(double x, Format f);

// The format an output of a kernel declared in `f` is stored in: tf32 kernels write fp32
// (tf32 is an operand format of the matrix units), every other format itself.
Format output_format(Format f);

}  // namespace attnspec::kernels
