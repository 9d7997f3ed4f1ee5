// thm3.4 (SC §3): the condition-number bound on the attention Jacobian, with a counterexample
// search over instances. Statement: proofs/thm_3_4.md. SVDs with a-posteriori enclosures
// (spectral/svd.hpp); CPU only.
#pragma once
#include "attnspec/attention/attention.hpp"
#include "attnspec/base/check.hpp"
#include "attnspec/proofs/run_loop.hpp"
#include "attnspec/spectral/svd.hpp"

namespace attnspec::proofs {

// Where the spectrum of J comes from: a dense SVD of the formed J with enclosures widened by the
// forming error (small heads), or the large-scale engine (attention/jacobian_spectrum.hpp: the
// eigenvalues of J J^T, the extreme triplets refined matrix-free and enclosed; J never formed),
// for real-model heads whose J (Nd x 3Dd, D = 384) is too wide for a dense SVD in the run's time.
enum class Thm34JRoute { dense, gram };
struct Thm34Options {
    KappaConvention kappa_lambda = KappaConvention::nz;  // strict makes the bound vacuous (inf)
    double bound_factor = 1.0;                           // tests plant < 1 ("a wrong factor")
    Thm34JRoute j_route = Thm34JRoute::dense;
};
// Hypothesis: J has full rank (numerical rank at rtol = max(m,n) eps, and sigma_min's enclosure
// away from 0). Claim: kappa(J) <= kappa(X)^3 kappa(Lambda) kappa(W_V)(kappa(W_Q) + kappa(W_K))
// + kappa(X) kappa(S), every kappa strict except Lambda's (nz by default). Effective weights W+C.
// Every record carries N, D, d, sigma_min/sigma_max(J) and its instance matrices (replay); a
// violated record also carries violation_robust: 1 when it stays violated at every rank tolerance
// from the default to 1e-8 under each kappa(Lambda) convention with a finite bound, else 0.
CheckResult check_thm_3_4(const Head& h, const Thm34Options& o = {});

// The searches maximise kappa(J)/bound subject to sigma_min/sigma_max(J) >= this.
constexpr double kThm34MinSigmaRatio = 1e-6;
// Evaluations the counterexample searches get: --search-evals, else 0 for the deprecated
// --search-budget 0, else 3600 (7200 with --thorough).
long thm_3_4_search_evals(const RunOptions& opt);

// The random regimes, then two searches bounded by evaluations (deterministic for a seed unless
// --search-seconds caps them): 2/3 of the budget from the tightest instances, 1/3 in N <= D
// shapes (none with --shape). Search records carry their own seed and their matrices.
CheckRun run_thm_3_4(const RunOptions& opt);

}  // namespace attnspec::proofs
