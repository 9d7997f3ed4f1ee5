// Thm 3.5 (SC): the SVD correction C = sigma_1 U_r V_r^T gives sigma_i(W + C) = sigma_i + sigma_1
// and kappa(W + C) = 2 sigma_1 / (sigma_1 + sigma_r) <= 2. Statement: proofs/thm_3_5.md.
// SVDs with enclosures (spectral/svd.hpp); CPU only.
#pragma once
#include <Eigen/Dense>
#include <functional>

#include "attnspec/base/check.hpp"
#include "attnspec/proofs/run_loop.hpp"

namespace attnspec::proofs {

// The correction under test: W -> C (the real one is svd_correction; tests plant wrong ones).
using CorrectionFn = std::function<Eigen::MatrixXd(const Eigen::MatrixXd& W)>;

// Pure check on one W. Throws DataError for W = 0, empty or non-finite W.
CheckResult check_thm_3_5(const Eigen::MatrixXd& W, const CorrectionFn& correction = {});

CheckRun run_thm_3_5(const RunOptions& opt);

}  // namespace attnspec::proofs
