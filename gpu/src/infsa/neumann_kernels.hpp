// The Neumann twin's kernel bodies and launches, written once against the thread-context
// interface (attnspec/gpu/base/cpu_grid.hpp): neumann_cuda.cu runs them on the device through
// DeviceGrid, `gpu-check --emulate` (neumann_check_common.cpp) on the CPU grid runner. Grid-stride
// loops over the n x n (or len) entries, the per-element arithmetic of neumann_logic.hpp.
#pragma once
#include "attnspec/gpu/base/hd.hpp"
#include "neumann_logic.hpp"

namespace attnspec::gpu::neumann_logic {

constexpr int kThreads = 256;
constexpr long kMaxBlocks = 1024;  // the grid-stride loop covers the rest

inline long blocks_for(long total) {
    const long want = (total + kThreads - 1) / kThreads;
    return want < kMaxBlocks ? want : kMaxBlocks;
}

// M = I - gamma Â, element by element (dropped_diag: the planted fault, -1 normally).
struct FormMBody {
    const double* A;
    double* M;
    double gamma;
    long n, total, dropped_diag;
    template <class T>
    ATTNSPEC_HD void operator()(const T& t) const {
        for (long i = t.block() * t.block_dim() + t.thread(); i < total;
             i += t.grid_dim() * t.block_dim())
            form_m(A, M, gamma, n, i, dropped_diag);
    }
};

// R = B - (X - GAX) over `total` entries (GAX = gamma Â X): the residual B - M X.
struct ResidualBody {
    const double *B, *X, *GAX;
    double* R;
    long total;
    template <class T>
    ATTNSPEC_HD void operator()(const T& t) const {
        for (long i = t.block() * t.block_dim() + t.thread(); i < total;
             i += t.grid_dim() * t.block_dim())
            R[i] = residual_entry(B[i], X[i], GAX[i]);
    }
};

template <class Grid>
void launch_form_m(Grid& grid, const double* A, double* M, double gamma, long n,
                   long dropped_diag) {
    const long total = n * n;
    if (total == 0) return;
    grid(blocks_for(total), kThreads, 0, FormMBody{A, M, gamma, n, total, dropped_diag},
         "form_m launch");
}

template <class Grid>
void launch_residual(Grid& grid, const double* B, const double* X, const double* GAX, double* R,
                     long len) {
    if (len == 0) return;
    grid(blocks_for(len), kThreads, 0, ResidualBody{B, X, GAX, R, len}, "residual launch");
}

}  // namespace attnspec::gpu::neumann_logic
