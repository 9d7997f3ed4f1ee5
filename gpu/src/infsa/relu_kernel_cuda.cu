// Matrix-free tiled ReLU operator on the device (CPU reference: lib/src/infsa/relu_kernel.cpp):
// 64 x 64 score tiles staged through shared memory, computed on the fly (never N x N in memory).
// The kernel body and its launch are relu_kernel_kernels.hpp, written once against the
// thread-context interface: here they run through DeviceGrid, in `gpu-check --emulate` on the CPU
// grid runner.
#include <cuda_runtime.h>

#include "../base/device_grid.hpp"
#include "relu_kernel_kernels.hpp"
#include "relu_kernel_launch.hpp"

namespace attnspec::gpu::detail {

void launch_relu_rows(CUstream_st* stream, const double* R, const double* C, long N, long d,
                      const double* x, int fault, double* z, double* f) {
    DeviceGrid grid{stream};
    perron_logic::run_relu_rows(grid, R, C, N, d, x, fault, z, f);
}

}  // namespace attnspec::gpu::detail
