// check-kernel attention on inputs holding NaN or Inf: which elements of O and LSE must be
// non-finite, which must be finite (and are then checked against the reference and bounds of
// kernels/attention_check.hpp), and which may be either. What IEEE arithmetic gives in a standard
// max-subtracted softmax (x_j = s q_i.k_j, m = max_j x_j, t_j = exp(x_j - m), p_j = t_j / sum t,
// o = sum_j p_j v_j, lse = m + log sum t), for query row i over its visible keys j
// (docs/cli/check-kernel.md, "Non-finite inputs"):
//   * some visible logit x_j is NaN or +inf (NaN in q_i or k_j; +-inf in q_i; +inf in k_jc with
//     q_ic > 0 or -inf with q_ic < 0; 0 x inf = NaN): row i of O and lse_i are non-finite (a NaN
//     logit makes t_j NaN whether the max propagates or ignores it; a +inf max gives inf - inf);
//   * every visible logit is -inf: exp(-inf - -inf) = NaN in a plain kernel, while FlashAttention
//     guards the -inf max and returns zeros: each element of O is 0 or non-finite, lse_i is
//     non-finite (FlashAttention +inf, PyTorch -inf or NaN);
//   * otherwise the keys with a -inf logit get weight exactly 0 and the row is the attention over
//     the others: lse_i is finite; column c of O is non-finite when some key of finite logit has a
//     non-finite v_jc (NaN, or +-inf times a positive weight, or 0 x inf where the weight
//     underflowed), may be either when only keys of weight 0 do (0 x NaN = NaN in a kernel that
//     multiplies them, finite in one that skips them), and is finite otherwise.
// Masked keys (beyond row i's causal prefix) count as keys of weight 0: kernels legitimately
// differ on them (a -inf logit and P V over every key give 0 x NaN = NaN; an additive -inf mask
// turns a NaN or +inf logit into NaN; a kernel that skips them sees nothing), so a non-finite
// v_jc of a masked key makes column c `either`, and a NaN or +inf logit of a masked key makes
// every element of the row and lse_i `either` (when the visible keys make it finite).
// Rows without any visible key (a causal mask with N_q > N_k) keep the rule of fully masked rows.
// Non-finite elements are not told apart (NaN and +-inf both satisfy "non-finite"). CPU only;
// kernels/attention_nonfinite.cpp.
#pragma once
#include <cstdint>
#include <vector>

#include "attnspec/kernels/attention_check.hpp"

namespace attnspec::kernels {

enum class Expect : std::uint8_t {
    finite,             // must be finite (and within the reference's rule)
    nonfinite,          // must be NaN or +-inf
    either,             // non-finite, or finite and within the reference's rule
    zero_or_nonfinite,  // every visible logit -inf, or no visible key: 0 or non-finite
};
const char* expect_name(Expect e);

// The expected pattern of O (row-major, the shape of O) and of LSE (the shape of LSE).
struct NonfiniteExpectation {
    std::vector<Expect> o, lse;
};

// Whether q, k or v of `p` holds NaN or Inf. O(size).
bool has_nonfinite_input(const AttentionProblem& p);

// The pattern above for `p` (its mask and scale), from the logits computed in float64.
// DataError on inconsistent shapes. O(B H N_q N_k d).
NonfiniteExpectation expected_nonfinite(const AttentionProblem& p);

}  // namespace attnspec::kernels
