// Kernels of the SpecA twin: effective weights, bias broadcast, fused row softmax. The bodies and
// their launches are attention_kernels.hpp, written once against the thread-context interface:
// here they run through DeviceGrid, in `gpu-check --emulate` on the CPU grid runner. The GEMMs
// are cuBLAS calls in attention_cuda.cpp.
#include "../base/device_grid.hpp"
#include "attention_kernels.hpp"
#include "attention_launch.hpp"

namespace attnspec::gpu::attn {

void launch_effective_weights(const double* W, const double* C, double* out, long n, bool drop,
                              CUstream_st* stream) {
    DeviceGrid grid{stream};
    effective_weights(grid, W, C, out, n, drop);
}
void launch_effective_weights(const float* W, const float* C, float* out, long n, bool drop,
                              CUstream_st* stream) {
    DeviceGrid grid{stream};
    effective_weights(grid, W, C, out, n, drop);
}
void launch_fill_columns(double* P, const double* b, long rows, long cols, CUstream_st* stream) {
    DeviceGrid grid{stream};
    fill_columns(grid, P, b, rows, cols);
}
void launch_fill_columns(float* P, const float* b, long rows, long cols, CUstream_st* stream) {
    DeviceGrid grid{stream};
    fill_columns(grid, P, b, rows, cols);
}
void launch_softmax_rows(double* L, long n, long count, bool skip_last_tile, CUstream_st* stream) {
    DeviceGrid grid{stream};
    softmax_rows(grid, L, n, count, skip_last_tile);
}
void launch_softmax_rows(float* L, long n, long count, bool skip_last_tile, CUstream_st* stream) {
    DeviceGrid grid{stream};
    softmax_rows(grid, L, n, count, skip_last_tile);
}

}  // namespace attnspec::gpu::attn
