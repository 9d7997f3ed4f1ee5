// check-kernel attention-vjp and attention-jvp on inputs holding NaN or Inf: which elements of the
// derivatives must be non-finite, which must be finite (and are then checked against the reference
// and bounds of kernels/derivative_check.hpp), and which may be either. Derived from the
// definitions of kernels/derivative_reference.hpp under IEEE arithmetic, where NaN and +-inf are
// absorbing under +, - and x (NaN op x = NaN, inf x 0 = NaN, inf - inf = NaN), for a kernel that
// computes every term of each sum over the visible keys (docs/cli/check-kernel.md, "Non-finite
// inputs"). Per query row i of a head (visible keys V(i), under mask none or causal), its logits
// x_ij = s q_i.k_j classify the row as the forward does (kernels/attention_nonfinite.hpp):
//   poisoned    some visible logit NaN or +inf: p_i is NaN (whatever the max does);
//   degenerate  every visible logit -inf, and weighted-0: some visible logit -inf (p_ij = 0, a
//               kernel may multiply or skip the key: 0 x inf = NaN or nothing);
//   clean       every visible logit finite (then q_i and every visible k_j are finite).
// A row is also `shadowed` when a masked key (j beyond its causal prefix) has a non-finite k_j,
// v_j, tk_j or tv_j (a kernel computing whole blocks forms 0 x NaN there, one skipping them does
// not), or when it has no visible key and any of its inputs is non-finite.
// attention-vjp (dP = dO V^T, D_i = dO_i.O_i, dS = P o (dP - D), dQ = s dS K, dK = s dS^T Q,
// dV = P^T dO; K/V rows summed over the query heads sharing them):
//   poisoned row i: dQ_i, and dK_j, dV_j of every visible key j, are non-finite (every column);
//   clean row i with a non-finite dO_ic or a non-finite v_jc of a visible key: D_i and every
//     dS_ij are non-finite, so dQ_i and dK_j of every visible j are non-finite; dV_jc of every
//     visible j is non-finite for each column c with dO_ic non-finite (dV does not read V);
//   degenerate, weighted-0 or shadowed row i: dQ_i and dK_j, dV_j of the keys it reaches
//     (every key when shadowed) are `either`: not determined by the definition, not compared;
//   every other element is finite and is compared with the reference (it reads no non-finite
//   input: the reference is computed with each NaN/Inf replaced by 0).
// attention-jvp (ds_ij = s (tq_i.k_j + q_i.tk_j), m_i = sum_j p_ij ds_ij,
// dO_i = sum_j p_ij (ds_ij - m_i) v_j + sum_j p_ij tv_j), row i of dO:
//   poisoned: every column non-finite; clean with a non-finite tq_i or a non-finite tk_j of a
//   visible key: m_i is non-finite, every column non-finite; otherwise column c is non-finite when
//   a visible key has a non-finite v_jc or tv_jc; degenerate, weighted-0 or shadowed: `either`.
// An element reached by several rules takes the strongest: non-finite, then either, then finite.
// Non-finite elements are not told apart (NaN and +-inf both satisfy "non-finite"). Boolean and
// additive masks are refused with non-finite inputs. CPU only; kernels/derivative_nonfinite.cpp.
#pragma once
#include <vector>

#include "attnspec/kernels/attention_nonfinite.hpp"
#include "attnspec/kernels/derivative_check.hpp"

namespace attnspec::kernels {

// Whether any of the arrays holds NaN or Inf. O(size).
bool any_nonfinite(const std::vector<const Array*>& arrays);

// The expected patterns of dQ, dK, dV (row-major, the shapes of q, k, v) of attention-vjp on `p`
// (mask none or causal) for the cotangent `dout`. DataError on inconsistent shapes or a boolean or
// additive mask. Expect::zero_or_nonfinite is not used. O(B H N_q N_k (d + d_v)).
struct VjpExpectation {
    std::vector<Expect> dq, dk, dv;
};
VjpExpectation expected_vjp_nonfinite(const AttentionProblem& p, const Array& dout);

// The expected pattern of dO (shape of O) of attention-jvp on `p` for the tangents tq, tk, tv;
// DataError as above.
std::vector<Expect> expected_jvp_nonfinite(const AttentionProblem& p, const Array& tq,
                                           const Array& tk, const Array& tv);

}  // namespace attnspec::kernels
