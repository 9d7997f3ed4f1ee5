// The InfSA Neumann kernel N = (I - gamma Â)^{-1} (proofs/infsa_neumann.md): one LU of
// M = I - gamma Â (LAPACKE dgetrf/dgetrs through OpenBLAS; Â is not symmetric), products N B and
// the closure C V = N gamma Â V by solves, a mixed-precision closure (dsgesv), the truncated series
// N_K with its a-priori bound, and the kernel's invariants with the LU residual bound. CPU only.
#pragma once
#include <Eigen/Dense>
#include <vector>

#include "attnspec/infsa/perron.hpp"

namespace attnspec {

// N = (I - gamma Â)^{-1} through one LU of M = I - gamma Â (dgetrf, O(N^3)). Products N B, N^T B
// and C V = N (gamma Â V) are solves (O(N^2) per column), never forming N. Throws DataError when
// gamma is not in (0, 1) (parameter "gamma"), Â is not square/finite/non-negative, or
// gamma * rho(Â) >= 1 (certified by CW; also when the enclosure cannot exclude it). Keeps a
// reference to A_hat: it must outlive the kernel.
class NeumannKernel {
  public:
    NeumannKernel(const Eigen::MatrixXd& A_hat, double gamma);
    Eigen::Index size() const { return n_; }
    double gamma() const { return gamma_; }
    const Interval& rho() const { return rho_; }
    Eigen::MatrixXd solve(const Eigen::MatrixXd& B) const;                    // N B
    Eigen::MatrixXd solve_transpose(const Eigen::MatrixXd& B) const;          // N^T B
    Eigen::MatrixXd kernel() const;                                           // N (dense, O(N^3))
    Eigen::MatrixXd closure_times(const Eigen::MatrixXd& V) const;            // C V = N gamma Â V
    Eigen::MatrixXd closure_transpose_times(const Eigen::MatrixXd& V) const;  // C^T V
    // ||(|L||U|)||_F / ||M||_F of the computed LU (enters the residual bound). O(N^3).
    double lu_growth() const;

  private:
    const Eigen::MatrixXd& A_;
    Eigen::Index n_;
    double gamma_;
    Interval rho_;
    Eigen::MatrixXd lu_;
    std::vector<int> ipiv_;
};

// The validation of closure_times_mixed and the CUDA twins (gpu/infsa/neumann_cuda), without
// the LU: gamma in (0, 1), Â square, finite and >= 0, gamma rho(Â) < 1 certified (||Â||_F, else
// Collatz-Wielandt). O(N^2) per Perron iteration; DataError like NeumannKernel.
void certify_convergent(const Eigen::MatrixXd& A_hat, double gamma);

// C V = N (gamma Â V) without keeping a factorisation: LAPACK dsgesv (float LU of I - gamma Â,
// iterative refinement in double to double backward error; falls back to a double LU when
// refinement does not converge). About half the cost of the double LU (the N = 4096 target).
// `iterations` receives dsgesv's iter (> 0 refinement steps, < 0 fell back). Same failures as
// NeumannKernel (gamma, shape, sign; gamma rho >= 1 certified refused).
Eigen::MatrixXd closure_times_mixed(const Eigen::MatrixXd& A_hat, double gamma,
                                    const Eigen::MatrixXd& V, int* iterations = nullptr);

// N_K = sum_{k<=K} gamma^k Â^k by Horner (K dense products, O(K N^3)). DataError unless K >= 0
// (parameter "K") and gamma in (0, 1).
Eigen::MatrixXd neumann_truncated(const Eigen::MatrixXd& A_hat, double gamma, int K);
// (gamma s)^{K+1} / (1 - gamma s), s an upper bound of ||Â||_2; +inf when gamma s >= 1. O(1).
double truncation_bound(double gamma, double norm2_hi, int K);
// The truncation orders truncation_order() answers with: K <= kMaxTruncationOrder (1e7; one
// Horner step is an N^3 product, so larger orders are never evaluated), and targets >=
// kMinTruncationTarget (1e-300; below, q^{K+1} reaches the subnormal range where the bound
// cannot be rounded outward).
inline constexpr int kMaxTruncationOrder = 10000000;
inline constexpr double kMinTruncationTarget = 1e-300;
// DataError (parameter "target") unless kMinTruncationTarget <= target < inf. O(1).
void check_truncation_target(double target);
// Smallest K with truncation_bound <= target; -1 when gamma s >= 1. Computed in floating point
// from log(target (1 - q)) / log(q), q = gamma s, then a bounded search (O(1), at most 64 bound
// evaluations). DataError (parameter "target") when the target is out of range
// (check_truncation_target) or needs K > kMaxTruncationOrder (q too close to 1).
int truncation_order(double gamma, double norm2_hi, double target);

struct NeumannInvariants {
    double min_entry = 0;         // min N_ij (claim >= 0)
    double min_diag_minus_1 = 0;  // min N_ii - 1 (claim >= 0, N >= I)
    double min_offdiag = 0;       // min_{i != j} N_ij
    double commutator = 0;        // ||Â N - N Â||_F
    double residual = 0;          // ||(I - gamma Â) N - I||_F
    double residual_bound = 0;    // (g_3n growth + g_n+1) ||M||_F ||N||_F (infsa_neumann.md)
    double kappa_F = 0;           // ||M||_F ||N||_F
    double lu_growth = 0;         // || |L||U| ||_F / ||M||_F
    double entry_tol = 0;         // rounding allowance on the sign tests: n u ||N||_max
};
// N: a computed kernel (normally nk.kernel()); a planted error in N flips the residual test.
// Cost O(N^3) (four products). DataError when N's shape differs from Â's.
NeumannInvariants neumann_invariants(const NeumannKernel& nk, const Eigen::MatrixXd& A_hat,
                                     const Eigen::MatrixXd& N);

}  // namespace attnspec
