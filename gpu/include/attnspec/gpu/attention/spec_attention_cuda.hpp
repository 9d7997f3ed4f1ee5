// CUDA twin of the SpecA forward (lib: attention/attention.hpp, multihead_forward): the output
// [A_1 ... A_H] (N x H d) of a multi-head layer at its effective weights W + C, with its biases.
// Device path: W + C by a kernel, Q|K|V = X [W_eff] + 1 b^T by one cuBLAS GEMM, the transposed
// logits s K_h Q_h^T by a strided-batched GEMM over heads, a fused row softmax (max-shift, exp,
// sum, normalise; fixed-order reduction, gpu/src/attention/softmax_logic.hpp), then S_h V_h by a
// second strided-batched GEMM. Heads are processed in groups so the logits stay under a budget.
// Host wrapper gpu/src/attention/spec_attention_cuda.cpp, kernels spec_attention_cuda.cu; a
// build without CUDA throws Error(NoDevice) (exit 69).
#pragma once
#include <Eigen/Dense>

#include "attnspec/attention/attention.hpp"
#include "attnspec/gpu/base/context.hpp"

namespace attnspec::gpu {

// Device bytes of the forward pass (inputs, projections, output and one group of logits) and the
// limit on one group of logits: an input whose single head's N x N logits exceed it is refused
// with Error(DataError) (exit 65) before allocating.
inline constexpr double kSpecAttentionLogitsBudget = 4.0 * 1024 * 1024 * 1024;
double spec_attention_device_bytes(long N, long D, long d, long H, int scalar_bytes);

// fp64: every step in double. Validates (DataError); O(N D H d + H N^2 d) flops.
Eigen::MatrixXd multihead_forward(Context& ctx, const MultiHead& m);
// fp32: inputs rounded to float, every step in float (GEMM accumulation and softmax included).
Eigen::MatrixXf multihead_forward_fp32(Context& ctx, const MultiHead& m);

}  // namespace attnspec::gpu
