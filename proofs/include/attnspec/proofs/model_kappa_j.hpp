// model-kappa-J, an EXPERIMENT on a real model (issue 11): kappa(J) of every selected head with
// the model's own s, beside the thm3.4 bound, its factors and verdict (the evaluation of
// thm3.4-model, proofs/thm_3_4_model.hpp), per (layer, head, sentence). Statement:
// proofs/model_kappa_j.md. CPU only.
#pragma once
#include <vector>

#include "attnspec/base/check.hpp"
#include "attnspec/proofs/run_loop.hpp"

namespace attnspec::proofs {

// The table from thm3.4-model records: axes layer, head, sentence, verdict; columns N, kappa_J,
// bound, ratio, kappa_X, kappa_S, kappa_Lambda_nz, kappa_WQ, kappa_WK, kappa_WV, sigma_min_J;
// attributes: the kappa conventions, bias_form and the finding (verdict counts, ratios).
ExperimentTable model_kappa_j_table(const std::vector<CheckResult>& results);

// The units of run_thm_3_4_model, kappa(Lambda) always nz (the column says so).
// CheckRun::kind = "experiment"; its records keep their values, not their matrices.
CheckRun run_model_kappa_j(const RunOptions& opt);

}  // namespace attnspec::proofs
