// Linear-InfSA CUDA twin (docs/MATH.md §3) of lib/include/attnspec/infsa/linear_infsa.hpp: the
// two sweeps (energies and central query; ReLU scores, L1 normalisation and value pooling; the
// broadcast output is p for every token), batched and multi-head, in float64, float32 and 16-bit
// inputs (bf16 / fp16 raw bit patterns, converted exactly) with float32 accumulation.
// Deterministic: fixed-order reductions (a warp per token; per warp in token order, then the
// warps in order within a chunk of 256 tokens, chunk order in double across chunks), no atomics.
// Sources: gpu/src/infsa/linear_infsa_cuda.{cu,cpp}; the kernels in
// gpu/src/infsa/linear_infsa_kernels.hpp, their arithmetic in linear_infsa_logic.hpp. A CPU-only
// build throws NoDevice (exit 69); d above 6143 throws DataError (shared memory).
#pragma once
#include <Eigen/Dense>
#include <cstdint>

#include "attnspec/gpu/base/context.hpp"
#include "attnspec/infsa/linear_infsa.hpp"

namespace attnspec::gpu {

// float64, one head: the twin of attnspec::linear_infsa (same failures: DataError on empty,
// mismatched or non-finite Q, K, V, gamma outside (0, 1), eps < 0).
LinearInfsaResult linear_infsa(Context& ctx, const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                               const Eigen::MatrixXd& V, const LinearInfsaOptions& opt = {});

// float32 heads [H][N][d] (host memory), P receives H x d: the twin of
// attnspec::linear_infsa_heads_f32 (same layout and failures; no thread count).
void linear_infsa_heads_f32(Context& ctx, const float* Q, const float* K, const float* V, long H,
                            long N, long d, const LinearInfsaOptions& opt, float* P);

// 16-bit inputs: raw bfloat16 or IEEE binary16 bit patterns, [H][N][d]; float32 accumulation.
enum class Input16 { bf16, fp16 };
const char* to_string(Input16 f);  // "bf16", "fp16"
void linear_infsa_heads_16(Context& ctx, Input16 fmt, const std::uint16_t* Q,
                           const std::uint16_t* K, const std::uint16_t* V, long H, long N, long d,
                           const LinearInfsaOptions& opt, float* P);

// Device-resident run (benchmarks): Q, K, V already on the device in `fmt`; `workspace` is grown
// as needed and kept; `out` (device doubles) receives [H][d] p, [H][d] q_bar, [H] sum e, [H] sum s.
// Enqueued on ctx.stream() without synchronising.
enum class InputFormat { f64, f32, bf16, fp16 };
void linear_infsa_heads_device(Context& ctx, InputFormat fmt, const void* Q, const void* K,
                               const void* V, long H, long N, long d, const LinearInfsaOptions& opt,
                               DeviceBuffer& workspace, DeviceBuffer& out);

// Bytes one call of the twin moves to and from device memory when each input element is read
// once (its kernels' design, gpu/src/infsa/linear_infsa_kernels.hpp): Q, K, V, the per-chunk
// partials written and read back in both sweeps, q_bar and the output. Both builds.
double linear_infsa_bytes_moved(InputFormat fmt, long H, long N, long d);

// Rounding bound (both builds; gpu/src/infsa/linear_infsa_common.cpp): per component l,
// an upper bound on |p_twin,l - p_exact,l| for the twin run with accumulator unit roundoff
// u_acc (2^-53 float64, 2^-24 float32) on these (exactly representable) inputs, plus the float64
// reference's own error. First-order propagation of gamma_n(u_acc) through e, q_bar, s, sum s and
// p (ReLU is 1-Lipschitz), doubled for the second-order terms; see the source for each step.
Eigen::VectorXd linear_infsa_error_bound(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                                         const Eigen::MatrixXd& V, const LinearInfsaOptions& opt,
                                         double u_acc);

}  // namespace attnspec::gpu
