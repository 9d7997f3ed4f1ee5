// check-kernel attention, attention-vjp, attention-jvp, the InfSA family (linear-infsa,
// pure-infsa, neumann) and spec-attention on inputs holding NaN or Inf
// (kernels/attention_nonfinite.hpp, derivative_nonfinite.hpp, infsa_nonfinite.hpp,
// spec_attention_check.hpp). Private to lib/src/kernels/.
#pragma once
#include <vector>

#include "attnspec/kernels/attention_check.hpp"
#include "attnspec/kernels/attention_nonfinite.hpp"
#include "attnspec/kernels/derivative_check.hpp"
#include "attnspec/kernels/linear_infsa_check.hpp"
#include "attnspec/kernels/spec_attention_check.hpp"

namespace attnspec::kernels::detail {

// The check of o (and lse) against the expected pattern and, on the elements expected finite,
// against the reference over the keys of finite logit (the rule and bound of attention_check.hpp).
// Shapes checked by the caller. One row at a time on one thread: O(B H N_q N_k (d + d_v)).
KernelCheckResult check_attention_nonfinite(const AttentionProblem& p, const Array& o,
                                            const Array* lse, const KernelCheckOptions& opt);

// Raises `to` to `e` where `e` is the stronger expectation (finite, then either and
// zero_or_nonfinite, then nonfinite): where several inputs reach an element, the strongest wins.
inline void raise_expect(Expect& to, Expect e) {
    const auto strength = [](Expect x) {
        return x == Expect::finite ? 0 : x == Expect::nonfinite ? 2 : 1;
    };
    if (strength(e) > strength(to)) to = e;
}

// What the checks of the derivatives and of linear-infsa share (kernels/derivative_nonfinite.cpp):
// `a` with each NaN/Inf replaced by 0; `got` with each element not compared set to `ref` (those
// expected non-finite or zero_or_nonfinite, and the `either` ones, unless `compare_either` and
// the kernel left them finite); and the pattern counted into `r` (checked on the substituted
// output: a finite element where NaN/Inf is required, or a finite non-zero one where 0 or NaN/Inf
// is, counts beyond the bound with reference NaN), then the verdict and summary again.
Array sanitized(const Array& a);
Array substituted(const Array& got, const std::vector<Expect>& x, const Array& ref,
                  bool compare_either);
void account(const Array& got, const std::vector<Expect>& x, const KernelCheckOptions& opt,
             const char* name, KernelCheckResult& r);

// attention-vjp and attention-jvp on inputs holding NaN or Inf (kernels/derivative_nonfinite.hpp):
// called by check_attention_vjp / check_attention_jvp when some input is non-finite. The elements
// not compared (expected non-finite, or either) are set to the reference of the inputs with each
// NaN/Inf replaced by 0, the derivative check runs on those, then the pattern is counted into
// nonfinite_expected and nonfinite_mismatch. Twice the cost of the finite check.
VjpCheckResult check_vjp_nonfinite(const AttentionProblem& p, const Array& dout, const Array& dq,
                                   const Array& dk, const Array& dv, const KernelCheckOptions& opt);
KernelCheckResult check_jvp_nonfinite(const AttentionProblem& p, const Array& tq, const Array& tk,
                                      const Array& tv, const Array& dout,
                                      const KernelCheckOptions& opt);

// linear-infsa and pure-infsa on inputs holding NaN or Inf (kernels/infsa_nonfinite.hpp): as
// above, `either` elements compared when finite. Called by check_linear_infsa, check_pure_infsa.
KernelCheckResult check_linear_infsa_nonfinite(const AttentionProblem& p,
                                               const LinearInfsaParams& par, const Array& o,
                                               const KernelCheckOptions& opt);

KernelCheckResult check_pure_infsa_nonfinite(const AttentionProblem& p,
                                             const LinearInfsaParams& par, const Array& o,
                                             const KernelCheckOptions& opt);

// spec-attention on x or weights holding NaN or Inf (expected_spec_attention_nonfinite): the
// pattern, then the finite check on the cleaned problem, `either` elements compared when finite.
// Called by check_spec_attention after its storage-range rule.
KernelCheckResult check_spec_attention_nonfinite(const SpecAttentionProblem& p, const Array& o,
                                                 const KernelCheckOptions& opt);

// neumann on inputs holding NaN or Inf (kernels/neumann_nonfinite.cpp), as pure-infsa's: called by
// check_neumann.
KernelCheckResult check_neumann_nonfinite(const AttentionProblem& p, const LinearInfsaParams& par,
                                          const Array& o, const KernelCheckOptions& opt);

// What the InfSA family's three checks above share (kernels/linear_infsa_nonfinite.cpp): the
// cleaned problem (`p` with every row of q and of k holding NaN/Inf set to zeros, its entries or
// scores then 0 as a NaN read as 0 gives, and each NaN/Inf of v set to 0), the elements of `o` not
// compared under the pattern `x` set to `reference` of it, `check` run on those (`either` elements
// compared when finite), then the pattern counted (account). Shapes and parameters checked by the
// caller.
using InfsaReference = Array (*)(const AttentionProblem&, const LinearInfsaParams&);
using InfsaCheck = KernelCheckResult (*)(const AttentionProblem&, const LinearInfsaParams&,
                                         const Array&, const KernelCheckOptions&);
KernelCheckResult check_infsa_cleaned(const AttentionProblem& p, const LinearInfsaParams& par,
                                      const Array& o, const std::vector<Expect>& x,
                                      const KernelCheckOptions& opt, InfsaReference reference,
                                      InfsaCheck check);

}  // namespace attnspec::kernels::detail
