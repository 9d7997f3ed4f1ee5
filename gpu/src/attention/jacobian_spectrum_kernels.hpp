// The kappa(J) twin's kernel bodies and launches, written once against the thread-context
// interface (attnspec/gpu/base/cpu_grid.hpp): jacobian_spectrum_cuda.cu runs them on the device
// through DeviceGrid, `gpu-check --emulate` (jacobian_spectrum_check_common.cpp) on the CPU grid
// runner. The arithmetic is jacobian_spectrum_logic.hpp's.
//   p_factors: a grid-stride loop over the Nd x N entries of P_all.
//   gram_combine: one block of kCombineThreads threads per kTile x kTile tile of the (Nd - cp N) x
//     N slice of block column cp (a one-dimensional grid of gx gy tiles, tile b at (b % gx,
//     b / gx)); the tile's entries of the N x N factors XX, QQ, VV are staged in shared memory
//     (row r of the slice reads row (cp N + r) % N of them), then combined.
#pragma once
#include "attnspec/gpu/base/hd.hpp"
#include "jacobian_spectrum_logic.hpp"

namespace attnspec::gpu::gram_logic {

constexpr int kCombineThreads = 256;  // 8 warps per kTile x kTile tile

// Runner-only planted faults (gpu-check's index-math and no-barrier, planted on the CPU grid
// runner only: `gpu-check --emulate`, the CPU suite; the device launches pass none): p_factors
// splits the row of P_all as i d + c instead of c N + i (stays inside the operands), and the
// combine leaves out the barrier between staging the factor tiles and reading them.
constexpr int kFaultNone = 0;
constexpr int kFaultRowSplit = 1;
constexpr int kFaultNoBarrier = 2;

struct PFactorsBody {
    const double *S, *V, *A;
    double* P;
    long N, d;
    int fault;  // kFault*
    template <class T>
    ATTNSPEC_HD void operator()(const T& t) const {
        const long Nd = N * d, total = Nd * N;
        const bool split = fault == kFaultRowSplit;
        for (long e = t.block() * t.block_dim() + t.thread(); e < total;
             e += t.grid_dim() * t.block_dim()) {
            const long row = e % Nd, k = e / Nd;
            const long c = split ? row % d : row / N, i = split ? row / d : row % N;
            P[e] = p_entry(S[i + k * N], V[k + c * N], A[i + c * N]);
        }
    }
};

// Shared memory: the XX, QQ and VV tiles, kTile x (kTile + 1) doubles each (dynamic). Loaded 8
// columns per pass (thread t: row t % kTile, column t / kTile + 8 k), combined 4 adjacent columns
// per warp (column 4 (t / kTile) + k). Compiled with __launch_bounds__(kCombineThreads); the
// launch uses exactly kCombineThreads threads.
struct GramCombineBody {
    static constexpr int kMaxThreads = kCombineThreads;
    static constexpr int kLd = kTile + 1;
    static constexpr long kSharedDoubles = 3L * kTile * kLd;
    double* G;
    long Nd;
    const double *XX, *QQ, *VV, *T;
    long ldT, N, cp, rows, gx, gy;
    bool skip_last_tile, drop_v_term;
    int fault;  // kFault*
    template <class Th>
    ATTNSPEC_HD void operator()(const Th& t) const {
        const long bx = t.block() % gx, by = t.block() / gx;
        if (!tile_active(bx, by, gx, gy, skip_last_tile)) return;  // the whole block
        constexpr int warps = kCombineThreads / kTile, passes = kTile / warps;
        double* sxx = t.template shared<double>();
        double *sqq = sxx + kTile * kLd, *svv = sqq + kTile * kLd;
        const int lane = int(t.thread()) % kTile, warp = int(t.thread()) / kTile;
        const long r = bx * kTile + lane, R = cp * N + r, i = R % N;
        for (int k = 0; k < passes; ++k) {
            const int c = warp + warps * k;
            const long j = by * kTile + c;
            if (r < rows && j < N) {
                sxx[c * kLd + lane] = XX[i + j * N];
                sqq[c * kLd + lane] = QQ[i + j * N];
                svv[c * kLd + lane] = VV[i + j * N];
            }
        }
        if (fault != kFaultNoBarrier) t.sync();
        for (int k = 0; k < passes; ++k) {
            const int c = passes * warp + k;
            const long j = by * kTile + c;
            if (r < rows && j < N) {
                double* g = G + R + (cp * N + j) * Nd;
                *g = gram_entry(sxx[c * kLd + lane], *g, sqq[c * kLd + lane], T[r + j * ldT],
                                svv[c * kLd + lane], R / N == cp, drop_v_term);
            }
        }
    }
};

template <class Grid>
void launch_p_factors(Grid& grid, const double* S, const double* V, const double* A, double* P_all,
                      long N, long d, int fault = kFaultNone) {
    const long total = N * d * N;
    if (total <= 0) return;
    const long want = (total + 255) / 256, blocks = want < 65535L * 32 ? want : 65535L * 32;
    grid(blocks, 256, 0, PFactorsBody{S, V, A, P_all, N, d, fault}, "Gram factor kernel launch");
}

template <class Grid>
void launch_gram_combine(Grid& grid, double* G, long Nd, const double* XX, const double* QQ,
                         const double* VV, const double* T, long ldT, long N, long cp,
                         bool skip_last_tile, bool drop_v_term, int fault = kFaultNone) {
    const long rows = Nd - cp * N;
    if (rows <= 0 || N <= 0) return;
    const long gx = (rows + kTile - 1) / kTile, gy = (N + kTile - 1) / kTile;
    grid(gx * gy, kCombineThreads, sizeof(double) * GramCombineBody::kSharedDoubles,
         GramCombineBody{G, Nd, XX, QQ, VV, T, ldT, N, cp, rows, gx, gy, skip_last_tile,
                         drop_v_term, fault},
         "Gram combine kernel launch");
}

}  // namespace attnspec::gpu::gram_logic
