// Neumann kernel N = (I - gamma Â)^{-1} by LU (LAPACKE dgetrf/dgetrs), truncated series and
// bounds, invariants (proofs/infsa_neumann.md).
#include "attnspec/infsa/neumann.hpp"

#include <lapacke.h>

#include <cmath>
#include <limits>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/memory.hpp"
#include "infsa_internal.hpp"

namespace attnspec {

using detail::gamma_n;
using detail::kUnit;

using detail::check_gamma;
using detail::num;

NeumannKernel::NeumannKernel(const Eigen::MatrixXd& A_hat, double gamma)
    : A_(A_hat), n_(A_hat.rows()), gamma_(gamma) {
    check_gamma(gamma);
    DenseNonnegOp op(A_hat);  // square, finite, non-negative (DataError otherwise)
    check_allocation(8.0 * double(n_) * double(n_), memory_limit_bytes(),
                     "Neumann LU (" + std::to_string(n_) + "^2)", "max_bytes");
    // gamma rho(Â) < 1 must be certified: ||Â||_F (rounded up) first, CW otherwise.
    const double f_hi = A_hat.norm() * (1 + gamma_n(double(A_hat.size()) + 2));
    rho_ = {0, f_hi};
    if (gamma * f_hi >= 1) {
        PerronOptions o;
        o.rel_width = 1e-9;
        o.max_iter = 1000;
        rho_ = perron(op, o).rho_enc;
        rho_.hi = std::min(rho_.hi, f_hi);
        if (gamma * rho_.lo >= 1)
            throw Error(ExitCode::DataError,
                        "gamma * rho(A_hat) >= 1 (rho in [" + num(rho_.lo) + ", " + num(rho_.hi) +
                            "], gamma = " + num(gamma) + "): the Neumann series diverges",
                        "gamma");
        if (gamma * rho_.hi >= 1)
            throw Error(ExitCode::DataError,
                        "cannot certify gamma * rho(A_hat) < 1 (rho in [" + num(rho_.lo) + ", " +
                            num(rho_.hi) + "]): refusing an (almost) singular I - gamma A_hat",
                        "gamma");
    }
    lu_ = -gamma * A_hat;
    lu_.diagonal().array() += 1.0;
    ipiv_.resize(size_t(n_));
    const int info =
        LAPACKE_dgetrf(LAPACK_COL_MAJOR, int(n_), int(n_), lu_.data(), int(n_), ipiv_.data());
    if (info != 0)
        fail_data("I - gamma A_hat is singular (dgetrf info " + std::to_string(info) + ")");
}

Eigen::MatrixXd NeumannKernel::solve(const Eigen::MatrixXd& B) const {
    if (B.rows() != n_)
        fail_data("Neumann solve: right-hand side has " + std::to_string(B.rows()) +
                  " rows, expected " + std::to_string(n_));
    Eigen::MatrixXd X = B;
    if (X.cols() == 0) return X;
    LAPACKE_dgetrs(LAPACK_COL_MAJOR, 'N', int(n_), int(X.cols()), lu_.data(), int(n_), ipiv_.data(),
                   X.data(), int(n_));
    return X;
}

Eigen::MatrixXd NeumannKernel::solve_transpose(const Eigen::MatrixXd& B) const {
    if (B.rows() != n_) fail_data("Neumann solve: right-hand side has the wrong number of rows");
    Eigen::MatrixXd X = B;
    if (X.cols() == 0) return X;
    LAPACKE_dgetrs(LAPACK_COL_MAJOR, 'T', int(n_), int(X.cols()), lu_.data(), int(n_), ipiv_.data(),
                   X.data(), int(n_));
    return X;
}

Eigen::MatrixXd NeumannKernel::kernel() const { return solve(Eigen::MatrixXd::Identity(n_, n_)); }

Eigen::MatrixXd NeumannKernel::closure_times(const Eigen::MatrixXd& V) const {
    if (V.rows() != n_) fail_data("closure: V has the wrong number of rows");
    return solve(
        detail::gemm(A_, false, V, false, gamma_));  // C V = N (gamma Â V), no cancellation
}

Eigen::MatrixXd NeumannKernel::closure_transpose_times(const Eigen::MatrixXd& V) const {
    if (V.rows() != n_) fail_data("closure: V has the wrong number of rows");
    return solve_transpose(detail::gemm(A_, true, V, false, gamma_));  // C^T = N^T gamma Â^T
}

double NeumannKernel::lu_growth() const {
    Eigen::MatrixXd L = lu_.triangularView<Eigen::StrictlyLower>();
    L.diagonal().setOnes();
    const Eigen::MatrixXd U = lu_.triangularView<Eigen::Upper>();
    const Eigen::MatrixXd LU = detail::gemm(L.cwiseAbs(), false, U.cwiseAbs(), false);
    Eigen::MatrixXd M = -gamma_ * A_;
    M.diagonal().array() += 1.0;
    return LU.norm() / M.norm();
}

void certify_convergent(const Eigen::MatrixXd& A_hat, double gamma) {
    check_gamma(gamma);
    DenseNonnegOp op(A_hat);
    const double f_hi = A_hat.norm() * (1 + gamma_n(double(A_hat.size()) + 2));
    if (gamma * f_hi < 1) return;
    PerronOptions o;
    o.rel_width = 1e-9;
    o.max_iter = 1000;
    const Interval r = perron(op, o).rho_enc;
    if (gamma * std::min(r.hi, f_hi) >= 1)
        throw Error(ExitCode::DataError,
                    "gamma * rho(A_hat) >= 1 (rho in [" + num(r.lo) + ", " + num(r.hi) +
                        "]) or not certified below 1/gamma: refused",
                    "gamma");
}

Eigen::MatrixXd closure_times_mixed(const Eigen::MatrixXd& A_hat, double gamma,
                                    const Eigen::MatrixXd& V, int* iterations) {
    certify_convergent(A_hat, gamma);
    const Eigen::Index n = A_hat.rows();
    check_allocation(8.0 * double(n) * (double(n) + 3.0 * double(V.cols())), memory_limit_bytes(),
                     "mixed-precision closure (" + std::to_string(n) + "^2)", "max_bytes");
    if (V.rows() != n) fail_data("closure: V has the wrong number of rows");
    if (V.cols() == 0) return V;
    Eigen::MatrixXd M = -gamma * A_hat;
    M.diagonal().array() += 1.0;
    const Eigen::MatrixXd B = detail::gemm(A_hat, false, V, false, gamma);
    Eigen::MatrixXd X(n, V.cols());
    std::vector<int> ipiv(static_cast<size_t>(n));
    int iter = 0;
    const int info =
        LAPACKE_dsgesv(LAPACK_COL_MAJOR, int(n), int(V.cols()), M.data(), int(n), ipiv.data(),
                       const_cast<double*>(B.data()), int(n), X.data(), int(n), &iter);
    if (info != 0)
        fail_data("I - gamma A_hat is singular (dsgesv info " + std::to_string(info) + ")");
    if (iterations) *iterations = iter;
    return X;
}

Eigen::MatrixXd neumann_truncated(const Eigen::MatrixXd& A_hat, double gamma, int K) {
    check_gamma(gamma);
    if (K < 0)
        throw Error(ExitCode::DataError,
                    "truncation order K = " + std::to_string(K) + " must be >= 0", "K");
    const Eigen::Index n = A_hat.rows();
    Eigen::MatrixXd X = Eigen::MatrixXd::Identity(n, n), T;
    for (int k = 0; k < K; ++k) {  // Horner: X <- I + gamma Â X
        detail::gemm(A_hat, false, X, false, T, gamma);
        T.diagonal().array() += 1.0;
        X.swap(T);
    }
    return X;
}

double truncation_bound(double gamma, double norm2_hi, int K) {
    const double q = gamma * norm2_hi;
    if (!(q < 1)) return std::numeric_limits<double>::infinity();
    // pow is faithful only for normal results: below DBL_MIN use 2 DBL_MIN, an upper bound of
    // q^{K+1} whenever the computed power is subnormal or zero.
    const double p = std::max(std::pow(q, K + 1), 2 * std::numeric_limits<double>::min());
    return p / (1 - q) * (1 + 4 * (K + 4) * kUnit);  // rounded outward
}

void check_truncation_target(double target) {
    if (!(target >= kMinTruncationTarget) || !std::isfinite(target))
        throw Error(ExitCode::DataError,
                    "truncation target = " + num(target) +
                        " must be finite and >= " + num(kMinTruncationTarget) +
                        " (smaller targets underflow: the bound cannot be certified)",
                    "target");
}

int truncation_order(double gamma, double norm2_hi, double target) {
    check_truncation_target(target);
    const double q = gamma * norm2_hi;
    if (!(q < 1)) return -1;
    if (q == 0) return 0;
    // Least real K with q^{K+1} / (1 - q) <= target, in floating point (log1p keeps 1 - q exact
    // in the log near q = 1; nothing is formed that can underflow or overflow an int).
    const double K_real = (std::log(target) + std::log1p(-q)) / std::log(q) - 1;
    if (!(K_real <= double(kMaxTruncationOrder)))
        throw Error(ExitCode::DataError,
                    "truncation target = " + num(target) + " needs order K ~ " + num(K_real) +
                        " (gamma ||A_hat||_2 <= " + num(q) + "), above the limit K <= " +
                        std::to_string(kMaxTruncationOrder) + ": raise the target or lower gamma",
                    "target");
    // The estimate is within a few orders of the answer (rounding of the logs and the outward
    // factor of truncation_bound); the search is bounded.
    int K = std::max(0, int(std::floor(K_real)) - 2);
    for (int steps = 0; truncation_bound(gamma, norm2_hi, K) > target; ++K, ++steps)
        if (steps > 64 || K >= kMaxTruncationOrder)
            throw Error(ExitCode::DataError,
                        "truncation target = " + num(target) +
                            " cannot be certified by the bound at any order K <= " +
                            std::to_string(K) + " (gamma ||A_hat||_2 <= " + num(q) + ")",
                        "target");
    return K;
}

NeumannInvariants neumann_invariants(const NeumannKernel& nk, const Eigen::MatrixXd& A_hat,
                                     const Eigen::MatrixXd& N) {
    const Eigen::Index n = A_hat.rows();
    if (N.rows() != n || N.cols() != n) fail_data("neumann_invariants: N has the wrong shape");
    const double gamma = nk.gamma();
    NeumannInvariants v;
    Eigen::MatrixXd M = -gamma * A_hat;
    M.diagonal().array() += 1.0;
    Eigen::MatrixXd R = detail::gemm(M, false, N, false);
    R.diagonal().array() -= 1.0;
    v.residual = R.norm();
    v.kappa_F = M.norm() * N.norm();
    v.lu_growth = nk.lu_growth();
    // Each column solves (M + dM_j) x_j = e_j with |dM_j| <= gamma_{3n} |L||U| (Higham Thm 9.4),
    // and evaluating M N - I adds gamma_{n+1} |M||N|; Frobenius norms over columns.
    v.residual_bound = (gamma_n(3.0 * n) * v.lu_growth + gamma_n(n + 1.0)) * v.kappa_F *
                       (1 + gamma_n(2.0 * n * n));
    const Eigen::MatrixXd C =
        detail::gemm(A_hat, false, N, false) - detail::gemm(N, false, A_hat, false);
    v.commutator = C.norm();
    // |N_computed - N| <= ||N||_2 ||R|| <= ||N_c||_F ||R||_F / (1 - ||R||_F).
    v.entry_tol = v.residual < 0.5 ? N.norm() * v.residual / (1 - v.residual) * (1 + 4 * kUnit)
                                   : std::numeric_limits<double>::infinity();
    v.min_entry = N.minCoeff();
    v.min_diag_minus_1 = (N.diagonal().array() - 1.0).minCoeff();
    v.min_offdiag = std::numeric_limits<double>::infinity();
    for (Eigen::Index j = 0; j < n; ++j)
        for (Eigen::Index i = 0; i < n; ++i)
            if (i != j) v.min_offdiag = std::min(v.min_offdiag, N(i, j));
    if (n == 1) v.min_offdiag = 0;
    return v;
}

}  // namespace attnspec
