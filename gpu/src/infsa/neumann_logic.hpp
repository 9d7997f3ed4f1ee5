// Per-element logic of the Neumann twin (neumann_cuda.cu), run by the CPU suite too
// (tests/cpu/infsa/test_neumann_logic.cpp): forming M = I - gamma Â, the residual
// B - M X from gamma Â X, the normwise backward error, and the heads a batch covers.
#pragma once
#include <cmath>

#include "attnspec/gpu/base/hd.hpp"

namespace attnspec::gpu::neumann_logic {

// M_ij = [i == j] - gamma a_ij. `dropped_diag` (>= 0 only under the planted dropped-term fault)
// is the one diagonal index whose identity term is forgotten; -1 normally.
ATTNSPEC_HD double identity_minus_gamma(double a, double gamma, long i, long j, long dropped_diag) {
    return (i == j && i != dropped_diag ? 1.0 : 0.0) - gamma * a;
}

// Element t of M (n x n, column-major) from Â.
ATTNSPEC_HD void form_m(const double* A, double* M, double gamma, long n, long t,
                        long dropped_diag) {
    M[t] = identity_minus_gamma(A[t], gamma, t % n, t / n, dropped_diag);
}

// (B - M X)_t with M X = X - gamma Â X: `gax` is (gamma Â X)_t.
ATTNSPEC_HD double residual_entry(double b, double x, double gax) { return b - (x - gax); }

// Normwise backward error ||B - M X|| / (||M|| ||X|| + ||B||) (Rigal-Gaches, Higham Thm 7.1);
// 0 when the denominator is 0 (X = B = 0 is exact).
ATTNSPEC_HD double backward_error(double norm_r, double norm_m, double norm_x, double norm_b) {
    const double den = norm_m * norm_x + norm_b;
    return den > 0 ? norm_r / den : 0.0;
}

// How many of `heads` a batch solves: all, or one fewer under the planted off-by-one-tile fault.
ATTNSPEC_HD long heads_processed(long heads, bool off_by_one) {
    return off_by_one && heads > 0 ? heads - 1 : heads;
}

// The diagonal index the planted dropped-term fault forgets (the middle one); -1 without it.
ATTNSPEC_HD long dropped_diagonal(long n, bool dropped_term) { return dropped_term ? n / 2 : -1; }

}  // namespace attnspec::gpu::neumann_logic
