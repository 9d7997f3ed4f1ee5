// check-kernel attention on inputs holding NaN or Inf (kernels/attention_nonfinite.hpp): called by
// check_attention when has_nonfinite_input(p). Private to lib/src/kernels/.
#pragma once
#include "attnspec/kernels/attention_check.hpp"

namespace attnspec::kernels::detail {

// The check of o (and lse) against the expected pattern and, on the elements expected finite,
// against the reference over the keys of finite logit (the rule and bound of attention_check.hpp).
// Shapes checked by the caller. One row at a time on one thread: O(B H N_q N_k (d + d_v)).
KernelCheckResult check_attention_nonfinite(const AttentionProblem& p, const Array& o,
                                            const Array* lse, const KernelCheckOptions& opt);

}  // namespace attnspec::kernels::detail
