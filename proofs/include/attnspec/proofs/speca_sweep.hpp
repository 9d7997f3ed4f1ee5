// specA-sweep, an EXPERIMENT (kind "experiment": a table, no verdict, no effect on the exit code):
// kappa(J) of SpecA (C = lambda I_{D x d}, frozen; SC summary, Def 3.6) as lambda grows, over
// token scale x placement of the correction x logit scale, with the softmax saturation it
// reaches. Description: proofs/speca_sweep.md; report layout: reports/SCHEMA.md ("Experiments").
// SVDs from spectral/svd.hpp; CPU only.
#pragma once
#include <vector>

#include "attnspec/attention/attention.hpp"
#include "attnspec/base/check.hpp"
#include "attnspec/proofs/run_loop.hpp"

namespace attnspec::proofs {

// The lambda grid of the sweep: 0, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100.
const std::vector<double>& speca_lambdas();

// One head's curve: kappa_strict(J) at effective weights W + lambda I for every lambda of
// `lambdas` (default speca_lambdas(); 0 and 10 are added when missing), the correction on Q, K and
// V (q_only = false) or on Q only. `base` must carry no correction (its C_* are ignored). The
// record has no verdict (not_applicable: no claim is tested); instance/sweep holds the curve,
// columns: lambda, kappa(J), kappa enclosure lo, hi (hi = inf when J is numerically
// rank-deficient), max attention probability, kappa(S), rank(J), full-rank flag. Values:
// kappa(J_0), kappa(J_10), lowered_at_10 (kappa(J_10) < kappa(J_0) proved by the enclosures),
// saturated_at_10 (max probability > 1 - 1e-6), lambda_argmin_kappa, q_only, s.
// Throws DataError on a negative / non-finite lambda or an invalid head.
CheckResult sweep_speca(const Head& base, bool q_only, const std::vector<double>& lambdas = {});

// The table of an experiment run from its per-head records: one row per (tokens, placement,
// scale, lambda) cell, over every shape; columns described in proofs/speca_sweep.md. `results`
// must come from run_speca_sweep (regime "<shape>/<tokens>/<placement>/<scale>").
ExperimentTable speca_table(const std::vector<CheckResult>& results);

// The experiment over shapes x tokens {layernorm, unit-norm, raw} x placement {QKV, Q} x scale
// {1/sqrt(d), 1}, base weights N(0, 1/D) without correction. CheckRun::kind = "experiment".
CheckRun run_speca_sweep(const RunOptions& opt);

}  // namespace attnspec::proofs
