// Katz in/out, expected steps, the leak R = 1 - gamma Â 1 and the Perron vectors of Â
// (proofs/infsa_absorbing.md).
#include "attnspec/infsa/centrality.hpp"

namespace attnspec {

Centralities centralities(const Eigen::MatrixXd& A_hat, const NeumannKernel& nk) {
    const Eigen::Index n = A_hat.rows();
    const Eigen::VectorXd one = Eigen::VectorXd::Ones(n);
    Centralities c;
    c.katz_out = nk.closure_times(one);
    c.katz_in = nk.closure_transpose_times(one);
    c.expected_steps = nk.solve(one);
    c.leak = one - nk.gamma() * (A_hat * one);
    c.min_leak = c.leak.minCoeff();
    c.probabilistic = c.min_leak >= 0;
    PerronOptions o;
    c.left = perron(A_hat, o);
    o.left = false;
    c.right = perron(A_hat, o);
    return c;
}

}  // namespace attnspec
