// Shared by the certified sigma_min tests (test_certified*.cpp): the long-double reference, the
// smallest left singular vector, and the exactly singular integer rows of the planted violations
// (hadamard() is tests/support/test_matrices.hpp).
#pragma once
#include <Eigen/Dense>
#include <cmath>
#include <random>
#include <vector>

#include "test_matrices.hpp"

namespace attnspec::test {

// sigma_min of the stored double matrix, in long double (u = 2^-64): the reference.
inline long double reference_sigma_min(const Eigen::MatrixXd& A) {
    using MatL = Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>;
    const MatL Al = A.cast<long double>();
    Eigen::JacobiSVD<MatL> svd(Al);
    return svd.singularValues().minCoeff();
}

// sigma_min of the stored double matrix (rows <= cols) in binary128 (u = 2^-113): one-sided
// (Hestenes) Jacobi on the rows until every pair is orthogonal to 1e-30; relative accuracy ~ u
// kappa, ~1e-26 at kappa 1e8, where the long-double reference (~1e-11 there) cannot check
// Temple's enclosures.
inline __float128 reference_sigma_min_quad(const Eigen::MatrixXd& A) {
    using Q = __float128;
    const auto qsqrt = [](Q x) {
        if (!(x > 0)) return Q(0);
        Q y = std::sqrt(static_cast<double>(x));
        for (int k = 0; k < 4; ++k) y = (y + x / y) / 2;  // Newton from the double root
        return y;
    };
    const Eigen::Index n = A.rows(), m = A.cols();
    std::vector<std::vector<Q>> r(static_cast<std::size_t>(n),
                                  std::vector<Q>(static_cast<std::size_t>(m)));
    for (Eigen::Index i = 0; i < n; ++i)
        for (Eigen::Index k = 0; k < m; ++k) r[i][k] = A(i, k);
    for (int sweep = 0; sweep < 60; ++sweep) {
        bool rotated = false;
        for (Eigen::Index i = 0; i < n; ++i)
            for (Eigen::Index j = i + 1; j < n; ++j) {
                Q a = 0, b = 0, g = 0;
                for (Eigen::Index k = 0; k < m; ++k)
                    a += r[i][k] * r[i][k], b += r[j][k] * r[j][k], g += r[i][k] * r[j][k];
                if (!(g * g > Q(1e-60) * a * b)) continue;
                rotated = true;
                const Q zeta = (b - a) / (2 * g);
                const Q t =
                    (zeta >= 0 ? 1 : -1) / ((zeta >= 0 ? zeta : -zeta) + qsqrt(1 + zeta * zeta));
                const Q c = 1 / qsqrt(1 + t * t), s = c * t;
                for (Eigen::Index k = 0; k < m; ++k) {
                    const Q x = r[i][k], y = r[j][k];
                    r[i][k] = c * x - s * y, r[j][k] = s * x + c * y;
                }
            }
        if (!rotated) break;
    }
    Q best = -1;
    for (Eigen::Index i = 0; i < n; ++i) {
        Q sq = 0;
        for (Eigen::Index k = 0; k < m; ++k) sq += r[i][k] * r[i][k];
        const Q sv = qsqrt(sq);
        if (best < 0 || sv < best) best = sv;
    }
    return best;
}

// The left singular vector of sigma_min (double JacobiSVD): the estimate the certificates start
// from.
inline Eigen::VectorXd left_vector_min(const Eigen::MatrixXd& A) {
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(A, Eigen::ComputeThinU);
    return svd.matrixU().col(A.rows() - 1);
}

// J = [B 0] with B integer n x (n - 1), entries in [-3, 3] from gen: J J^T is exact in double and
// exactly singular (lambda_min = 0).
template <class Gen>
Eigen::MatrixXd singular_integer_rows(Gen& gen, int n) {
    std::uniform_int_distribution<int> dist(-3, 3);
    Eigen::MatrixXd J = Eigen::MatrixXd::Zero(n, 2 * n);
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < n - 1; ++k) J(i, k) = dist(gen);
    return J;
}

// sigma_k = 2^-k, k < n: exact, lambda_{k+1} = 4 lambda_k.
inline Eigen::VectorXd halving_spectrum(int n) {
    Eigen::VectorXd s(n);
    for (int k = 0; k < n; ++k) s[k] = std::ldexp(1.0, -k);
    return s;
}

// J = U diag(sigma) V^T (16 x 64) with U = D1 H16 / 4 and V^T = (H64 / 8) rows 0..15 with signs
// D2, exactly orthogonal in double, and sigma_k = (16 + m_k) 2^-(e_k + 4) with m_k in [0, 16)
// (at most 5 significant bits): every entry (1/32) sum_k +-sigma_k is exact in double, so J's
// singular values are exactly `sigma` and lambda_min(J J^T) = min sigma^2 exactly.
// U_out (optional) receives U: its column k is the left singular vector of sigma_k, exactly.
template <class Gen>
Eigen::MatrixXd exact_spectrum_rows(Gen& gen, const Eigen::VectorXd& sigma,
                                    Eigen::MatrixXd* U_out = nullptr) {
    std::uniform_int_distribution<int> sign(0, 1);
    Eigen::MatrixXd U = hadamard(16) / 4, Vt = hadamard(64).topRows(16) / 8;
    for (int i = 0; i < 16; ++i)
        if (sign(gen)) U.row(i) *= -1;
    for (int j = 0; j < 64; ++j)
        if (sign(gen)) Vt.col(j) *= -1;
    if (U_out) *U_out = U;
    return U * sigma.asDiagonal() * Vt;
}

}  // namespace attnspec::test
