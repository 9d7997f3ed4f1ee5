// The whole Neumann-kernel analysis of one Â (what `attnspec neumann` reports): the kernel
// N = (I - gamma Â)^{-1} by LU, its invariants, the certified norms of Â, the truncation table
// ||N - N_K||_2 (SVD, spectral/svd.hpp) against its bound, the K reaching a target, centralities
// and, given V, the closure C V. Composes infsa/neumann, perron and centrality. CPU only.
#pragma once
#include <Eigen/Dense>
#include <vector>

#include "attnspec/infsa/centrality.hpp"
#include "attnspec/infsa/neumann.hpp"
#include "attnspec/infsa/perron.hpp"

namespace attnspec {

struct NeumannAnalysisOptions {
    double gamma = 0.95;                          // in (0, 1), gamma rho(Â) < 1 certified
    std::vector<int> orders{1, 2, 4, 8, 16, 32};  // truncation orders K of the table
    double target = 1e-6;                         // truncation error target (> 0)
};

struct TruncationRow {
    int K = 0;
    double bound = 0;  // (gamma ||Â||_2)^{K+1} / (1 - gamma ||Â||_2), upper ||Â||_2
    double error = 0;  // ||N - N_K||_2 (largest singular value)
    bool holds() const { return error <= bound; }
};

struct NeumannAnalysis {
    Eigen::Index n = 0;  // N, the size of Â
    double gamma = 0;
    AffinityNorms norms;  // ||Â||_F, ||Â||_2 enclosure, left Perron pair
    NeumannInvariants invariants;
    Centralities centralities;
    std::vector<TruncationRow> truncation;  // one row per order, in the given order
    double target = 0;
    int K_for_target = -1;            // -1: gamma ||Â||_2 >= 1
    Eigen::MatrixXd closure_times_V;  // C V; empty when no V was given
};

// Checks the options alone (what analyze_neumann checks first), so a caller can refuse them
// before building Â. O(orders). Throws DataError naming "gamma", "target" or "K".
void check_neumann_options(const NeumannAnalysisOptions& opt);

// Upper estimate of analyze_neumann's peak memory in bytes for Â of size n (12 n x n doubles),
// plus the Q, K (n x d_h) it is built from and V (n x v_cols); d_h = 0 when Â is given. In double
// so that sizes beyond any integer type are estimated too. O(1).
double neumann_memory_bytes(double n, double d_h, double v_cols);
// Operation count of analyze_neumann (flops, not a measurement): LU 2/3 n^3, kernel 2 n^3,
// invariants 8 n^3, the truncated series 2 n^3 per order step (max order) and one SVD of about
// 22 n^3 per order. O(orders).
double neumann_flops(double n, const std::vector<int>& orders);
// Refuses (DataError, parameter "max_bytes", the estimate in the message) when
// neumann_memory_bytes exceeds memory_limit_bytes() (base/memory.hpp). Call it with the parsed
// sizes before generating or reading anything. O(1).
void check_neumann_memory(double n, double d_h, double v_cols = 0);

// Cost O((max K + 6) N^3) (LU, kernel, invariants, one truncated series and one SVD per order)
// plus Perron iterations. Throws DataError on gamma outside (0, 1) or gamma rho(Â) >= 1
// (parameter "gamma"), a target out of range or needing K > kMaxTruncationOrder ("target"; checked
// before the LU), a negative order ("K"), a bad Â (square, finite, >= 0), V whose row count
// differs from N, or an estimate above memory_limit_bytes() ("max_bytes").
NeumannAnalysis analyze_neumann(const Eigen::MatrixXd& A_hat, const NeumannAnalysisOptions& opt,
                                const Eigen::MatrixXd& V = Eigen::MatrixXd());

}  // namespace attnspec
