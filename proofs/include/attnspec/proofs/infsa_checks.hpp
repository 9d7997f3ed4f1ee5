// IS (Infinite Self-Attention) checks: the Neumann kernel (LU residual bound, N >= I >= 0,
// commutation with Â, truncation error <= (gamma ||Â||_2)^{K+1}/(1 - gamma ||Â||_2)) and the
// Collatz–Wielandt Perron enclosure against an independent eigensolver. Statements:
// proofs/infsa_neumann.md, proofs/infsa_absorbing.md. CPU only.
#pragma once
#include <Eigen/Dense>
#include <vector>

#include "attnspec/base/check.hpp"
#include "attnspec/infsa/perron.hpp"
#include "attnspec/proofs/run_loop.hpp"

namespace attnspec::proofs {

// Planted errors for the tests (all zero in real runs).
struct NeumannPlant {
    double kernel_shift = 0;      // added to N(0, n-1) after the LU inverse
    double truncation_shift = 0;  // added to every N_K(0, 0)
};

// One instance. Throws DataError on bad Â / gamma (see NeumannKernel). Cost O((K_max + 4) n^3).
CheckResult check_infsa_neumann(const Eigen::MatrixXd& A_hat, double gamma,
                                const std::vector<int>& Ks = {1, 2, 4, 8, 16},
                                const NeumannPlant& plant = {});

// One instance: CW enclosure of rho(A_hat) (computed through `op`, default the dense A_hat) vs the
// spectral radius from Eigen's EigenSolver with a condition-number radius. A planted `op` that
// applies a different matrix must flip it. Cost O(n^3).
CheckResult check_infsa_perron(const Eigen::MatrixXd& A_hat, const NonnegOperator* op = nullptr);

CheckRun run_infsa_neumann(const RunOptions& opt);
CheckRun run_infsa_perron(const RunOptions& opt);

}  // namespace attnspec::proofs
