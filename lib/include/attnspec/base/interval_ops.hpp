// Interval arithmetic with outward rounding on attnspec::Interval (check.hpp), for theorem bounds
// built from enclosed condition numbers, e.g. the thm3.4 right-hand side
//   kappa(X)^3 kappa(Lambda) kappa(W_V) (kappa(W_Q) + kappa(W_K)) + kappa(X) kappa(S).
// Each operation evaluates the endpoints in round-to-nearest and then widens each endpoint by one
// ulp outward (std::nextafter), so the result contains the exact real result. CPU only.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>

#include "attnspec/base/check.hpp"

namespace attnspec::iv {

inline double down(double x) {
    return std::isfinite(x) ? std::nextafter(x, -std::numeric_limits<double>::infinity()) : x;
}
inline double up(double x) {
    return std::isfinite(x) ? std::nextafter(x, std::numeric_limits<double>::infinity()) : x;
}
inline Interval whole() {
    const double inf = std::numeric_limits<double>::infinity();
    return {-inf, inf};
}
inline bool is_nan(Interval a) { return std::isnan(a.lo) || std::isnan(a.hi); }
inline Interval nan() {
    const double n = std::numeric_limits<double>::quiet_NaN();
    return {n, n};
}

// a + b, a - b: endpoints one ulp outward. Cost O(1); NaN in -> NaN out.
inline Interval add(Interval a, Interval b) { return {down(a.lo + b.lo), up(a.hi + b.hi)}; }
inline Interval sub(Interval a, Interval b) { return {down(a.lo - b.hi), up(a.hi - b.lo)}; }

// a * b: min/max of the four endpoint products (0 * inf is taken as 0: an exact zero factor).
Interval mul(Interval a, Interval b);
// a / b: b containing 0 gives the whole line, except b = [0, hi] with a >= 0 -> [a.lo/hi, +inf].
Interval div(Interval a, Interval b);
// a^k for integer k >= 0 (even k of an interval straddling 0 starts at 0).
Interval pow(Interval a, int k);
// sqrt of a >= 0 (a.lo < 0 clipped to 0; a.hi < 0 -> NaN).
Interval sqrt(Interval a);
inline Interval max(Interval a, Interval b) { return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)}; }
inline Interval min(Interval a, Interval b) { return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)}; }
// Intersection; empty (lo > hi) when disjoint.
inline Interval intersect(Interval a, Interval b) {
    return {std::max(a.lo, b.lo), std::min(a.hi, b.hi)};
}
// Midpoint-radius from a computed value and an error bound, rounded outward.
inline Interval around(double x, double r) { return {down(x - r), up(x + r)}; }

}  // namespace attnspec::iv

namespace attnspec {
// Outward-rounded operators (found by ADL on Interval).
inline Interval operator+(Interval a, Interval b) { return iv::add(a, b); }
inline Interval operator-(Interval a, Interval b) { return iv::sub(a, b); }
inline Interval operator*(Interval a, Interval b) { return iv::mul(a, b); }
inline Interval operator/(Interval a, Interval b) { return iv::div(a, b); }
}  // namespace attnspec
