// Kernel launchers of the SpecA forward twin (attention_cuda.cu), declared with raw device pointers
// so the Eigen host wrapper (attention_cuda.cpp, g++) calls them without CUDA headers. Every
// launcher enqueues on `stream` and checks the launch (Error(Internal) on failure); none
// synchronises.
#pragma once
#include "attnspec/gpu/base/context.hpp"

namespace attnspec::gpu::attn {

// out[k] = W[k] + C[k] for k < n (C left out when drop_correction).
void launch_effective_weights(const double* W, const double* C, double* out, long n,
                              bool drop_correction, CUstream_st* stream);
void launch_effective_weights(const float* W, const float* C, float* out, long n,
                              bool drop_correction, CUstream_st* stream);
// P (rows x cols, column-major, ld rows): P(i, j) = b[j] (the bias broadcast a GEMM adds to).
void launch_fill_columns(double* P, const double* b, long rows, long cols, CUstream_st* stream);
void launch_fill_columns(float* P, const float* b, long rows, long cols, CUstream_st* stream);
// Softmax of each of `count` contiguous rows of length n, in place (attention_logic.hpp).
void launch_softmax_rows(double* L, long n, long count, bool skip_last_tile, CUstream_st* stream);
void launch_softmax_rows(float* L, long n, long count, bool skip_last_tile, CUstream_st* stream);

}  // namespace attnspec::gpu::attn
