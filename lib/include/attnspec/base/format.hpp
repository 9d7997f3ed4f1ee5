// Text of computed values for the commands' human output: as many significant digits as an
// enclosure supports, exponent form for small and large magnitudes. CPU only, no allocation beyond
// the returned strings.
#pragma once
#include <string>
#include <vector>

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

// Numbers for reading (report tables). The significant digits an enclosure [lo, hi] of a value
// supports: the leading digits lo and hi share plus the first uncertain one (1 .. 17); 17 for a
// point (lo == hi) or non-finite ends.
int supported_digits(double lo, double hi);

// The digits one table column needs: the fewest, from min_digits up to max_digits, at which the
// column's distinct finite values print distinctly (so two values that differ only in the 7th
// digit get 7) and no value that is not an integer prints as one (0.99996 is not "1"); never more
// than max_digits (what the values' accuracy supports).
int column_digits(const std::vector<double>& values, int min_digits = 3, int max_digits = 17);

// One cell: an integral value below 1e15 in magnitude as an integer ("12", never "12.0" or
// "1.2e+01"), anything else as format_number(x, digits).
std::string format_cell(double x, int digits);

// A whole column: format_cell of every value with column_digits(values, min_digits, max_digits).
std::vector<std::string> format_column(const std::vector<double>& values, int min_digits = 3,
                                       int max_digits = 17);

// A duration for reading, three significant digits: "850 µs", "12.3 ms", "4.56 s", "2.5 min"
// (from 100 s on); "n/a" when negative or not finite.
std::string format_duration(double seconds);

// `s` with every control character (0x00-0x1f, 0x7f) but those in `keep` written as \xNN: with
// keep "" a user's string echoed in a one-line message (a dataset selector) stays on that line;
// with "\n" or "\n\t" text meant for a terminal keeps its layout but no escape sequence. O(|s|).
std::string escape_controls(const std::string& s, const char* keep = "");

}  // namespace attnspec
