// thm3.4-model: the thm3.4 bound (SC Thm 3.4, proofs/thm_3_4.md) on the heads of a real model
// (issue 11), in the paper's bias-free form, with the model's own logit scale s. Statement:
// proofs/thm_3_4_model.md. The evaluation is check_thm_3_4
// (proofs/thm_3_4.hpp) with the spectrum of J from the large-scale engine (Thm34JRoute::gram).
// CPU only.
#pragma once
#include "attnspec/attention/attention.hpp"
#include "attnspec/base/check.hpp"
#include "attnspec/proofs/run_loop.hpp"
#include "attnspec/proofs/thm_3_4.hpp"

namespace attnspec::proofs {

// check_thm_3_4 on `h` with its biases dropped (bias-free form) and J's spectrum by the Gram
// route; the record is named thm3.4-model and carries the convention bias_form. Same cost as one
// jacobian_spectrum (full mode) plus the SVDs of X, W_*, S and the blocks of Lambda.
CheckResult check_thm_3_4_model(const Head& h, const Thm34Options& o = {});

// Default selection: every layer and head of RunOptions::dataset on its shortest sentence
// (--thorough: every sentence); --kappa-lambda as for thm3.4.
CheckRun run_thm_3_4_model(const RunOptions& opt);

}  // namespace attnspec::proofs
