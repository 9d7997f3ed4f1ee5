// Matrix-free tiled ReLU operator on the device (CPU reference: lib/src/infsa/relu_kernel.cpp):
// one thread per output row, the scores computed on the fly tile by tile (never N x N in memory),
// the arithmetic in relu_kernel_logic.hpp (ATTNSPEC_HD, run by the CPU suite in an emulated grid).
#include <cuda_runtime.h>

#include "../base/cuda_status.hpp"
#include "relu_kernel_launch.hpp"
#include "relu_kernel_logic.hpp"

namespace attnspec::gpu::detail {

namespace {

constexpr int kThreads = 128;

__global__ void relu_rows_kernel(const double* R, const double* C, long N, long d, long tile,
                                 const double* x, int fault, double* z, double* f) {
    const long r = long(blockIdx.x) * blockDim.x + threadIdx.x;
    if (r >= N) return;
    double fr = 0;
    z[r] = perron_logic::row_apply(R, C, N, d, tile, r, x, fault, &fr);
    f[r] = fr;
}

}  // namespace

void launch_relu_rows(CUstream_st* stream, const double* R, const double* C, long N, long d,
                      long tile, const double* x, int fault, double* z, double* f) {
    const long blocks = (N + kThreads - 1) / kThreads;
    relu_rows_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(R, C, N, d, tile, x, fault, z, f);
    status::check_launch("perron_tiled_cuda: kernel launch");
}

}  // namespace attnspec::gpu::detail
