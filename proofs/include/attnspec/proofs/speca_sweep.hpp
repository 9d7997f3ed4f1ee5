// specA-sweep (SC §3, Def 3.6): kappa(J) of SpecA (C = lambda I, frozen) as lambda grows, with
// the saturation it reaches. Statement: proofs/speca_sweep.md. SVDs from spectral/svd.hpp; CPU
// only.
#pragma once
#include <vector>

#include "attnspec/attention/attention.hpp"
#include "attnspec/base/check.hpp"
#include "attnspec/proofs/registry.hpp"

namespace attnspec::proofs {

// kappa(J) of SpecA over lambda in {0} U logspace(-1, 2) (or `lambdas`): claim
// kappa(J at lambda = 10) <= kappa(J at lambda = 0); records the sweep, saturation (max attention
// probability, kappa(S), rank J) and the lambda where kappa(J) stops falling.
CheckResult check_speca_sweep(const Head& h, const std::vector<double>& lambdas = {});

CheckRun run_speca_sweep(const RunOptions& opt);

}  // namespace attnspec::proofs
