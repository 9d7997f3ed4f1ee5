// Checks on the attention Jacobian (SC §3): thm3.3 (closed forms vs complex step), thm3.4 (the
// condition-number bound, with counterexample search), specA-sweep (kappa(J) of SpecA as lambda
// grows). Statements: proofs/thm_3_3.md, proofs/thm_3_4.md, proofs/speca_sweep.md.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "attnspec/attention/attention.hpp"
#include "attnspec/base/check.hpp"
#include "attnspec/proofs/registry.hpp"
#include "attnspec/spectral/svd.hpp"

namespace attnspec::proofs {

// ---- instance regimes shared by the attention checks ------------------------------------------
struct AttentionRegime {
    std::string shape;    // "N<D", "N>D", "d=1", "d=D", ...
    long N, D, d;
    std::string weights;  // "gauss-0.1" | "gauss-1" | "gauss-3" | "kappa-1e3" | "lambda-10"
    bool inv_sqrt_d;      // logit scale 1/sqrt(d) instead of 1
    std::string tokens;   // "gaussian" | "layernorm"
    std::string name() const;
};
std::vector<AttentionRegime> attention_regimes(const RunOptions& opt);
// Seeded head of a regime; corrections (lambda-10) are applied and frozen (SpecA, Def 3.6).
Head draw_head(const AttentionRegime& r, std::uint64_t seed);
// Head stored in a record's instance/ group (X, W_Q, W_K, W_V, optional C_*; values/s).
Head stored_head(const H5Reader& r, const std::string& group);
void store_head(CheckResult& res, const Head& h);
// Every head of an input file (/heads/<name>/{X, W_Q, W_K, W_V}, attr s), in file order.
// Errors: NoInput (missing), DataError (malformed, shapes, NaN).
std::vector<std::pair<std::string, Head>> load_heads(const std::string& path);

// ---- thm3.3 -------------------------------------------------------------------------------------
// Route (a) closed-form J (and J_X) against the complex-step witness, per block Q, K, V, X:
// ||J_a - J_cs||_F <= tol_cs(n) ||M||_F with M the running-error magnitude (proofs/thm_3_3.md).
using JacobianFn = std::function<Eigen::MatrixXd(const Head&)>;
CheckResult check_thm_3_3(const Head& h, const JacobianFn& closed_form = {});

// ---- thm3.4 -------------------------------------------------------------------------------------
struct Thm34Options {
    KappaConvention kappa_lambda = KappaConvention::nz;  // strict makes the bound vacuous (inf)
    double bound_factor = 1.0;  // tests plant < 1 ("a wrong factor")
};
// Hypothesis: J has full rank (numerical rank at rtol = max(m,n) eps, and sigma_min's enclosure
// away from 0). Claim: kappa(J) <= kappa(X)^3 kappa(Lambda) kappa(W_V)(kappa(W_Q) + kappa(W_K))
// + kappa(X) kappa(S), every kappa strict except Lambda's (nz by default). Effective weights W+C.
CheckResult check_thm_3_4(const Head& h, const Thm34Options& o = {});

// ---- specA-sweep --------------------------------------------------------------------------------
// kappa(J) of SpecA (C = lambda I, frozen) over lambda in {0} U logspace(-1, 2): claim
// kappa(J at lambda = 10) <= kappa(J at lambda = 0); records the sweep, saturation (max attention
// probability, kappa(S), rank J) and the lambda where kappa(J) stops falling.
CheckResult check_speca_sweep(const Head& h, const std::vector<double>& lambdas = {});

CheckRun run_thm_3_3(const RunOptions& opt);
CheckRun run_thm_3_4(const RunOptions& opt);
CheckRun run_speca_sweep(const RunOptions& opt);

}  // namespace attnspec::proofs
