// check-kernel linear-infsa: a user's Linear-InfSA output against the float64 reference, with the
// rounding bound of proofs/kernel_tolerance.md ("Linear-InfSA", (L1)-(L8)) and the baseline rule
// of kernels/attention_check.hpp. The operation is the public InfSA code's, as the library's CPU
// reference implements it (infsa/linear_infsa.hpp, docs/MATH.md §3), per head:
//   q~_i = q_i / sqrt(d),  e_i = ||q~_i||,  q_bar = sum_i e_i q~_i / (sum_i e_i + eps),
//   s_j = max(0, q_bar . k_j / sqrt(d)),  o_i = gamma sum_j s_j v_j / (sum_j s_j + eps)
// for every query row i (the pooled vector broadcast; 0 when every s_j is 0, which the formula
// also gives for eps > 0). Q, K, V as for attention (kernels/attention_problem.hpp: rank 2..4,
// grouped K/V heads, d_v != d, N_k != N_q allowed); no mask, no scale. Memory O(N_k + d + d_v)
// per head beyond the inputs (no N x N); cost O(B H (N_q d + N_k (d + d_v))). CPU only;
// kernels/linear_infsa_reference.cpp (reference and bound), kernels/linear_infsa_check.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attnspec/kernels/attention_check.hpp"
#include "attnspec/kernels/attention_problem.hpp"
#include "attnspec/kernels/precision.hpp"

namespace attnspec::kernels {

// gamma and eps with the defaults of LinearInfsaOptions (infsa/linear_infsa.hpp; kernels sits
// beside infsa and may not include it: tests/cpu/kernels/test_linear_infsa_check.cpp checks the
// two agree).
struct LinearInfsaParams {
    double gamma = 0.95;  // finite (the library asks (0, 1); any finite value is checked)
    double eps = 1e-6;    // >= 0
};

// Checks `o` (shape (.., N_q, d_v)) against the reference of Linear-InfSA on p.q, p.k, p.v.
// DataError on inconsistent shapes, a mask other than none, non-finite gamma or eps < 0
// (parameters "gamma", "eps"); NaN/Inf in o count as wrong elements, except where the inputs
// hold NaN/Inf (kernels/infsa_nonfinite.hpp states which elements must then be NaN/Inf).
KernelCheckResult check_linear_infsa(const AttentionProblem& p, const LinearInfsaParams& par,
                                     const Array& o, const KernelCheckOptions& opt);

// The float64 reference output (shape (.., N_q, d_v)): every row of a head is its pooled vector.
Array reference_linear_infsa(const AttentionProblem& p, const LinearInfsaParams& par);
// The same reference without the broadcast: one pooled vector gamma sum_j a_j v_j per head, shape
// (.., d_v) (the output's shape without N_q). One sweep over Q and one over K and V; writes
// B H d_v values where reference_linear_infsa writes B H N_q d_v.
Array reference_linear_infsa_pooled(const AttentionProblem& p, const LinearInfsaParams& par);

// attnspec's plain Linear-InfSA at the declared precisions (the baseline): every operation
// rounded to the accumulation format, q_bar and the scores s_j stored in the storage format, the
// output in output_format(storage). Shape (.., N_q, d_v).
Array baseline_linear_infsa(const AttentionProblem& p, const LinearInfsaParams& par, Format storage,
                            Format accumulate);

// The stress cases of linear-infsa: those of kernels/stress.hpp, then
//   relu-zero     q_i = |g_i| u, k_j = -|h_j| u for one random unit u per head (plus N(0, 1)
//                 values in V): every score is ReLU'd to zero, the output is exactly 0;
//   dominant-key  gaussian, and key N_k/2 replaced by 30 sqrt(d) q_bar/||q_bar|| (the float64
//                 q_bar of the case): one key carries nearly all the weight.
std::vector<std::string> linear_infsa_cases();
// The case `name` (UsageError naming "stress_case" when unknown), reproducible from (name, seed,
// shape) as generate_stress, values rounded to `storage`. `denormal` (not in linear_infsa_cases())
// keeps only v of the attention case below the normal range (v = 2^(emin - 1) U(0, 1)) and q, k
// as the gaussian case's (the same draws): the scores stay normal, the products s_j v_jc and the
// output are subnormal (with subnormal k, s_j v_jc would lie below every format's range, and o
// too for eps > 0: proofs/kernel_tolerance.md, "Denormal-range inputs").
AttentionProblem generate_linear_infsa(const std::string& name, std::uint64_t seed,
                                       const std::vector<std::int64_t>& shape, Format storage);

}  // namespace attnspec::kernels
