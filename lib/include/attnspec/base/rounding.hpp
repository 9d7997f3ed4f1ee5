// Unit roundoff and the gamma_n constants of floating-point error analysis (Higham, Accuracy and
// Stability of Numerical Algorithms, 2nd ed., §3.1), defined once for the whole library:
//   u = eps / 2 (binary64, round to nearest), gamma_n = n u / (1 - n u) for n u < 1.
// |fl(sum of n terms) - sum| <= gamma_{n-1} sum |terms|; a dot product of length n has relative
// error <= gamma_n in the sum of the absolute products. CPU and device code alike (constexpr).
#pragma once
#include <limits>

namespace attnspec {

// Unit roundoff of double: 2^-53.
inline constexpr double kUnitRoundoff = std::numeric_limits<double>::epsilon() / 2;

// gamma_n = n u / (1 - n u); +inf when n u >= 1 (no bound). n may be fractional (a count scaled
// by a constant factor, as in gamma_{2N+4}).
constexpr double gamma_n(double n, double u = kUnitRoundoff) {
    return n * u < 1 ? n * u / (1 - n * u) : std::numeric_limits<double>::infinity();
}

// Factor on a computed error bound that covers the rounding of evaluating the bound's own formula
// (a few operations, each off by at most u: far below 1e-8). The certified sigma_min bounds
// (spectral/certified.hpp) and the double-double Jacobian factors that feed them use it.
inline constexpr double kBoundSafety = 1 + 1e-8;

}  // namespace attnspec
