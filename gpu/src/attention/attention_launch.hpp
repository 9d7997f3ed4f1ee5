// Kernel launchers of the attention twins (spec_attention_cuda.cu, jacobian_spectrum_cuda.cu),
// declared with raw device pointers so the Eigen host wrappers (*_cuda.cpp, g++) call them
// without CUDA headers. Every launcher enqueues on `stream` and checks the launch
// (Error(Internal) on failure); none synchronises.
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
// Softmax of each of `count` contiguous rows of length n, in place (softmax_logic.hpp).
void launch_softmax_rows(double* L, long n, long count, bool skip_last_tile, CUstream_st* stream);
void launch_softmax_rows(float* L, long n, long count, bool skip_last_tile, CUstream_st* stream);

// P_all (Nd x N, column-major): P_all(c N + i, k) = S(i, k) (V(k, c) - A(i, c)); S N x N, V and
// A N x d, all column-major.
void launch_p_factors(const double* S, const double* V, const double* A, double* P_all, long N,
                      long d, CUstream_st* stream);
// Combine block column cp of G (ld Nd), rows cp N .. Nd - 1, which hold Z Z^T on entry, with the
// N x N factors XX, QQ, VV and T = Y_slice Y_cp^T (ld ldT) (jacobian_gram_logic.hpp).
void launch_gram_combine(double* G, long Nd, const double* XX, const double* QQ, const double* VV,
                         const double* T, long ldT, long N, long cp, bool skip_last_tile,
                         bool drop_v_term, CUstream_st* stream);

}  // namespace attnspec::gpu::attn
