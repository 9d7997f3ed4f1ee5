// Lemma 3.7 (read as Weyl's inequality) and Thm 3.8 (the cheap correction W + lambda I_{D x d}).
// Both live in thm_3_8.cpp. Statements: proofs/lemma_3_7.md, proofs/thm_3_8.md. SVDs with
// enclosures (spectral/svd.hpp); CPU only.
#pragma once
#include <Eigen/Dense>

#include "attnspec/base/check.hpp"
#include "attnspec/proofs/registry.hpp"

namespace attnspec::proofs {

// Weyl: max_i |sigma_i(W + E) - sigma_i(W)| <= factor * ||E||_2. factor = 1 is the lemma; tests
// plant factor < 1 to force a violation. Throws DataError on shape mismatch / NaN.
CheckResult check_lemma_3_7(const Eigen::MatrixXd& W, const Eigen::MatrixXd& E,
                            double factor = 1.0);

// Proved form (thm3.8): hypothesis lambda > sigma_1(W); claims
//   kappa(W + lambda I) <= (lambda + s1)/(lambda - s1)                       ("weyl_bound")
//   kappa(W + lambda I) <= kappa(W) whenever kappa(W) > (lambda+s1)/(lambda-s1)
//   ("guaranteed_decrease")
// `bound_factor` scales the right side of weyl_bound (tests plant < 1).
CheckResult check_thm_3_8(const Eigen::MatrixXd& W, double lambda, double bound_factor = 1.0);

// The paper's informal reading (thm3.8-informal): hypothesis lambda >= 2; claim
// kappa(W + lambda I) < kappa(W). Known false in general (W = diag(-9.9, 1), lambda = 10).
// Values record whether lambda > sigma_1(W) (the sufficient condition) for classification.
CheckResult check_thm_3_8_informal(const Eigen::MatrixXd& W, double lambda);

CheckRun run_lemma_3_7(const RunOptions& opt);
CheckRun run_thm_3_8(const RunOptions& opt);
CheckRun run_thm_3_8_informal(const RunOptions& opt);

}  // namespace attnspec::proofs
