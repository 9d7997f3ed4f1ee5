// Per-element logic of the batched SVD twin (svd_cuda.cu), run by the CPU suite too
// (tests/cpu/spectral/test_svd_logic.cpp): the R factor extracted from geqrfBatched's
// output, the number of batch entries a launch covers (with the planted off-by-one) and the row
// the planted dropped-term fault leaves out.
#pragma once
#include "attnspec/gpu/base/hd.hpp"

namespace attnspec::gpu::svd_logic {

// Element t of `batch` R factors (n x n, column-major, stride n*n) from geqrf output (m x n per
// matrix, stride m*n, m >= n): the upper triangle of the top n x n block, zeros below it.
ATTNSPEC_HD void extract_r(const double* qr, double* R, long m, long n, long t) {
    const long nn = n * n;
    const long b = t / nn, k = t % nn, i = k % n, j = k / n;
    R[t] = i <= j ? qr[b * m * n + j * m + i] : 0.0;
}

// Entry (i, j) of R given qr's entry (i, j): the upper triangle, zeros below (the tiled kernel's
// store, svd_kernels.hpp).
ATTNSPEC_HD double r_entry(long i, long j, double qr_ij) { return i <= j ? qr_ij : 0.0; }

// How many of `batch` matrices a launch decomposes: all, or one fewer under the planted
// off-by-one-tile fault (the last matrix is left undecomposed: its singular values stay 0).
ATTNSPEC_HD long batch_processed(long batch, bool off_by_one) {
    return off_by_one && batch > 0 ? batch - 1 : batch;
}

// The row of an m-row matrix the planted dropped-term fault leaves out of every decomposition
// (the last: one term of each column's reductions, Householder and Jacobi alike); -1 without it.
ATTNSPEC_HD long dropped_row(long m, bool dropped_term) {
    return dropped_term && m > 0 ? m - 1 : -1;
}

// Zeroes row `row` (>= 0) of each of `batch` column-major m x n matrices (stride m n): what the
// device is handed under the planted dropped-term fault.
ATTNSPEC_HD void drop_row(double* M, long m, long n, long batch, long row) {
    for (long b = 0; b < batch; ++b)
        for (long j = 0; j < n; ++j) M[b * m * n + j * m + row] = 0.0;
}

}  // namespace attnspec::gpu::svd_logic
