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
// of x, w_q and w_v.
KernelCheckResult check_spec_attention(const SpecAttentionProblem& p, const Array& o,
                                       const KernelCheckOptions& opt);

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
// The lambda a case is meant to be checked with (100 for large-lambda, else 10).
double spec_case_lambda(const std::string& name);
// `shape` = (N, D, d) or (B, N, D, d) (d_v = d); values rounded to `storage`; UsageError naming
// "stress_case" for an unknown name, DataError for a dimension < 1.
SpecAttentionProblem generate_spec_attention(const std::string& name, std::uint64_t seed,
                                             const std::vector<std::int64_t>& shape,
                                             Format storage);

}  // namespace attnspec::kernels
