// Per-entry arithmetic of the matrix-free tiled ReLU operator on the device (the kernel body is
// relu_kernel_kernels.hpp), shared with the host enclosures (relu_kernel_common.cpp). A+ =
// ReLU(Q K^T / d_h) is never formed: the kernel computes the scores s_rc = R_r . C_c on the fly,
// tile by tile in shared memory, and accumulates z_r = sum_c relu(s_rc) x_c and f_r = sum_c
// relu(s_rc)^2 (for ||A+||_F). R, C are column-major N x d (leading dimension N): right products
// use R = Q, C = K; left (transposed) products R = K, C = Q. Fixed order, no atomics:
// deterministic.
#pragma once
#include <cmath>

#include "attnspec/gpu/base/hd.hpp"
#include "infsa_faults.hpp"

namespace attnspec::gpu::perron_logic {

using infsa_logic::kFaultDroppedTerm;
using infsa_logic::kFaultOffByOneTile;

// Column tiles of width T that the row loop visits; off_by_one_tile leaves out the last.
ATTNSPEC_HD long tiles_visited(long N, long T, int fault) {
    const long tiles = (N + T - 1) / T;
    return fault == kFaultOffByOneTile ? tiles - 1 : tiles;
}

// The enclosure of one entry of A+ x (or A+^T x), as lib/src/infsa/relu_kernel.cpp
// (ReluKernelOp::apply) sizes it: with z = the computed sum_c relu(fl s_rc) x_c,
//   |relu(s) - relu(fl s)| <= delta nr_r nc_c (ReLU 1-Lipschitz, delta = 2 gamma_{d+2}), summed:
//   pad_sum = (nc . x) delta (1 + gamma_{N+2}); the N non-negative terms within g = gamma_{N+4};
//   the scaling by inv_d = 1/d rounds once (2u outward). The order of the sum does not matter for
//   these bounds (any order of depth <= N + 4: the device's per-thread sums and 16-lane butterfly
//   have depth <= ceil(N / 16) + 4), so they hold for the device's tiles as for the CPU's dgemm.
struct Entry {
    double z, lo, hi;
};
ATTNSPEC_HD Entry enclose_entry(double z, double nr, double pad_sum, double g, double inv_d,
                                double u) {
    const double hi = (z * (1 + 2 * g) + nr * pad_sum) * inv_d * (1 + 2 * u);
    const double lo_raw = z * (1 - g) - nr * pad_sum;
    const double lo = (lo_raw > 0 ? lo_raw : 0.0) * inv_d * (1 - 2 * u);
    return {z * inv_d, lo, hi};
}

// ||A+||_F enclosure from sum_sq = the computed sum of relu(fl s)^2 (as
// ReluKernelOp::frobenius_from):
// ||relu(S) - relu(fl S)||_F <= delta ||nq|| ||nk||; the N^2 squares within g = gamma_{2N+4};
// sqrt and inv_d round once each (4u outward).
ATTNSPEC_HD Entry enclose_frobenius(double sum_sq, double delta, double nq_norm, double nk_norm,
                                    double g, double inv_d, double u) {
    const double F = std::sqrt(sum_sq);
    const double pad = delta * nq_norm * nk_norm * (1 + g);
    const double lo_raw = F * (1 - g) - pad;
    return {F * inv_d, (lo_raw > 0 ? lo_raw : 0.0) * inv_d * (1 - 4 * u),
            (F * (1 + 2 * g) + pad) * inv_d * (1 + 4 * u)};
}

}  // namespace attnspec::gpu::perron_logic
