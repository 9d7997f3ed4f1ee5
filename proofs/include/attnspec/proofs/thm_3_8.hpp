// Lemma 3.7 (read as Weyl's inequality) and Thm 3.8 (the cheap correction W + lambda I_{D x d}).
// Both live in thm_3_8.cpp. Statements: proofs/lemma_3_7.md, proofs/thm_3_8.md. SVDs with
// enclosures (spectral/svd.hpp); CPU only.
#pragma once
#include <Eigen/Dense>

#include "attnspec/base/check.hpp"
#include "attnspec/proofs/run_loop.hpp"

namespace attnspec::proofs {

// Weyl: max_i |sigma_i(W + E) - sigma_i(W)| <= factor * ||E||_2. factor = 1 is the lemma; tests
// plant factor < 1 to force a violation. Throws DataError on shape mismatch / NaN.
CheckResult check_lemma_3_7(const Eigen::MatrixXd& W, const Eigen::MatrixXd& E,
                            double factor = 1.0);

// Thm 3.8 is known only as "kappa(W + lambda I) < kappa(W) for lambda >= 2 under specific
// conditions" (SC summary). Four checks, one per reading (proofs/thm_3_8.md). Each throws DataError
// on an empty / non-finite W or a lambda < 0; "proved" below means decided on enclosures.
//
// thm3.8 (theorem, proved bound): lambda > sigma_1(W) (proved) =>
//   kappa(W + lambda I) <= (lambda + s1)/(lambda - s1)                        ("weyl_bound")
// `bound_factor` scales the right side (tests plant < 1).
CheckResult check_thm_3_8(const Eigen::MatrixXd& W, double lambda, double bound_factor = 1.0);

// thm3.8-sufficient (theorem, follows from the bound): lambda > s1 and
// kappa(W) > (lambda + s1)/(lambda - s1) (both proved) => kappa(W + lambda I) < kappa(W)
// ("decrease", strict). `rhs_factor` scales kappa(W) (tests plant < 1).
CheckResult check_thm_3_8_sufficient(const Eigen::MatrixXd& W, double lambda,
                                     double rhs_factor = 1.0);

// thm3.8-trained (the natural reading for trained weights): ||W||_2 <= 1 (proved) and lambda >= 2
// => "decrease": kappa(W + lambda I) < kappa(W) (fails where kappa(W) < 3 is small enough; the
// run maps that region by kappa(W) x lambda bands), and "bound":
// kappa(W + lambda I) <= (lambda + 1)/(lambda - 1) <= 3 (always; `bound_factor` plants < 1).
CheckResult check_thm_3_8_trained(const Eigen::MatrixXd& W, double lambda,
                                  double bound_factor = 1.0);

// thm3.8-above-sigma1 (probes a FALSE reading): lambda > sigma_1(W) alone =>
// kappa(W + lambda I) < kappa(W). Expected `violated` on anti-aligned spectra
// (W = diag(-9.9, 1), lambda = 10: kappa 9.9 -> 110). Records `sufficient_met`.
CheckResult check_thm_3_8_above_sigma1(const Eigen::MatrixXd& W, double lambda);

CheckRun run_lemma_3_7(const RunOptions& opt);
CheckRun run_thm_3_8(const RunOptions& opt);
CheckRun run_thm_3_8_sufficient(const RunOptions& opt);
CheckRun run_thm_3_8_trained(const RunOptions& opt);
CheckRun run_thm_3_8_above_sigma1(const RunOptions& opt);

}  // namespace attnspec::proofs
