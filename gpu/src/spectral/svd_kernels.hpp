// The SVD twin's kernel body and launch, written once against the thread-context interface
// (attnspec/gpu/base/cpu_grid.hpp): svd_cuda.cu runs it on the device through DeviceGrid,
// `gpu-check --emulate` (svd_check_common.cpp) on the CPU grid runner. The R factors copied tile
// by tile through shared memory, svd_logic::r_entry per entry.
#pragma once
#include "attnspec/gpu/base/hd.hpp"
#include "svd_logic.hpp"

namespace attnspec::gpu::svd_logic {

constexpr int kThreads = 256;
constexpr long kMaxBlocks = 1024;  // the block-stride loop covers the rest
constexpr int kRTile = 32;         // R is copied in kRTile x kRTile tiles through shared memory

// Runner-only planted faults (gpu-check's index-math and no-barrier, planted on the CPU grid
// runner only: `gpu-check --emulate`, the CPU suite; the device launch passes none): the tile's
// rows and columns swapped when it is read from qr (entry (i, j) read at (j, i): the lower
// triangle's Householder vectors land in R), and the barrier between the tile's load and its
// store left out.
constexpr int kFaultNone = 0;
constexpr int kFaultSwappedTile = 1;
constexpr int kFaultNoBarrier = 2;

// R (batch x n x n, stride n n) from geqrfBatched's qr (batch x m x n, stride m n), one
// kRTile x kRTile tile of one R per block iteration (a block-stride loop over batch x tn x tn
// tiles, tn = ceil(n / kRTile)): the block loads the tile's top-n rows of qr into shared memory
// (kRTile x (kRTile + 1) doubles, dynamic), 8 columns per pass (thread t: row t % 32, column
// t / 32 + 8 k), then each warp stores 4 adjacent columns of R (column 4 (t / 32) + k) through
// svd_logic::r_entry (the upper triangle, zeros below). Compiled with __launch_bounds__(kThreads);
// the launch uses exactly kThreads threads.
struct ExtractRBody {
    static constexpr int kMaxThreads = kThreads;
    const double* qr;
    double* R;
    long m, n, batch;
    int fault;  // kFault*
    template <class T>
    ATTNSPEC_HD void operator()(const T& t) const {
        double* tile = t.template shared<double>();
        constexpr int ld = kRTile + 1, lanes = kRTile, passes = kRTile * kRTile / kThreads;
        const int lane = int(t.thread()) % lanes, warp = int(t.thread()) / lanes;
        const long tn = (n + kRTile - 1) / kRTile, tiles = batch * tn * tn;
        for (long b = t.block(); b < tiles; b += t.grid_dim()) {
            const long mat = b / (tn * tn), i0 = (b % tn) * kRTile, j0 = (b / tn % tn) * kRTile;
            const double* a = qr + mat * m * n;
            for (int k = 0; k < passes; ++k) {
                const int c = warp + (kThreads / lanes) * k;
                const long i = i0 + lane, j = j0 + c;
                const bool swap = fault == kFaultSwappedTile;
                if (i < n && j < n) tile[c * ld + lane] = swap ? a[i * m + j] : a[j * m + i];
            }
            if (fault != kFaultNoBarrier) t.sync();
            for (int k = 0; k < passes; ++k) {
                const int c = passes * warp + k;
                const long i = i0 + lane, j = j0 + c;
                if (i < n && j < n) R[mat * n * n + j * n + i] = r_entry(i, j, tile[c * ld + lane]);
            }
            t.sync();  // the tile is read before the next iteration overwrites it
        }
    }
};

// R (batch x n x n, stride n n) from geqrfBatched's output qr (batch x m x n, stride m n).
template <class Grid>
void launch_extract_r(Grid& grid, const double* qr, double* R, long m, long n, long batch,
                      int fault = kFaultNone) {
    const long tn = (n + kRTile - 1) / kRTile, tiles = batch * tn * tn;
    if (tiles == 0) return;
    grid(tiles < kMaxBlocks ? tiles : kMaxBlocks, kThreads, sizeof(double) * kRTile * (kRTile + 1),
         ExtractRBody{qr, R, m, n, batch, fault}, "extract_r launch");
}

}  // namespace attnspec::gpu::svd_logic
