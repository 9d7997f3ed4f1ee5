// Raw-pointer launcher of the tiled ReLU operator kernel (relu_kernel_cuda.cu), called by the
// host wrapper relu_kernel_cuda.cpp. No Eigen, no CUDA header.
#pragma once

struct CUstream_st;

namespace attnspec::gpu::detail {

// z[r] = sum_c relu(R_r . C_c) x_c and f[r] = sum_c relu(R_r . C_c)^2 for r < N (device arrays;
// R, C column-major N x d). The kernel's tiles are fixed (relu_kernel_kernels.hpp: 64 x 64);
// `fault`: infsa_logic::kFault*. Launch errors throw Error(Internal).
void launch_relu_rows(CUstream_st* stream, const double* R, const double* C, long N, long d,
                      const double* x, int fault, double* z, double* f);

}  // namespace attnspec::gpu::detail
