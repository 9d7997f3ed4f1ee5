// The Neumann twin's kernel bodies and launches, written once against the thread-context
// interface (attnspec/gpu/base/cpu_grid.hpp): neumann_cuda.cu runs them on the device through
// DeviceGrid, `gpu-check --emulate` (neumann_check_common.cpp) on the CPU grid runner. Grid-stride
// loops over the n x n (or len) entries, the per-element arithmetic of neumann_logic.hpp; the
// residual also reduces sum r^2 over each block in shared memory (one partial per block).
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
// The residual's partials for `len` entries (launch_residual).
inline long residual_blocks(long len) { return len > 0 ? blocks_for(len) : 0; }

// Runner-only planted faults (gpu-check's index-math and no-barrier, planted on the CPU grid
// runner only: `gpu-check --emulate`, the CPU suite; the device launches pass none): form_m reads
// Â transposed (entry t from a_ji, a row / column swap), and the residual's block sum leaves out
// the barrier between the per-thread partials' stores and the tree that adds them.
constexpr int kFaultNone = 0;
constexpr int kFaultTransposedA = 1;
constexpr int kFaultNoBarrier = 2;

// M = I - gamma Â, element by element (dropped_diag: the planted fault, -1 normally).
struct FormMBody {
    const double* A;
    double* M;
    double gamma;
    long n, total, dropped_diag;
    int fault;  // kFault*
    template <class T>
    ATTNSPEC_HD void operator()(const T& t) const {
        for (long i = t.block() * t.block_dim() + t.thread(); i < total;
             i += t.grid_dim() * t.block_dim()) {
            if (fault == kFaultTransposedA)  // a_ji for entry (i % n, i / n): rows and columns
                M[i] =
                    identity_minus_gamma(A[i / n + (i % n) * n], gamma, i % n, i / n, dropped_diag);
            else
                form_m(A, M, gamma, n, i, dropped_diag);
        }
    }
};

// partial[b] = sum of r_i^2 over block b's entries of the residual r = B - (X - GAX) (GAX =
// gamma Â X, `total` entries): each thread sums its grid-stride entries, the block adds the
// kThreads partials by the fixed tree in shared memory (kThreads doubles, dynamic). The host adds
// the blocks' partials in block order: ||B - M X||_F^2 without the residual ever stored. Compiled
// with __launch_bounds__(kThreads); the launch uses exactly kThreads threads.
struct ResidualBody {
    static constexpr int kMaxThreads = kThreads;
    const double *B, *X, *GAX;
    double* partial;
    long total;
    int fault;  // kFault*
    template <class T>
    ATTNSPEC_HD void operator()(const T& t) const {
        double* buf = t.template shared<double>();
        const int k = int(t.thread());
        double s = 0;
        for (long i = t.block() * t.block_dim() + k; i < total; i += t.grid_dim() * t.block_dim()) {
            const double r = residual_entry(B[i], X[i], GAX[i]);
            s += r * r;
        }
        buf[k] = s;
        if (fault != kFaultNoBarrier) t.sync();
        for (int h = kThreads / 2; h > 0; h /= 2) {
            if (k < h) buf[k] += buf[k + h];
            t.sync();
        }
        if (k == 0) partial[t.block()] = buf[0];
    }
};

template <class Grid>
void launch_form_m(Grid& grid, const double* A, double* M, double gamma, long n, long dropped_diag,
                   int fault = kFaultNone) {
    const long total = n * n;
    if (total == 0) return;
    grid(blocks_for(total), kThreads, 0, FormMBody{A, M, gamma, n, total, dropped_diag, fault},
         "form_m launch");
}

// The residual's partials: blocks_for(len) doubles at `partial` (none for len 0).
template <class Grid>
void launch_residual(Grid& grid, const double* B, const double* X, const double* GAX,
                     double* partial, long len, int fault = kFaultNone) {
    if (len == 0) return;
    grid(blocks_for(len), kThreads, sizeof(double) * kThreads,
         ResidualBody{B, X, GAX, partial, len, fault}, "residual launch");
}

}  // namespace attnspec::gpu::neumann_logic
