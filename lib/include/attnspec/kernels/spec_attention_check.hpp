// check-kernel spec-attention: a user's SpecA forward (docs/MATH.md §2, Def 3.6) against the
// float64 reference, with the rounding bound of proofs/kernel_tolerance.md ("SpecA forward",
// (Q1)-(Q6)) and the baseline rule of kernels/attention_check.hpp:
//   O = softmax(s X W'_Q W'_K^T X^T + M) X W'_V,  W' = W + C,  s default 1/sqrt(d),
// with C = lambda I_{D x d} (rectangular identity, lambda >= 0) or the SVD correction of Thm 3.5,
// C = sigma_1(W) U V^T from the thin SVD of W (W = 0: DataError). X is (N, D) or (B, N, D), W_Q
// and W_K (D, d), W_V (D, d_v); O (N, d_v) or (B, N, d_v); M none, causal, or a boolean or
// additive mask array (N, N) or (B', N, N) as attention's. The reference forms W + C and the
// projections in float64 with elementwise error bounds and runs the attention reference
// (kernels/attention_reference.hpp) on them, the projections' error carried as an operand
// perturbation. The corrections are those of attention/corrections.hpp, which kernels may not
// include (tests/cpu/kernels/test_spec_attention_check.cpp checks the two agree). Memory
// O(B N (d + d_v) + D (d + d_v)) beyond the inputs (no N x N); cost O(B N (D (d + d_v) + N (d +
// d_v))) plus one SVD per weight. CPU only; kernels/spec_attention_check.cpp,
// kernels/spec_attention_projection.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attnspec/kernels/attention_check.hpp"
#include "attnspec/kernels/attention_nonfinite.hpp"
#include "attnspec/kernels/attention_problem.hpp"
#include "attnspec/kernels/precision.hpp"

namespace attnspec::kernels {

enum class SpecCorrection { lambda, svd };
const char* spec_correction_name(SpecCorrection c);  // "lambda", "svd"
// Error(Usage) naming `parameter` unless "lambda" or "svd".
SpecCorrection parse_spec_correction(const std::string& text, const std::string& parameter);

struct SpecAttentionProblem {
    Array x, w_q, w_k, w_v;
    SpecCorrection correction = SpecCorrection::lambda;
    double lambda = 10;  // the paper's
    MaskKind mask = MaskKind::none;
    double scale = 0;  // 0: 1/sqrt(d)
    // boolean and additive masks (kernels/attention_problem.hpp): M of shape (N, N) or (B', N, N),
    // B' = 1 or B; empty for none and causal.
    Array mask_array;
};

// Checks `o` against the reference of `p`. DataError (65) on inconsistent shapes (naming the
// array and its shape), lambda < 0 or non-finite (parameter "lambda"), an SVD correction of a
// zero weight; NaN/Inf in o count as wrong elements. r.q_shape, k_shape, v_shape hold the shapes
// of x, w_q and w_v. x and the weights may hold NaN or Inf (expected_spec_attention_nonfinite).
KernelCheckResult check_spec_attention(const SpecAttentionProblem& p, const Array& o,
                                       const KernelCheckOptions& opt);

// spec-attention on x or weights holding NaN or Inf (docs/cli/check-kernel.md, "Non-finite
// inputs"). The corrected weights W + lambda I and the projections Q, K, V = X W' are formed in
// float64, where IEEE arithmetic fixes which projected elements are NaN or +-inf and their signs
// (a sum with +inf and -inf terms, or inf x 0, is NaN in any order); the pattern of o is then
// attention's (kernels/attention_nonfinite.hpp) on those projections. A kernel stores them in its
// storage format, where a tiny finite projection can round to 0 (turning a -inf logit into
// inf x 0 = NaN) and a large one to +-inf: the pattern is taken on the float64 projections and
// on the projections rounded to `storage`, and an element on which the two differ is `either`
// (zero_or_nonfinite when both say non-finite or zero_or_nonfinite). So: NaN or Inf in x_j
// (row j of X) makes q_j, k_j, v_j non-finite: row j of o non-finite unless masked, and every
// row that sees key j non-finite unless its logit with j is -inf (the key then drops out); NaN
// or Inf in W_Q or W_K makes a whole column of Q or K non-finite: every row non-finite, or 0 or
// non-finite where every logit is -inf; NaN or Inf in W_V[a, c] makes column c of V non-finite
// (0 x inf = NaN where x_ja = 0): column c of every row non-finite. Under the SVD correction a
// non-finite weight is refused (DataError naming it: its SVD is not defined); non-finite inputs
// under a boolean or additive mask are refused (DataError, parameter "mask"), as for attention.
// Elements expected finite, and `either` ones a kernel left finite, are checked as for finite
// inputs against the problem with each non-finite row of x and each non-finite weight entry set
// to 0 and each key whose float64 logit is -inf hidden from its row by a boolean mask: on those
// elements it equals the given problem (kernels/spec_attention_nonfinite.cpp). O(B N^2 (d + d_v))
// beyond the finite check.
std::vector<Expect> expected_spec_attention_nonfinite(const SpecAttentionProblem& p,
                                                      Format storage);

// The float64 reference output (shape (.., N, d_v)).
Array reference_spec_attention(const SpecAttentionProblem& p);

// attnspec's plain SpecA at the declared precisions (the baseline): X and W rounded to the
// storage format, W + C (C in float64) rounded to the accumulation format then to the storage
// format, each projection a left-to-right dot product in the accumulation format stored in the
// storage format, then the plain attention of kernels/attention_baseline.hpp.
Array baseline_spec_attention(const SpecAttentionProblem& p, Format storage, Format accumulate);

// The stress cases of spec-attention, reproducible from (name, seed, shape):
//   gaussian          X ~ N(0, 1/D), W ~ N(0, 1/D); checked with lambda = 10
//   large-lambda      the same inputs, checked with lambda = 100 (saturating softmax)
//   rank-deficient-w  X as gaussian, each W = G H / sqrt(D) with G (D x r), H (r x d), r =
//                     max(1, d / 4), plus 1e-3 N(0, 1/D): kappa(W) ~ 1e3, where the SVD
//                     correction matters (and is defined)
//   large-logits      X ~ N(0, 16/D) (logits 16 times gaussian's), W as gaussian
std::vector<std::string> spec_attention_cases();
// The cases with NaN or Inf, the gaussian case's inputs with, from the same seeded stream after
// the weights:
//   nan-x, inf-x  per batch one element of x set to NaN, or to +inf (-inf for half the draws)
//   nan-w, inf-w  one element of one weight (w_q, w_k or w_v, drawn) set to NaN, or to +-inf
// (expected_spec_attention_nonfinite; checked with --correction lambda).
std::vector<std::string> spec_attention_nonfinite_cases();
// The lambda a case is meant to be checked with (100 for large-lambda, else 10).
double spec_case_lambda(const std::string& name);
// `shape` = (N, D, d) or (B, N, D, d) (d_v = d); values rounded to `storage`; `name` one of
// spec_attention_cases() or spec_attention_nonfinite_cases(); UsageError naming
// "stress_case" for an unknown name, DataError for a dimension < 1.
SpecAttentionProblem generate_spec_attention(const std::string& name, std::uint64_t seed,
                                             const std::vector<std::int64_t>& shape,
                                             Format storage);

}  // namespace attnspec::kernels
