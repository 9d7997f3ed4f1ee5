// The perron_tiled twin's kernel body and launch, written once against the thread-context
// interface (attnspec/gpu/base/cpu_grid.hpp): relu_kernel_cuda.cu runs them on the device through
// DeviceGrid (gpu/src/base/device_grid.hpp), `gpu-check --emulate` and the CPU suite on CpuGrid
// (relu_kernel_check_common.cpp, tests/cpu/infsa/emulated_relu_op.hpp).
//
// A block owns kTileRows output rows and walks the columns in tiles of kTileCols (column order).
// For each column tile the scores S = R_rows C_cols^T are accumulated over d in slices of kDepth:
// the slice of the block's rows and of the tile's columns is staged in shared memory (coalesced:
// consecutive threads read consecutive rows of the column-major N x d operands; rows >= N and
// l >= d staged as 0, which adds exact zeros), a barrier, then each thread updates its 4 x 4
// scores (rows ty + 16 a, columns tx + 16 b) from shared memory: 8 shared loads per 16 FMAs, each
// staged value read by 16 threads, each global value loaded once per block and column tile. After
// the last slice each thread adds relu(s) x_c and relu(s)^2 for its 16 scores; after the last
// tile the 16 threads of a row (an aligned 16-lane segment) combine their partials by the warp
// sum's butterfly, and the segment's lane 0 writes z[r], f[r].
//
// Arithmetic and bounds (relu_kernel_logic.hpp): each score is the d products summed in index
// order (FMA), |fl s - s| <= gamma_d sum |R_rl C_cl|, as before; each row's N terms are summed as
// ceil(N / 16) sequential adds per thread then a 4-level butterfly, a depth <= N + 4, so the
// gamma_{N+4} of enclose_entry (and gamma_{2N+4} of the Frobenius sum over rows) still hold; the
// order is fixed and no atomics are used: deterministic.
//
// Planted faults: gpu-check's off_by_one_tile leaves out the last column tile, dropped_term column
// N - 1 (staged as zeros); the runner-only ones (infsa_faults.hpp) read the staged tiles
// row-major (kFaultTokenStride: leading dimension d instead of N, still inside the operands) and
// leave out the barrier after staging (kFaultNoBarrier).
// Barriers: one after staging a slice, one after using it (and, on the tile's last slice, x's
// staged tile), so the next staging never overwrites what a thread still reads.
#pragma once
#include <cstddef>

#include "attnspec/gpu/base/hd.hpp"
#include "relu_kernel_logic.hpp"

namespace attnspec::gpu::perron_logic {

constexpr int kTileRows = 64;  // output rows per block
constexpr int kTileCols = 64;  // columns per tile
constexpr int kDepth = 16;     // d entries per staged slice
constexpr int kTileThreads = 256;
constexpr int kSide = 16;  // threads per row of the thread grid (kSide x kSide = kTileThreads)
constexpr int kMicro = 4;  // scores per thread along rows and along columns
static_assert(kSide * kSide == kTileThreads && kSide * kMicro == kTileRows &&
                  kSide * kMicro == kTileCols,
              "thread grid and tile shapes must agree");

// Shared memory: the rows' slice [kDepth][kTileRows], the columns' [kDepth][kTileCols], x's tile.
constexpr std::size_t kReluShared = sizeof(double) * (kDepth * (kTileRows + kTileCols) + kTileCols);

// Column tiles of width kTileCols that the blocks visit; off_by_one_tile leaves out the last.
ATTNSPEC_HD long column_tiles(long N, int fault) { return tiles_visited(N, kTileCols, fault); }

// Element (i, l) of a column-major N x d operand, or 0 outside it; under kFaultTokenStride read as
// row-major (the layout mistaken: i d + l, inside the operand).
ATTNSPEC_HD double staged(const double* M, long N, long d, long i, long l, int fault) {
    if (i >= N || l >= d) return 0.0;
    return fault == infsa_logic::kFaultTokenStride ? M[i * d + l] : M[i + l * N];
}

// z[r] = sum_c relu(R_r . C_c) x_c, f[r] = sum_c relu(R_r . C_c)^2 for the block's rows r < N.
struct TileBody {
    static constexpr int kMaxThreads = kTileThreads;  // __launch_bounds__ on the device
    const double* R;
    const double* C;
    long N, d;
    const double* x;
    int fault;
    double* z;
    double* f;

    template <class T>
    ATTNSPEC_HD void operator()(const T& t) const {
        double* Rs = t.template shared<double>();  // [kDepth][kTileRows]
        double* Cs = Rs + kDepth * kTileRows;      // [kDepth][kTileCols]
        double* xs = Cs + kDepth * kTileCols;      // [kTileCols]
        const int tid = int(t.thread()), tx = tid % kSide, ty = tid / kSide;
        const long r0 = t.block() * kTileRows;
        const long tiles = column_tiles(N, fault);
        const bool drop = fault == infsa_logic::kFaultDroppedTerm;
        double zp[kMicro] = {0, 0, 0, 0}, fp[kMicro] = {0, 0, 0, 0};
        for (long tile = 0; tile < tiles; ++tile) {
            const long c0 = tile * kTileCols;
            double s[kMicro][kMicro] = {};
            for (long l0 = 0; l0 < d; l0 += kDepth) {
                for (int e = tid; e < kDepth * kTileRows; e += kTileThreads) {
                    const int l = e / kTileRows, i = e % kTileRows;
                    Rs[e] = staged(R, N, d, r0 + i, l0 + l, fault);
                    const long c = c0 + i;  // kTileCols == kTileRows
                    Cs[e] = drop && c == N - 1 ? 0.0 : staged(C, N, d, c, l0 + l, fault);
                }
                if (l0 == 0 && tid < kTileCols) xs[tid] = c0 + tid < N ? x[c0 + tid] : 0.0;
                if (fault != infsa_logic::kFaultNoBarrier) t.sync();
                const long depth = d - l0 < kDepth ? d - l0 : kDepth;
#if defined(__CUDA_ARCH__)
#pragma unroll 4
#endif
                for (long l = 0; l < depth; ++l) {
                    double a[kMicro], b[kMicro];
                    for (int m = 0; m < kMicro; ++m) a[m] = Rs[l * kTileRows + ty + kSide * m];
                    for (int m = 0; m < kMicro; ++m) b[m] = Cs[l * kTileCols + tx + kSide * m];
                    for (int i = 0; i < kMicro; ++i)
                        for (int j = 0; j < kMicro; ++j) s[i][j] += a[i] * b[j];
                }
                if (l0 + kDepth >= d)  // the scores are complete: add their terms (reads xs)
                    for (int i = 0; i < kMicro; ++i)
                        for (int j = 0; j < kMicro; ++j) {
                            const double v = s[i][j] > 0 ? s[i][j] : 0.0;
                            zp[i] += v * xs[tx + kSide * j];
                            fp[i] += v * v;
                        }
                t.sync();  // every thread done with the slice (and xs) before the next is staged
            }
        }
        for (int i = 0; i < kMicro; ++i) {
            const double zr = t.warp_sum(zp[i], kSide), fr = t.warp_sum(fp[i], kSide);
            const long r = r0 + ty + kSide * i;
            if (tx == 0 && r < N) {
                z[r] = zr;
                f[r] = fr;
            }
        }
    }
};

// The launch on `grid` (DeviceGrid or CpuGrid): R, C column-major N x d, x, z, f of N entries.
template <class Grid>
void run_relu_rows(Grid& grid, const double* R, const double* C, long N, long d, const double* x,
                   int fault, double* z, double* f) {
    const long blocks = (N + kTileRows - 1) / kTileRows;
    grid(blocks, kTileThreads, kReluShared, TileBody{R, C, N, d, x, fault, z, f},
         "perron_tiled_cuda: kernel launch");
}

}  // namespace attnspec::gpu::perron_logic
