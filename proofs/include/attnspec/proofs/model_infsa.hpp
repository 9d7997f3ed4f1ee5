// model-infsa, an EXPERIMENT on a real model (issue 11): the InfSA quantities (docs/MATH.md §3) on
// a trained head's real queries and keys Q = X W_Q + 1 b_Q^T, K = X W_K + 1 b_K^T: rho(Â), min R
// of the absorbing reading, the truncation order K for 1e-6, and the Linear-InfSA fidelity cosines
// against the left and right Perron vectors of Â (the "0.985" of the InfSA summary on real
// activations). Statement: proofs/model_infsa.md. Reuses infsa/ (affinity, perron, neumann,
// fidelity). CPU only.
#pragma once
#include <vector>

#include "attnspec/attention/attention.hpp"
#include "attnspec/base/check.hpp"
#include "attnspec/proofs/run_loop.hpp"

namespace attnspec::proofs {

inline constexpr double kModelInfsaGamma = 0.95;      // the code's default discount
inline constexpr double kModelInfsaTarget = 1e-6;     // truncation error target of K_1e-6
inline constexpr double kModelInfsaFidelity = 0.985;  // the InfSA summary's cosine

// Columns of one record (instance/row, 1 x kMiCols).
enum ModelInfsaCol {
    kMiN,              // tokens
    kMiRho,            // rho(Â), Collatz-Wielandt estimate
    kMiMinR,           // min_i R_i, R = 1 - gamma Â 1
    kMiK,              // smallest K with (gamma ||Â||_2)^{K+1}/(1 - gamma ||Â||_2) <= 1e-6
    kMiCosLeft,        // cos(a, left Perron vector of Â), a the Linear-InfSA weights
    kMiCosRight,       // cos(a, right Perron vector)
    kMiRhoLo,          // enclosure of rho(Â)
    kMiRhoHi,          //
    kMiNorm2Hi,        // upper end of the ||Â||_2 enclosure (enters K)
    kMiCosKatzIn,      // cos(a, Katz-in C^T 1)
    kMiProbabilistic,  // 1 when min R >= 0 (N_ij = expected visits), else 0
    kMiCols
};

// Q and K of the head with its biases (the model's form); V is not needed.
void model_qk(const Head& h, Eigen::MatrixXd& Q, Eigen::MatrixXd& K);

// One record from Q and K (N x d_h). Cost O(N^3) (LU of I - gamma Â) plus power iterations.
// DataError as affinity() / NeumannKernel.
CheckResult model_infsa(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K);

// The table (axes layer, head, sentence; columns N, rho, min_R, K_1e-6, cos_left, cos_right,
// rho_lo, rho_hi, norm2_hi, cos_katz_in, probabilistic) with its attributes (affinity, gamma,
// bias_form, finding: the distribution of both cosines, the share >= 0.985, min R < 0 count).
ExperimentTable model_infsa_table(const std::vector<CheckResult>& results);

// Default selection: every layer, head and sentence. CheckRun::kind = "experiment".
CheckRun run_model_infsa(const RunOptions& opt);

}  // namespace attnspec::proofs
