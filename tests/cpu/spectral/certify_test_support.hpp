// Shared by the certified sigma_min tests (test_certified*.cpp): the long-double reference, the
// smallest left singular vector, and the exactly singular integer rows of the planted violations.
#pragma once
#include <Eigen/Dense>
#include <random>

namespace attnspec::test {

// sigma_min of the stored double matrix, in long double (u = 2^-64): the reference.
inline long double reference_sigma_min(const Eigen::MatrixXd& A) {
    using MatL = Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>;
    const MatL Al = A.cast<long double>();
    Eigen::JacobiSVD<MatL> svd(Al);
    return svd.singularValues().minCoeff();
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

}  // namespace attnspec::test
