// Private helpers shared by lib/src/infsa/*.cpp and linear_infsa*.cpp: BLAS products (OpenBLAS
// dgemm through CBLAS; Eigen's own GEMM is built without AVX here) and rounding constants.
#pragma once
#include <Eigen/Dense>
#include <limits>

namespace attnspec::detail {

constexpr double kUnit = std::numeric_limits<double>::epsilon() / 2;  // unit roundoff u

// gamma_n = n u / (1 - n u) (Higham): relative error bound of an n-term sum of non-negative terms.
inline double gamma_n(double n) { return n * kUnit / (1 - n * kUnit); }

// C = alpha op(A) op(B) (+ beta C) through cblas_dgemm. C is resized when beta == 0.
void gemm(const Eigen::MatrixXd& A, bool ta, const Eigen::MatrixXd& B, bool tb,
          Eigen::MatrixXd& C, double alpha = 1.0, double beta = 0.0);
inline Eigen::MatrixXd gemm(const Eigen::MatrixXd& A, bool ta, const Eigen::MatrixXd& B,
                            bool tb, double alpha = 1.0) {
    Eigen::MatrixXd C;
    gemm(A, ta, B, tb, C, alpha, 0.0);
    return C;
}

}  // namespace attnspec::detail
