// check-kernel attention, attention-vjp and attention-jvp on inputs holding NaN or Inf
// (kernels/attention_nonfinite.hpp, kernels/derivative_nonfinite.hpp). Private to lib/src/kernels/.
#pragma once
#include "attnspec/kernels/attention_check.hpp"
#include "attnspec/kernels/derivative_check.hpp"

namespace attnspec::kernels::detail {

// The check of o (and lse) against the expected pattern and, on the elements expected finite,
// against the reference over the keys of finite logit (the rule and bound of attention_check.hpp).
// Shapes checked by the caller. One row at a time on one thread: O(B H N_q N_k (d + d_v)).
KernelCheckResult check_attention_nonfinite(const AttentionProblem& p, const Array& o,
                                            const Array* lse, const KernelCheckOptions& opt);

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

}  // namespace attnspec::kernels::detail
