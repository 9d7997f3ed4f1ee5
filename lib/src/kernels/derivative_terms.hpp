// The terms of the derivatives' bounds that reference_vjp (derivative_vjp.cpp, blocks of rows)
// and reference_jvp (derivative_reference.cpp, row by row) share (proofs/kernel_tolerance.md,
// (D1)-(D9)). Private to lib/src/kernels/.
#pragma once
#include <cmath>
#include <vector>

#include "attnspec/base/rounding.hpp"
#include "attnspec/kernels/attention_problem.hpp"
#include "attnspec/kernels/derivative_reference.hpp"

namespace attnspec::kernels::detail::terms {

// The units of one rounding model as (D1)-(D9) use them.
struct Units {
    double u_a = 0, u_in = 0, u_p = 0, u_out = 0, c_exp = 0;
    double tau_a = 0, tau_out = 0;
    double nu = 0;     // absolute error of one weight p_j from underflow (D1)
    double tau_s = 0;  // absolute error of one product term from underflow (D4)
    double gamma(double n) const { return gamma_n(n, u_a); }
};

inline Units units(const RoundingModel& M) {
    Units U;
    U.u_a = M.u_a, U.u_in = M.u_in, U.u_p = M.u_p, U.u_out = M.u_out, U.c_exp = M.c_exp;
    U.tau_a = M.tau_a, U.tau_out = M.tau_out;
    U.nu = 2 * (M.tau_p + 4 * M.tau_a);
    U.tau_s = M.tau_p + 4 * M.tau_a;
    return U;
}

// The per-key quantities of one query row under one model.
struct KeyTerms {
    std::vector<double> p, kappa;  // weights (widened for the kernel) and their relative errors
    std::vector<double> y, err_y;  // |y_j| (dP_j or ds_j, widened) and the bound on its error
    std::vector<double> a, eta;    // |a_j| = |y_j - c| (widened) and the bound on dS_j's error
};

// (D3)/(D7): the error of sum_j p^_j y^_j (any order, n + 1 roundings).
inline double weighted_sum_error(const Units& U, const KeyTerms& T, long n) {
    double s = 0, s_abs = 0;
    for (long j = 0; j < n; ++j) {
        s += T.p[j] * T.kappa[j] * T.y[j] + (T.p[j] * (1 + T.kappa[j]) + U.nu) * T.err_y[j] +
             U.nu * T.y[j];
        s_abs += T.p[j] * T.y[j];
    }
    const double g = U.gamma(static_cast<double>(n + 1));
    return s * (1 + g) + g * s_abs + static_cast<double>(n + 1) * U.tau_a;
}

// (D4)/(D8): eta_j, the error of p^_j (y^_j - c^) with |c^ - c| <= err_c, `ops` roundings in
// the accumulation format and one in P's storage format.
inline void product_errors(const Units& U, KeyTerms& T, long n, double err_c, int ops) {
    const double g = std::pow(1 + U.u_a, ops) * (1 + U.u_p) - 1;
    T.eta.resize(static_cast<size_t>(n));
    for (long j = 0; j < n; ++j) {
        const double e = T.err_y[j] + err_c;
        T.eta[j] = (T.p[j] * T.kappa[j] * T.a[j] + (T.p[j] * (1 + T.kappa[j]) + U.nu) * e +
                    U.nu * T.a[j]) *
                       (1 + g) +
                   g * T.p[j] * T.a[j] + U.tau_s;
    }
}

// Output rounding and the reference's error: the bound of one element from the kernel's
// pre-rounding bound `B` and the reference's `R` (both before kBoundSafety).
inline void finish_element(const Units& U, double B, double R, double value, double& bound,
                           double& ref_error) {
    ref_error = R * kBoundSafety;
    bound = ((1 + U.u_out) * B + U.u_out * (std::fabs(value) + R) + U.tau_out + R) * kBoundSafety;
}

inline ReferenceTensor tensor_like(const Array& a) {
    ReferenceTensor t;
    t.value.shape = a.shape;
    const size_t n = a.values.size();
    t.value.values.assign(n, 0.0);
    t.bound.assign(n, 0.0), t.ref_error.assign(n, 0.0), t.first.assign(n, 0.0);
    return t;
}

// The weight error of a kernel rounding once per intermediate (the forward's floor weight).
inline double first_weight(const Units& U, double max_abs_logit) {
    return 2 * U.u_a * max_abs_logit + 4 * U.u_a + U.u_p;
}

}  // namespace attnspec::kernels::detail::terms
