// Device kernels of the Neumann twin: forming I - gamma Â and the solve residual
// (neumann_logic.hpp).
#include <cuda_runtime.h>

#include "../base/cuda_status.hpp"
#include "neumann_launch.hpp"
#include "neumann_logic.hpp"

namespace attnspec::gpu::neumann_dev {

namespace {

__global__ void form_m_kernel(const double* A, double* M, double gamma, long n, long total,
                              long dropped_diag) {
    for (long t = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
         t += static_cast<long>(gridDim.x) * blockDim.x)
        neumann_logic::form_m(A, M, gamma, n, t, dropped_diag);
}

__global__ void residual_kernel(const double* B, const double* X, const double* GAX, double* R,
                                long total) {
    for (long t = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
         t += static_cast<long>(gridDim.x) * blockDim.x)
        R[t] = neumann_logic::residual_entry(B[t], X[t], GAX[t]);
}

int blocks_for(long total, int threads) {
    const long want = (total + threads - 1) / threads;
    return static_cast<int>(want < 65535 ? want : 65535);
}

}  // namespace

void form_m(const double* A, double* M, double gamma, long n, long dropped_diag,
            CUstream_st* stream) {
    const long total = n * n;
    if (total == 0) return;
    form_m_kernel<<<blocks_for(total, 256), 256, 0, stream>>>(A, M, gamma, n, total, dropped_diag);
    status::check_launch("form_m launch");
}

void residual(const double* B, const double* X, const double* GAX, double* R, long len,
              CUstream_st* stream) {
    if (len == 0) return;
    residual_kernel<<<blocks_for(len, 256), 256, 0, stream>>>(B, X, GAX, R, len);
    status::check_launch("residual launch");
}

}  // namespace attnspec::gpu::neumann_dev
