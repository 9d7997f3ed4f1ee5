// The float64 references of the derivatives of attention and their rounding bounds
// (proofs/kernel_tolerance.md, "Derivatives: attention-vjp and attention-jvp", (D1)-(D9)).
//   attention-vjp: given the cotangent dO (shape of O), with P = softmax(s QK^T + M),
//     dP = dO V^T, D_i = sum_c dO_ic O_ic, dS = P o (dP - D), dQ = s dS K, dK = s dS^T Q,
//     dV = P^T dO; under grouped heads dK, dV sum over the query heads sharing a K/V head.
//   attention-jvp: given tangents tQ, tK, tV (shapes of Q, K, V), with the logit tangent
//     ds_ij = s (tq_i.k_j + q_i.tk_j) and m_i = sum_j p_ij ds_ij,
//     dO_i = sum_j p_ij (ds_ij - m_i) v_j + sum_j p_ij tv_j.
// vjp: a block of 64 query rows of one head at a time (the forward's block analysis, then dP,
// dQ, dK, dV as matrix products through BLAS), heads on every core, each head's dK and dV sums
// added in head order (the same results for any thread count). jvp: row by row, each query row's
// softmax (kernels/attention_reference.hpp, analyze_row) recomputed and used at once. Memory O(B H
// N (d + d_v)) for the results (no N x N matrix); cost O(B H N_q N_k (d + d_v)). CPU only;
// kernels/derivative_reference.cpp.
// Boolean and additive masks (proofs/kernel_tolerance.md, "Derivatives under boolean and additive
// masks"): each row over its visible keys (the forward's row_input_masked), an additive M_ij in
// the logit with the forward's (B1') error and no tangent or cotangent of its own; the vjp's rows
// one at a time through analyze_row, its products over all N_k keys with weight 0 for a hidden
// key. NaN/Inf in q, k, v, dO or the tangents under these masks: DataError (parameter "mask").
#pragma once
#include <vector>

#include "attnspec/kernels/attention_problem.hpp"
#include "attnspec/kernels/attention_reference.hpp"

namespace attnspec::kernels {

// One output tensor of a derivative: per element the reference value, the rounding bound of a
// kernel rounding as `kernel` says (the reference's error included), the bound on the
// reference's own error, and the first-order error of a kernel rounding each intermediate once
// (the floor of the baseline rule, without the output rounding).
struct ReferenceTensor {
    Array value;
    std::vector<double> bound, ref_error, first;
};

struct VjpReference {
    ReferenceTensor dq, dk, dv;
};

// dQ, dK, dV of `p` for the cotangent `dout` (shape (.., N_q, d_v); DataError otherwise).
// Fully masked query rows give dQ = 0 (bound 0) and add nothing to dK, dV.
VjpReference reference_vjp(const AttentionProblem& p, const Array& dout,
                           const RoundingModel& kernel);

// dO of `p` for the tangents tq, tk, tv (shapes of q, k, v; DataError otherwise). Fully masked
// rows give 0 (bound 0). Blocks of query rows on `threads` threads (0: available_threads()); each
// row is computed alone, so the results are the same bits for any thread count.
ReferenceTensor reference_jvp(const AttentionProblem& p, const Array& tq, const Array& tk,
                              const Array& tv, const RoundingModel& kernel, int threads = 0);

}  // namespace attnspec::kernels
