// Matrix-free A+ = ReLU(Q K^T / d_h) in tiles (dgemm per tile, never N x N) with certified
// enclosures (proofs/infsa_fidelity.md, proofs/infsa_neumann.md).
#include "attnspec/infsa/relu_kernel.hpp"

#include <cblas.h>

#include <cmath>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/target_clones.hpp"
#include "attnspec/infsa/affinity.hpp"
#include "infsa_internal.hpp"

namespace attnspec {

using detail::gamma_n;
using detail::kUnit;

namespace {

// z[0..m) += sum_c max(S(:, c), 0) * x[c]  (S column-major m x n; axpy form, vectorises).
ATTNSPEC_CLONES_AVX2 void relu_axpy(const double* S, long m, long n, const double* x, double* z) {
    for (long c = 0; c < n; ++c) {
        const double xc = x[c];
        const double* s = S + c * m;
        for (long r = 0; r < m; ++r) z[r] += std::max(s[r], 0.0) * xc;
    }
}

// f[0..m) += sum_c max(S(:, c), 0)^2.
ATTNSPEC_CLONES_AVX2 void relu_sq(const double* S, long m, long n, double* f) {
    for (long c = 0; c < n; ++c) {
        const double* s = S + c * m;
        for (long r = 0; r < m; ++r) {
            const double v = std::max(s[r], 0.0);
            f[r] += v * v;
        }
    }
}

// Visits every T x T tile S = R_I C_J^T of the N x N score matrix (one dgemm each, never N x N):
// fn(S, m, n, r0, c0) with S column-major m x n for rows r0.. and columns c0...
template <class Fn>
void for_each_tile(const Eigen::MatrixXd& R, const Eigen::MatrixXd& C, Eigen::Index T, Fn fn) {
    const Eigen::Index N = R.rows(), d = R.cols();
    Eigen::MatrixXd S(std::min(T, N), std::min(T, N));
    for (Eigen::Index r0 = 0; r0 < N; r0 += T) {
        const Eigen::Index m = std::min(T, N - r0);
        for (Eigen::Index c0 = 0; c0 < N; c0 += T) {
            const Eigen::Index n = std::min(T, N - c0);
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, int(m), int(n), int(d), 1.0,
                        R.data() + r0, int(N), C.data() + c0, int(N), 0.0, S.data(), int(m));
            fn(S.data(), m, n, r0, c0);
        }
    }
}

}  // namespace

ReluKernelOp::ReluKernelOp(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, Eigen::Index tile)
    : Q_(Q), K_(K), tile_(tile) {
    check_qk(Q, K, "matrix-free affinity");
    if (tile <= 0)
        throw Error(ExitCode::DataError,
                    "matrix-free affinity: tile = " + std::to_string(tile) + " must be positive",
                    "tile");
    nq_ = Q.rowwise().norm();
    nk_ = K.rowwise().norm();
    // |fl(q.k) - q.k| <= gamma_d sum|q_l k_l| <= gamma_d ||q|| ||k||; the computed norms are within
    // a factor (1 - gamma_{d+1})^{-1} of the exact ones: factor 2 covers both.
    delta_ = 2 * gamma_n(double(Q.cols()) + 2);
}

void ReluKernelOp::apply(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z,
                         Eigen::VectorXd& z_lo, Eigen::VectorXd& z_hi) const {
    const Eigen::Index N = Q_.rows(), d = Q_.cols(), T = tile_;
    // left (transpose): z_j = sum_i relu(k_j . q_i) x_i: tiles S = K_J Q_I^T (rows j).
    // right:            z_i = sum_j relu(q_i . k_j) x_j: tiles S = Q_I K_J^T (rows i).
    const Eigen::MatrixXd& R = transpose ? K_ : Q_;  // rows of the output
    const Eigen::MatrixXd& C = transpose ? Q_ : K_;  // summed over
    const Eigen::VectorXd& nr = transpose ? nk_ : nq_;
    const Eigen::VectorXd& nc = transpose ? nq_ : nk_;
    z = Eigen::VectorXd::Zero(N);
    Eigen::VectorXd f = Eigen::VectorXd::Zero(frob_done_ ? 0 : N);
    for_each_tile(
        R, C, T,
        [&](const double* S, Eigen::Index m, Eigen::Index n, Eigen::Index r0, Eigen::Index c0) {
            relu_axpy(S, m, n, x.data() + c0, z.data() + r0);
            if (!frob_done_) relu_sq(S, m, n, f.data() + r0);  // first pass: ||A+||_F too
        });
    if (!frob_done_) frob_ = frobenius_from(f.sum()), frob_done_ = true;
    ++passes_;
    // exact relu(s) within delta nr_i nc_j of relu(fl s) (ReLU is 1-Lipschitz); sums of N
    // non-negative terms within gamma_{N+1}; the final scaling by 1/d_h rounds once.
    const double pad_sum = nc.dot(x) * delta_ * (1 + gamma_n(double(N) + 2));
    const double g = gamma_n(double(N) + 4);
    const double inv_d = 1.0 / double(d);
    z_hi = ((z * (1 + 2 * g)).array() + nr.array() * pad_sum).matrix() * inv_d * (1 + 2 * kUnit);
    z_lo = ((z * (1 - g)).array() - nr.array() * pad_sum).cwiseMax(0.0).matrix() * inv_d *
           (1 - 2 * kUnit);
    z *= inv_d;
}

Interval ReluKernelOp::frobenius() const {
    if (frob_done_) return frob_;
    const Eigen::Index N = Q_.rows(), T = tile_;
    Eigen::VectorXd f = Eigen::VectorXd::Zero(N);
    for_each_tile(Q_, K_, T,
                  [&](const double* S, Eigen::Index m, Eigen::Index n, Eigen::Index r0,
                      Eigen::Index) { relu_sq(S, m, n, f.data() + r0); });
    ++passes_;
    frob_ = frobenius_from(f.sum());
    frob_done_ = true;
    return frob_;
}

Interval ReluKernelOp::frobenius_from(double sum_sq) const {
    // ||relu(S) - relu(fl S)||_F <= ||delta nq nk^T||_F = delta ||nq|| ||nk||; the sum of N^2
    // squares: gamma_{N+1} per row then gamma_{N+1} across rows; sqrt and /d_h round once each.
    const double N = double(Q_.rows());
    const double g = gamma_n(2.0 * N + 4);
    const double F = std::sqrt(sum_sq);
    const double pad = delta_ * nq_.norm() * nk_.norm() * (1 + gamma_n(2.0 * N + 4));
    const double inv_d = 1.0 / double(Q_.cols());
    return {std::max(0.0, F * (1 - g) - pad) * inv_d * (1 - 4 * kUnit),
            (F * (1 + 2 * g) + pad) * inv_d * (1 + 4 * kUnit)};
}

}  // namespace attnspec
