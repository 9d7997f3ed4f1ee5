// Centralities of the InfSA closure (proofs/infsa_absorbing.md): Katz-out C 1 and Katz-in C^T 1,
// expected steps N 1, the leak R = 1 - gamma Â 1 (the absorbing-chain reading needs min R >= 0)
// and the left/right Perron vectors of Â. Solves with a NeumannKernel's LU plus CW power
// iterations (infsa/perron.hpp). CPU only.
#pragma once
#include <Eigen/Dense>

#include "attnspec/infsa/neumann.hpp"
#include "attnspec/infsa/perron.hpp"

namespace attnspec {

struct Centralities {
    Eigen::VectorXd katz_out;        // C 1 (row sums of the closure)
    Eigen::VectorXd katz_in;         // C^T 1 (column sums)
    Eigen::VectorXd leak;            // R = 1 - gamma Â 1
    Eigen::VectorXd expected_steps;  // N 1
    double min_leak = 0;
    bool probabilistic = false;  // min R >= 0: N_ij = expected visits (absorbing chain)
    PerronResult left, right;    // of Â
};
// Cost: O(N^2) given the LU, plus two Perron iterations. `nk` must be the kernel of `A_hat`;
// DataError as perron() on a bad Â.
Centralities centralities(const Eigen::MatrixXd& A_hat, const NeumannKernel& nk);

}  // namespace attnspec
