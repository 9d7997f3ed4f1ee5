// attnspec's own plain attention at a declared precision, the baseline of the FlashAttention-style
// rule ("error <= factor x the error of a plain implementation in the same dtype"): every
// operation rounded in software (kernels/precision.hpp) as a plain kernel would round it. For one
// query row with n visible keys, in this order:
//   q, k, v rounded to the storage format (by the caller, once: `in` must hold those values;
//   check_attention and baseline_attention do it);
//   x_j = fl_a(fl_a(s) * dot_a(q, k_j)), dot_a summing left to right, each product and sum
//   rounded to the accumulation format (an additive mask: x_j = fl_a(that + M_ij), M rounded to
//   the storage format with q, k, v; a boolean or additive mask's hidden keys are skipped, as
//   exp(-inf) = 0 skips them); m = max_j x_j; t_j = fl_a(exp(fl_a(x_j - m)));
//   l = sum_a t_j; p_j = fl_s(fl_a(t_j / l)) (P stored in the storage format);
//   o_c = sum_a fl_a(p_j v_jc); output fl_out(o_c); lse = fl_a(m + fl_a(log l)).
// exp and log are float64 results rounded once (within 1 ulp of the format). O(n (d + d_v)) per
// row, O(n) scratch. CPU only; kernels/attention_baseline.cpp.
//
// In blocks: check_attention and baseline_attention run the same plain kernel a block of query
// rows at a time (lib/src/kernels/attention_block.cpp), its two products as matrix products in
// the accumulation format A: with A = fp32 (accumulate fp32, storage fp32/tf32/fp16/bf16) an
// sgemm on the storage values (exact in fp32; fused multiply-adds in the BLAS's order, fl_a(s)
// applied as its alpha), with A = fp64 a dgemm; the softmax steps as above, elementwise in A
// (m, t_j, l left to right, p_j = fl_s(fl_a(t_j / l))); o = fl_out(P V) from the same GEMM. A
// kernel declared fp64 storage with fp32 accumulation runs the row form above.
#pragma once
#include <vector>

#include "attnspec/kernels/attention_reference.hpp"
#include "attnspec/kernels/precision.hpp"

namespace attnspec::kernels {

// The plain kernel's softmax weights of one row: p (n values, stored in `storage`), the max m and
// the sum l of the shifted exponentials, as baseline_row computes them. n >= 1.
void baseline_weights(const RowInput& in, Format storage, Format accumulate, std::vector<double>& p,
                      double& m, double& l);

// The plain kernel's output row from its stored weights p: o_c = fl_out(sum_a fl_a(p_j v_jc)).
void baseline_pv(const RowInput& in, const std::vector<double>& p, Format storage,
                 Format accumulate, std::vector<double>& o);

// The plain kernel's row o (d_v values) and lse; `t` is scratch. q, k, v of `in` must be
// representable in `storage`. A row with n == 0 gives zeros and lse = -inf.
void baseline_row(const RowInput& in, Format storage, Format accumulate, std::vector<double>& o,
                  double& lse, std::vector<double>& t);

}  // namespace attnspec::kernels
