// Launchers of svd_cuda.cu (raw device pointers, no Eigen, no CUDA headers).
#pragma once

struct CUstream_st;

namespace attnspec::gpu::svd_kernels {

// R (batch x n x n) from geqrfBatched output qr (batch x m x n): svd_logic::extract_r per element.
void extract_r(const double* qr, double* R, long m, long n, long batch, CUstream_st* stream);

}  // namespace attnspec::gpu::svd_kernels
