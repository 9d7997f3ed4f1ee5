// attnspec's plain derivatives of attention at a declared precision, the baselines of
// attention-vjp and attention-jvp (kernels/derivative_check.hpp): every operation rounded in
// software (kernels/precision.hpp) as a plain kernel rounds it. The inputs (q, k, v, dO, the
// tangents) must already be representable in the storage format (the caller rounds them once).
// Per query row, with p_j the plain forward's stored weights (baseline_weights):
//   vjp: o = the plain forward's stored output, D = sum_a fl_a(dO_c o_c),
//        dP_j = dot_a(dO, v_j), dS_j = fl_s(fl_a(p_j fl_a(dP_j - D))),
//        dQ_c = fl_out(fl_a(fl_a(s) sum_a fl_a(dS_j k_jc))); dK and dV accumulate in the
//        accumulation format over the query rows in file order (dK_jc += fl_a(dS_j q_c), scaled
//        by fl_a(s) at the end; dV_jc += fl_a(p_j dO_c)), then stored in the output format;
//   jvp: ds_j = fl_a(fl_a(s) fl_a(dot_a(tq, k_j) + dot_a(q, tk_j))), m = sum_a fl_a(p_j ds_j),
//        w_j = fl_s(fl_a(p_j fl_a(ds_j - m))), dO_c = fl_out(sum_a over j of fl_a(w_j v_jc) then
//        fl_a(p_j tv_jc)).
// Sums left to right. O(B H N_q N_k (d + d_v)), scratch O(N). CPU only;
// kernels/derivative_baseline.cpp.
// Under a boolean or additive mask each row skips its hidden keys and adds M as stored (the
// forward's baseline_weights). The vjp runs a block of query rows at a time (except for fp64
// storage with fp32 accumulation and under a boolean or additive mask, which run the row form
// above): the forward is attention_baseline.hpp's block form, and
// dP = dO V^T, dQ = dS K, dK += dS^T Q, dV += P^T dO are matrix products in the accumulation
// format (sgemm on the storage values, or dgemm: fused multiply-adds in the BLAS's order); the
// elementwise steps round as above, D left to right; each head's dK and dV sums are added in the
// accumulation format in head order.
#pragma once
#include "attnspec/kernels/attention_problem.hpp"
#include "attnspec/kernels/precision.hpp"

namespace attnspec::kernels {

// dQ, dK, dV (shapes of q, k, v) for the cotangent `dout`. Fully masked rows add nothing.
void baseline_vjp(const AttentionProblem& p, const Array& dout, Format storage, Format accumulate,
                  Array& dq, Array& dk, Array& dv);

// dO (shape (.., N_q, d_v)) for the tangents tq, tk, tv. Fully masked rows give zeros.
void baseline_jvp(const AttentionProblem& p, const Array& tq, const Array& tk, const Array& tv,
                  Format storage, Format accumulate, Array& dout);

}  // namespace attnspec::kernels
