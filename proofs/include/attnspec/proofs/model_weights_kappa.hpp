// model-weights-kappa, an EXPERIMENT on a real model's weights (issue 11): kappa_strict of W_Q,
// W_K, W_V of every head before and after the cheap correction W + lambda I (lambda 0.5, 1, 2,
// 10; SC Thm 3.8) and the SVD correction (SC Thm 3.5), with the bound (lambda + s1)/(lambda - s1)
// Weyl proves when lambda > s1. Bias-independent. Statement: proofs/model_weights_kappa.md.
// SVDs from spectral/svd.hpp; CPU only.
#pragma once
#include <string>
#include <vector>

#include "attnspec/base/check.hpp"
#include "attnspec/proofs/run_loop.hpp"

namespace attnspec::proofs {

// The corrections of the table, in row order: none, lambda:0.5, lambda:1, lambda:2, lambda:10,
// svd (CorrectionSpec spelling).
const std::vector<std::string>& model_weight_corrections();

// Columns of weight_kappa_rows, in order.
enum WeightKappaCol {
    kWkSigma1,       // sigma_1(W)
    kWkSigmaMin,     // sigma_r(W), r = min(D, d)
    kWkBefore,       // kappa_strict(W)
    kWkAfter,        // kappa_strict(W + C)
    kWkRatio,        // after / before
    kWkLambda,       // lambda (NaN for none and svd)
    kWkWeylBound,    // (lambda + s1)/(lambda - s1) when lambda > s1, else NaN
    kWkWeylApplies,  // 1 when lambda > s1, else 0
    kWkHelped,       // 1 when kappa after < kappa before
    kWkDecided,      // 1 when the enclosures of the two kappas are disjoint (helped is proved)
    kWkCols
};

// One row per correction of model_weight_corrections() for one weight W (D x d). kappa strict
// (docs/MATH.md §1; inf when numerically rank-deficient at rtol = max(D, d) eps). Cost: one SVD
// of W and one of W + C per correction, O(D d^2) each. Throws DataError for an empty, non-finite
// or zero W.
Eigen::MatrixXd weight_kappa_rows(const Eigen::MatrixXd& W);

// The experiment record of one head: instance/rows (18 x (2 + kWkCols): matrix index 0, 1, 2 for
// Q, K, V, correction index, then the columns above). No verdict (not_applicable).
CheckResult model_weights_kappa(const Eigen::MatrixXd& W_Q, const Eigen::MatrixXd& W_K,
                                const Eigen::MatrixXd& W_V);

// The table from the records (axes layer, head, matrix, correction; proofs/model_weights_kappa.md)
// with its attributes: the kappa convention, bias_form and the finding (helped / hurt per
// correction).
ExperimentTable model_weights_kappa_table(const std::vector<CheckResult>& results);

// Every head of RunOptions::dataset (default selection: all layers and heads; a sentence part is
// refused). CheckRun::kind = "experiment".
CheckRun run_model_weights_kappa(const RunOptions& opt);

}  // namespace attnspec::proofs
