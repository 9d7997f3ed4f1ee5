// Kernel launchers of the Jacobian-spectrum twin (jacobian_spectrum_cuda.cu), declared with raw
// device pointers so the Eigen host wrapper (jacobian_spectrum_cuda.cpp, g++) calls them without
// CUDA headers. Every launcher enqueues on `stream` and checks the launch (Error(Internal) on
// failure); none synchronises.
#pragma once
#include "attnspec/gpu/base/context.hpp"

namespace attnspec::gpu::attn {

// P_all (Nd x N, column-major): P_all(c N + i, k) = S(i, k) (V(k, c) - A(i, c)); S N x N, V and
// A N x d, all column-major.
void launch_p_factors(const double* S, const double* V, const double* A, double* P_all, long N,
                      long d, CUstream_st* stream);
// Combine block column cp of G (ld Nd), rows cp N .. Nd - 1, which hold Z Z^T on entry, with the
// N x N factors XX, QQ, VV and T = Y_slice Y_cp^T (ld ldT) (jacobian_spectrum_logic.hpp).
void launch_gram_combine(double* G, long Nd, const double* XX, const double* QQ, const double* VV,
                         const double* T, long ldT, long N, long cp, bool skip_last_tile,
                         bool drop_v_term, CUstream_st* stream);

}  // namespace attnspec::gpu::attn
