// model-speca-lambda, an EXPERIMENT on a real model (issue 11): kappa_strict(J) of SpecA
// (C_Q = C_K = C_V = lambda I_{D x d}, frozen; SC Def 3.6) on trained heads with their biases and
// their own s, for lambda in {0, 0.5, 1, 2, 10}, with the softmax saturation it reaches.
// Statement: proofs/model_speca_lambda.md. kappa(J) from attention/jacobian_spectrum.hpp (J never
// formed). CPU only.
#pragma once
#include <vector>

#include "attnspec/attention/attention.hpp"
#include "attnspec/base/check.hpp"
#include "attnspec/proofs/run_loop.hpp"

namespace attnspec::proofs {

// The lambdas of the experiment: 0, 0.5, 1, 2, 10.
const std::vector<double>& model_speca_lambdas();

// Columns of one curve (instance/curve of a record), one row per lambda.
enum SpecaCurveCol {
    kScLambda,     // lambda
    kScKappa,      // kappa_strict(J) at W + lambda I (inf when J is numerically rank-deficient)
    kScMaxProb,    // max attention probability
    kScKappaLo,    // enclosure of kappa(J)
    kScKappaHi,    //
    kScRatio,      // kappa(J_lambda) / kappa(J_0)
    kScLowered,    // 1 when kappa(J_lambda) < kappa(J_0) is proved by the enclosures
    kScSaturated,  // 1 when max probability > 1 - 1e-6
    kScCols
};

// One head's curve: `base` (with its biases, if any; its corrections are replaced) at every
// lambda of `lambdas` (default model_speca_lambdas(); must start with 0). No verdict. Cost: one
// jacobian_spectrum per lambda (Gram of J, O((Nd)^3)). DataError on a bad head or lambda.
CheckResult model_speca_curve(const Head& base, const std::vector<double>& lambdas = {});

// The table (axes layer, head, sentence; columns lambda, kappa_J, max_prob, kappa_lo, kappa_hi,
// ratio, lowered, saturated) with its attributes (kappa, bias_form, correction, finding).
ExperimentTable model_speca_table(const std::vector<CheckResult>& results);

// Default selection: every head on the shortest sentence (--thorough: every sentence).
// CheckRun::kind = "experiment".
CheckRun run_model_speca_lambda(const RunOptions& opt);

}  // namespace attnspec::proofs
