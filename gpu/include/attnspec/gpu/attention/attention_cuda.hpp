// CUDA twin of the SpecA forward (lib: attention/attention.hpp, multihead_forward): the output
// [A_1 ... A_H] (N x H d) of a multi-head layer at its effective weights W + C, with its biases.
// Device path: W + C by a kernel, Q|K|V = X [W_eff] + 1 b^T by one cuBLAS GEMM, the transposed
// logits s K_h Q_h^T by a strided-batched GEMM over heads, a fused row softmax (max-shift, exp,
// sum, normalise; fixed-order reduction, gpu/src/attention/attention_logic.hpp), then S_h V_h by a
// second strided-batched GEMM. Heads are processed in groups so the logits stay under a budget.
// Host wrapper gpu/src/attention/attention_cuda.cpp, kernels attention_cuda.cu; a
// build without CUDA throws Error(NoDevice) (exit 69).
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <string>

#include "attnspec/attention/attention.hpp"
#include "attnspec/gpu/base/context.hpp"

namespace attnspec::gpu {

// Device bytes of the forward pass (inputs, projections, output and one group of logits) and the
// limit on one group of logits: an input whose single head's N x N logits exceed it is refused
// with Error(DataError) (exit 65) before allocating. Both builds (attention_common.cpp).
inline constexpr double kSpecAttentionLogitsBudget = 4.0 * 1024 * 1024 * 1024;
double spec_attention_device_bytes(long N, long D, long d, long H, int scalar_bytes);

// Tolerance of a twin's output against the CPU reference (multihead_forward, fp64), both builds:
// a first-order running-error bound on |A_gpu - A_exact| + the same for the fp64 reference.
// Per head, with M_Q = |X||W_Q + C_Q| + |b_Q| (likewise K, V): projections err <= gamma_{D+4} M
// (dot of length D, the bias, W + C, rounding the inputs to the twin's precision); logits
// |dL| <= s (gamma_{d+3} |Q||K|^T + gamma_{D+4} (M_Q |K|^T + |Q| M_K^T)) (the dot, the scale s,
// the max-shift counted twice); the softmax's relative sensitivity 2 max|dL|; S V and the
// normalisation gamma_{N+4}; V's own gamma_{D+4}: (2 max|dL| + gamma_{N+4} + gamma_{D+4})
// max(S M_V). O(H N^2 d) on the host.
struct SpecAttentionTolerance {
    double abs = 0;        // compare max|A_gpu - A_cpu| against this
    double scale = 0;      // max(S M_V) over heads
    double rel_bound = 0;  // the twin's bound / scale (u of its precision)
    std::string reason;
};
SpecAttentionTolerance spec_attention_tolerance(const MultiHead& m, double u_twin);

// The instances gpu-check and the logic tests use: random_multihead(N, D, d, H, seed, logit
// scale 1/sqrt(d)) with the SVD correction (Thm 3.5) on every weight and, when `biases`, N(0,
// 0.3^2) biases. Both builds.
MultiHead spec_attention_instance(long N, long D, long d, long H, std::uint64_t seed, bool biases);

// fp64: every step in double. Validates (DataError); O(N D H d + H N^2 d) flops.
Eigen::MatrixXd multihead_forward(Context& ctx, const MultiHead& m);
// fp32: inputs rounded to float, every step in float (GEMM accumulation and softmax included).
Eigen::MatrixXf multihead_forward_fp32(Context& ctx, const MultiHead& m);

// Device-resident form for repeated runs and benchmarks: the constructor validates and uploads
// the layer once (fp64 or fp32; the planted fault is read here); run() enqueues the forward
// (W + C, projections, logits, softmax, S V) on ctx's stream and synchronises; output() downloads
// the last result (as double). ctx must outlive the object.
class SpecAttentionRun {
  public:
    SpecAttentionRun(Context& ctx, const MultiHead& m, bool fp32);
    ~SpecAttentionRun();
    SpecAttentionRun(const SpecAttentionRun&) = delete;
    SpecAttentionRun& operator=(const SpecAttentionRun&) = delete;
    void run();
    Eigen::MatrixXd output() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace attnspec::gpu
