// The kappa(J) twin's kernel bodies and launches, written once against the thread-context
// interface (attnspec/gpu/base/cpu_grid.hpp): jacobian_spectrum_cuda.cu runs them on the device
// through DeviceGrid, `gpu-check --emulate` (jacobian_spectrum_check_common.cpp) on the CPU grid
// runner. The arithmetic is jacobian_spectrum_logic.hpp's.
//   p_factors: a grid-stride loop over the Nd x N entries of P_all.
//   gram_combine: one block of kTile x kTile threads per tile of the (Nd - cp N) x N slice of
//     block column cp (a one-dimensional grid of gx gy tiles, tile b at (b % gx, b / gx); thread
//     t at (t % kTile, t / kTile) in it).
#pragma once
#include "attnspec/gpu/base/hd.hpp"
#include "jacobian_spectrum_logic.hpp"

namespace attnspec::gpu::gram_logic {

struct PFactorsBody {
    const double *S, *V, *A;
    double* P;
    long N, d;
    template <class T>
    ATTNSPEC_HD void operator()(const T& t) const {
        const long Nd = N * d, total = Nd * N;
        for (long e = t.block() * t.block_dim() + t.thread(); e < total;
             e += t.grid_dim() * t.block_dim()) {
            const long row = e % Nd, k = e / Nd, c = row / N, i = row % N;
            P[e] = p_entry(S[i + k * N], V[k + c * N], A[i + c * N]);
        }
    }
};

struct GramCombineBody {
    double* G;
    long Nd;
    const double *XX, *QQ, *VV, *T;
    long ldT, N, cp, rows, gx, gy;
    bool skip_last_tile, drop_v_term;
    template <class Th>
    ATTNSPEC_HD void operator()(const Th& t) const {
        const long bx = t.block() % gx, by = t.block() / gx;
        if (!tile_active(bx, by, gx, gy, skip_last_tile)) return;
        const long r = bx * kTile + t.thread() % kTile;
        const long j = by * kTile + t.thread() / kTile;
        if (r < rows && j < N) combine_entry(G, Nd, XX, QQ, VV, T, ldT, N, cp, r, j, drop_v_term);
    }
};

template <class Grid>
void launch_p_factors(Grid& grid, const double* S, const double* V, const double* A, double* P_all,
                      long N, long d) {
    const long total = N * d * N;
    if (total <= 0) return;
    const long want = (total + 255) / 256, blocks = want < 65535L * 32 ? want : 65535L * 32;
    grid(blocks, 256, 0, PFactorsBody{S, V, A, P_all, N, d}, "Gram factor kernel launch");
}

template <class Grid>
void launch_gram_combine(Grid& grid, double* G, long Nd, const double* XX, const double* QQ,
                         const double* VV, const double* T, long ldT, long N, long cp,
                         bool skip_last_tile, bool drop_v_term) {
    const long rows = Nd - cp * N;
    if (rows <= 0 || N <= 0) return;
    const long gx = (rows + kTile - 1) / kTile, gy = (N + kTile - 1) / kTile;
    grid(gx * gy, kTile * kTile, 0,
         GramCombineBody{G, Nd, XX, QQ, VV, T, ldT, N, cp, rows, gx, gy, skip_last_tile,
                         drop_v_term},
         "Gram combine kernel launch");
}

}  // namespace attnspec::gpu::gram_logic
