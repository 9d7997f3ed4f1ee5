// Text of computed values for the commands' human output: as many significant digits as an
// enclosure supports, exponent form for small and large magnitudes. CPU only, no allocation beyond
// the returned strings.
#pragma once
#include <string>

namespace attnspec {

// x with `digits` significant digits (1 .. 17) in the %g style: exponent form below 1e-4 and at
// 10^digits or above, trailing zeros dropped; "inf", "-inf", "nan" as such.
std::string format_number(double x, int digits = 6);

// The shortest text (at most 17 significant digits) that reads back as exactly x.
std::string format_exact(double x);

// The significant digits, from 6 to 17, at which lo and hi first print differently; 17 when they
// never do (lo == hi, or non-finite ends). Printing an enclosure with fewer would hide its width.
int enclosure_digits(double lo, double hi);

// "value in [lo, hi]", all three with enclosure_digits(lo, hi) significant digits (trailing zeros
// kept when that is more than six, so the three align); a point (value == lo == hi) exactly, as
// format_exact.
std::string format_enclosure(double value, double lo, double hi);

}  // namespace attnspec
