// thm3.4 (SC §3): the condition-number bound on the attention Jacobian, with a counterexample
// search over instances. Statement: proofs/thm_3_4.md. SVDs with a-posteriori enclosures
// (spectral/svd.hpp); CPU only.
#pragma once
#include "attnspec/attention/attention.hpp"
#include "attnspec/base/check.hpp"
#include "attnspec/proofs/registry.hpp"
#include "attnspec/spectral/svd.hpp"

namespace attnspec::proofs {

struct Thm34Options {
    KappaConvention kappa_lambda = KappaConvention::nz;  // strict makes the bound vacuous (inf)
    double bound_factor = 1.0;                           // tests plant < 1 ("a wrong factor")
};
// Hypothesis: J has full rank (numerical rank at rtol = max(m,n) eps, and sigma_min's enclosure
// away from 0). Claim: kappa(J) <= kappa(X)^3 kappa(Lambda) kappa(W_V)(kappa(W_Q) + kappa(W_K))
// + kappa(X) kappa(S), every kappa strict except Lambda's (nz by default). Effective weights W+C.
CheckResult check_thm_3_4(const Head& h, const Thm34Options& o = {});

CheckRun run_thm_3_4(const RunOptions& opt);

}  // namespace attnspec::proofs
