// Raw-pointer launchers of the Linear-InfSA kernels (linear_infsa_cuda.cu), called by the host
// wrapper linear_infsa_cuda.cpp. No Eigen, no CUDA header.
#pragma once
#include <cstddef>

struct CUstream_st;

namespace attnspec::gpu::detail {

enum class InfsaFormat { f64, f32, bf16, fp16 };

// Device workspace the launcher needs for H heads of N tokens of dimension d.
std::size_t linear_infsa_workspace_bytes(InfsaFormat f, long H, long N, long d);

// Q, K, V: device, [H][N][d] row-major in format f (16-bit formats: raw bit patterns).
// out: device doubles, [H][d] pooled p, then [H][d] q_bar, then [H] sum e, then [H] sum s.
// `fault`: infsa_logic::kFault*. Enqueued on `stream`; launch errors throw Error(Internal).
void launch_linear_infsa(CUstream_st* stream, InfsaFormat f, const void* Q, const void* K,
                         const void* V, long H, long N, long d, double gamma, double eps, int fault,
                         void* workspace, double* out);

}  // namespace attnspec::gpu::detail
