// The perron_tiled twin's kernel body and launch, written once against the thread-context
// interface (attnspec/gpu/base/cpu_grid.hpp): relu_kernel_cuda.cu runs them on the device through
// DeviceGrid (gpu/src/base/device_grid.hpp), `gpu-check --emulate` on CpuGrid
// (relu_kernel_check_common.cpp). One thread per output row r, the arithmetic
// relu_kernel_logic.hpp's (row_apply: the scores on the fly, tile after tile, in column order).
#pragma once
#include "attnspec/gpu/base/hd.hpp"
#include "relu_kernel_logic.hpp"

namespace attnspec::gpu::perron_logic {

constexpr int kRowThreads = 128;

// z[r] = sum_c relu(R_r . C_c) x_c, f[r] = sum_c relu(R_r . C_c)^2 for the block's rows r < N.
struct RowsBody {
    const double* R;
    const double* C;
    long N, d, tile;
    const double* x;
    int fault;
    double* z;
    double* f;

    template <class T>
    ATTNSPEC_HD void operator()(const T& t) const {
        const long r = t.block() * t.block_dim() + t.thread();
        if (r >= N) return;
        double fr = 0;
        z[r] = row_apply(R, C, N, d, tile, r, x, fault, &fr);
        f[r] = fr;
    }
};

// The launch on `grid` (DeviceGrid or CpuGrid): R, C column-major N x d, x, z, f of N entries.
template <class Grid>
void run_relu_rows(Grid& grid, const double* R, const double* C, long N, long d, long tile,
                   const double* x, int fault, double* z, double* f) {
    const long blocks = (N + kRowThreads - 1) / kRowThreads;
    grid(blocks, kRowThreads, 0, RowsBody{R, C, N, d, tile, x, fault, z, f},
         "perron_tiled_cuda: kernel launch");
}

}  // namespace attnspec::gpu::perron_logic
