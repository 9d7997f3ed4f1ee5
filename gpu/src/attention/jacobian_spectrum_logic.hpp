// Per-entry and per-tile arithmetic of the kappa(J) twin's Gram assembly
// (jacobian_spectrum_cuda.cu), shared with the CPU test suite (tests/cpu/attention/
// test_jacobian_spectrum_logic.cpp emulates the grid). The formulas are those of
// jacobian_gram_outer (lib/src/attention/jacobian_ops.cpp, jacobian.hpp):
//   G = J J^T (Nd x Nd), block (c, c') = XX o (Z_c Z_c'^T) + QQ o (Y_c Y_c'^T) + [c = c'] VV
// with P^c_ik = S_ik (V_kc - A_ic), Z_c = P^c K, Y_c = P^c Fx (Fx Fx^T = X X^T), XX = s^2 X X^T,
// QQ = s^2 Q Q^T, VV = (S X)(S X)^T. Rows c N + i, column-major, lower block triangle only.
#pragma once
#include "attnspec/gpu/base/hd.hpp"

namespace attnspec::gpu::gram_logic {

// Square tiles of the combine step over one block column (rows x N).
constexpr int kTile = 32;

// P^c_ik = S_ik (V_kc - A_ic).
ATTNSPEC_HD double p_entry(double s_ik, double v_kc, double a_ic) { return s_ik * (v_kc - a_ic); }

// One Gram entry of block (c, c'), given ZZ = (Z_c Z_c'^T)_ij, T = (Y_c Y_c'^T)_ij and the N x N
// factors at (i, j). The planted fault dropped_term leaves J_V J_V^T (the VV term) out.
ATTNSPEC_HD double gram_entry(double xx, double zz, double qq, double t, double vv,
                              bool diagonal_block, bool drop_v_term) {
    double g = xx * zz + qq * t;
    if (diagonal_block && !drop_v_term) g += vv;
    return g;
}

// Whether tile (bx, by) of a gx x gy tiling is combined; the planted fault off_by_one_tile skips
// the last one (bx = gx - 1, by = gy - 1).
ATTNSPEC_HD bool tile_active(long bx, long by, long gx, long gy, bool skip_last_tile) {
    return !(skip_last_tile && bx == gx - 1 && by == gy - 1);
}

// Block column c' combine: entry (r, j) of the (Nd - c'N) x N slice starting at row c'N, with
// G_slice holding ZZ on entry. Index arithmetic: global row R = c'N + r, block c = R / N, i = R %
// N.
ATTNSPEC_HD void combine_entry(double* G, long ldG, const double* XX, const double* QQ,
                               const double* VV, const double* T, long ldT, long N, long cp, long r,
                               long j, bool drop_v_term) {
    const long R = cp * N + r, c = R / N, i = R % N;
    double* g = G + R + (cp * N + j) * ldG;
    *g = gram_entry(XX[i + j * N], *g, QQ[i + j * N], T[r + j * ldT], VV[i + j * N], c == cp,
                    drop_v_term);
}

}  // namespace attnspec::gpu::gram_logic
