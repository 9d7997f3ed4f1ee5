// Device kernels of the SVD twin: the R factors of a batched QR (svd_logic.hpp).
#include <cuda_runtime.h>

#include "../base/cuda_status.hpp"
#include "svd_launch.hpp"
#include "svd_logic.hpp"

namespace attnspec::gpu::svd_kernels {

namespace {
__global__ void extract_r_kernel(const double* qr, double* R, long m, long n, long total) {
    for (long t = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
         t += static_cast<long>(gridDim.x) * blockDim.x)
        svd_logic::extract_r(qr, R, m, n, t);
}
}  // namespace

void extract_r(const double* qr, double* R, long m, long n, long batch, CUstream_st* stream) {
    const long total = batch * n * n;
    if (total == 0) return;
    const int threads = 256;
    const long want = (total + threads - 1) / threads;
    const int blocks = static_cast<int>(want < 65535 ? want : 65535);
    extract_r_kernel<<<blocks, threads, 0, stream>>>(qr, R, m, n, total);
    status::check_launch("extract_r launch");
}

}  // namespace attnspec::gpu::svd_kernels
