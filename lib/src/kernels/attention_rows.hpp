// The pieces of the attention reference's bound that analyze_row (one row, attention_reference.cpp)
// and analyze_block (a block of rows through BLAS, attention_block.cpp) share, so that both
// evaluate the same formulas of proofs/kernel_tolerance.md, (B1)-(B7). Private to lib/src/kernels/.
#pragma once
#include <cmath>
#include <limits>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "attnspec/kernels/attention_reference.hpp"

namespace attnspec::kernels::detail {

// An upper bound of exp(a) - 1 for a >= 0: a + a^2 while a <= 1/2 (the series' tail
// a^2/2! + a^3/3! + ... <= (a^2 / 2) e^a <= 0.83 a^2 there), expm1 widened by 2^-50 beyond.
// Every term is >= 0, so evaluating it rounds by a few u relative only (kBoundSafety covers it).
inline double expm1_upper(double a) { return a <= 0.5 ? a + a * a : std::expm1(a) * (1 + 0x1p-50); }

// std::max(...std::max(std::max(init, x_0), x_1)..., x_{n-1}) in independent lanes (SSE2 on
// x86-64): max is exact, so the lanes give the same value (a NaN x_j is skipped either way, as
// maxpd(x, m) returns m for a NaN x; only the sign of a zero maximum may differ, which no caller
// reads: they use m through x_j - m, |m| and m + log(l), log(l) >= 0).
inline double lane_max(const double* x, long n, double init) {
    double r = init;
    long j = 0;
#ifdef __SSE2__
    __m128d m[4];
    for (__m128d& v : m) v = _mm_set1_pd(init);
    for (; j + 8 <= n; j += 8)
        for (int k = 0; k < 4; ++k) m[k] = _mm_max_pd(_mm_loadu_pd(x + j + 2 * k), m[k]);
    double lanes[8];
    for (int k = 0; k < 4; ++k) _mm_storeu_pd(lanes + 2 * k, m[k]);
    for (double v : lanes) r = r < v ? v : r;
#endif
    for (; j < n; ++j) r = r < x[j] ? x[j] : r;
    return r;
}
// lo = min(+inf, x_j...) and hi = max(-inf, x_j...) (NaN skipped: min(x, m) = x < m ? x : m),
// in lanes as lane_max; max_j |x_j| = max(|lo|, |hi|) when n > 0 and no x_j is NaN.
inline void lane_min_max(const double* x, long n, double& lo, double& hi) {
    lo = std::numeric_limits<double>::infinity(), hi = -lo;
    long j = 0;
#ifdef __SSE2__
    __m128d a[2] = {_mm_set1_pd(lo), _mm_set1_pd(lo)}, b[2] = {_mm_set1_pd(hi), _mm_set1_pd(hi)};
    for (; j + 4 <= n; j += 4)
        for (int k = 0; k < 2; ++k) {
            const __m128d v = _mm_loadu_pd(x + j + 2 * k);
            a[k] = _mm_min_pd(v, a[k]), b[k] = _mm_max_pd(v, b[k]);
        }
    double la[4], lb[4];
    for (int k = 0; k < 2; ++k) _mm_storeu_pd(la + 2 * k, a[k]), _mm_storeu_pd(lb + 2 * k, b[k]);
    for (int k = 0; k < 4; ++k) lo = la[k] < lo ? la[k] : lo, hi = hi < lb[k] ? lb[k] : hi;
#endif
    for (; j < n; ++j) lo = x[j] < lo ? x[j] : lo, hi = hi < x[j] ? x[j] : hi;
}

// t_0 + t_1 + ... + t_{n-1}, added left to right (the order analyze_row uses).
inline double sum_in_order(const double* t, long n) {
    double l = 0;
    for (long j = 0; j < n; ++j) l += t[j];
    return l;
}

inline float lane_max(const float* x, long n, float init) {
    float r = init;
    long j = 0;
#ifdef __SSE2__
    __m128 m[4];
    for (__m128& v : m) v = _mm_set1_ps(init);
    for (; j + 16 <= n; j += 16)
        for (int k = 0; k < 4; ++k) m[k] = _mm_max_ps(_mm_loadu_ps(x + j + 4 * k), m[k]);
    float lanes[16];
    for (int k = 0; k < 4; ++k) _mm_storeu_ps(lanes + 4 * k, m[k]);
    for (float v : lanes) r = r < v ? v : r;
#endif
    for (; j < n; ++j) r = r < x[j] ? x[j] : r;
    return r;
}

// (B1'): the error of a logit x_j = s q.k_j + M_j (x: the reference's, the bias included) whose
// product part s q.k_j errs by at most e, under an additive mask: M_j read rounded to the
// operand format (u_in), added in the accumulation format. `absM` null (no additive mask): e.
inline double logit_error(const RoundingModel& M, double e, const double* absM, long j, double x) {
    if (!absM) return e;
    return (1 + M.u_a) * (e + M.u_in * absM[j]) + M.u_a * std::fabs(x);
}

// Under an additive mask, whether a weight whose kernel and exact values are at most
// exp(log_upper) lies below tau_a: an underflowing weight, its error the absolute tau_a that the
// bounds count per key ((B1'), (D1)), relative error 0.
inline bool negligible_weight(const RoundingModel& M, const double* absM, double log_upper) {
    return absM && log_upper + 1 < std::log(M.tau_a);
}

// The per-row quantities of one rounding model (B1)-(B4).
struct ModelRow {
    double E = 0;      // max_j e_j: the largest logit error (B1)
    double eps_l = 0;  // relative error bound of the softmax denominator (B3)
    double k_max = 0;  // max_j kappa_j
    bool finite = true;
};

// One row's logits x_j, their absolute sums A_j = s sum_c |q_c k_jc|, the shifted exponentials
// t_j = exp(x_j - m) (n values each), m = max_j x_j, l = sum_j t_j and max_j A_j.
struct RowLogits {
    const double* x = nullptr;
    const double* A = nullptr;
    const double* t = nullptr;
    long n = 0, d = 0;
    double m = 0, l = 0, A_max = 0;  // A_max: the largest of Ap when given, else of A
    // Optional (SpecA's perturbed operands, RowInput::dq): the kernel's dot products charged on
    // Ap_j instead of A_j, and each logit's extra error dx_j ((Q1)).
    const double* Ap = nullptr;
    const double* dx = nullptr;
    // Optional (additive masks): |M_j| of each key's bias (n values); x_j then includes M_j and
    // its error gains the rounding of the sum ((B1'), "Boolean and additive masks").
    const double* absM = nullptr;
    // Optional: p_j = t_j / l as the caller computed them (the same values model_row computes
    // without them).
    const double* p = nullptr;
};

// kappa_j of (B4) for every key into `kappa` (n values; when the result is not finite they hold
// the (B2) values), with E, eps_l, k_max. `phi` bounds the relative error of the reference's p_j,
// which stand in for the exact ones. O(n), no transcendental call per key unless some exponent
// argument exceeds 1/2.
ModelRow model_row(const RoundingModel& M, const RowLogits& r, double phi, double* kappa);

// The sums over the row's visible keys that the bound needs, per output column c (dv values):
// pv = sum_j p_j |v_jc|, BK = sum_j p_j kappa_j |v_jc| (kernel, (B4)), BR the same with the
// reference's kappa, sum_abs = sum_j |v_jc|, v_max = max_j |v_jc|.
struct RowSums {
    const double *pv, *BK, *BR, *sum_abs, *v_max;
};

// out.bound, out.ref_error, out.max_abs_pv, out.lse_bound and out.denominator_error from the
// row's sums (out.o and out.lse already set; (B5)-(B7)).
void finish_row(const RoundingModel& kernel, const ModelRow& K, const ModelRow& R, double phi,
                long n, long dv, const RowSums& sums, double log_l, RowAnalysis& out);

}  // namespace attnspec::kernels::detail
