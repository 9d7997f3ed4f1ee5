// Private to certified*.cpp: the rounding constants shared by the plain and deflated certificates.
#pragma once
#include "attnspec/base/rounding.hpp"

namespace attnspec::certify_detail {

constexpr double kU = kUnitRoundoff;
constexpr double kSafety = 1 + 1e-8;  // covers the rounding of evaluating the bounds themselves

// gamma_k = k u / (1 - k u) (Higham, Accuracy and Stability, §3.1)
inline double gamma(double k) { return k * kU / (1 - k * kU); }

}  // namespace attnspec::certify_detail
