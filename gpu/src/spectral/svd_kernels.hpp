// The SVD twin's kernel body and launch, written once against the thread-context interface
// (attnspec/gpu/base/cpu_grid.hpp): svd_cuda.cu runs it on the device through DeviceGrid,
// `gpu-check --emulate` (svd_check_common.cpp) on the CPU grid runner. A grid-stride loop over
// the batch x n x n entries of the R factors, svd_logic::extract_r per entry.
#pragma once
#include "attnspec/gpu/base/hd.hpp"
#include "svd_logic.hpp"

namespace attnspec::gpu::svd_logic {

constexpr int kThreads = 256;
constexpr long kMaxBlocks = 1024;  // the grid-stride loop covers the rest

struct ExtractRBody {
    const double* qr;
    double* R;
    long m, n, total;
    template <class T>
    ATTNSPEC_HD void operator()(const T& t) const {
        for (long i = t.block() * t.block_dim() + t.thread(); i < total;
             i += t.grid_dim() * t.block_dim())
            extract_r(qr, R, m, n, i);
    }
};

// R (batch x n x n, stride n n) from geqrfBatched's output qr (batch x m x n, stride m n).
template <class Grid>
void launch_extract_r(Grid& grid, const double* qr, double* R, long m, long n, long batch) {
    const long total = batch * n * n;
    if (total == 0) return;
    const long want = (total + kThreads - 1) / kThreads;
    grid(want < kMaxBlocks ? want : kMaxBlocks, kThreads, 0, ExtractRBody{qr, R, m, n, total},
         "extract_r launch");
}

}  // namespace attnspec::gpu::svd_logic
