// Device kernel of the SVD twin: the R factors of a batched QR, the body of svd_kernels.hpp
// (written once, also run on the CPU grid runner) launched through DeviceGrid.
#include <cuda_runtime.h>

#include "../base/device_grid.hpp"
#include "svd_kernels.hpp"
#include "svd_launch.hpp"

namespace attnspec::gpu::svd_kernels {

void extract_r(const double* qr, double* R, long m, long n, long batch, CUstream_st* stream) {
    DeviceGrid grid{stream};
    svd_logic::launch_extract_r(grid, qr, R, m, n, batch);
}

}  // namespace attnspec::gpu::svd_kernels
