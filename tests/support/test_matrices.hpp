// Matrices with known structure for tests (exact in double).
#pragma once
#include <Eigen/Dense>

namespace attnspec::test {

// Sylvester's Hadamard matrix of order 2^k >= `order` (entries +-1, orthogonal columns of norm
// sqrt(order)).
inline Eigen::MatrixXd hadamard(int order) {
    Eigen::MatrixXd H = Eigen::MatrixXd::Ones(1, 1);
    while (H.rows() < order) {
        const Eigen::Index m = H.rows();
        Eigen::MatrixXd N(2 * m, 2 * m);
        N << H, H, H, -H;
        H = N;
    }
    return H;
}

}  // namespace attnspec::test
