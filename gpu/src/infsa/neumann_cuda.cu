// Device kernels of the Neumann twin: forming I - gamma Â and the solve residual, the bodies of
// neumann_kernels.hpp (written once, also run on the CPU grid runner) launched through DeviceGrid.
#include <cuda_runtime.h>

#include "../base/device_grid.hpp"
#include "neumann_kernels.hpp"
#include "neumann_launch.hpp"

namespace attnspec::gpu::neumann_dev {

void form_m(const double* A, double* M, double gamma, long n, long dropped_diag,
            CUstream_st* stream) {
    DeviceGrid grid{stream};
    neumann_logic::launch_form_m(grid, A, M, gamma, n, dropped_diag);
}

void residual(const double* B, const double* X, const double* GAX, double* partial, long len,
              CUstream_st* stream) {
    DeviceGrid grid{stream};
    neumann_logic::launch_residual(grid, B, X, GAX, partial, len);
}

}  // namespace attnspec::gpu::neumann_dev
