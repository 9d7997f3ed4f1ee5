// Typed, error-checked bindings of the dense-solver calls the CUDA twins make (cuSOLVER dense:
// gesvdj, gesvdjBatched, Xgetrf/Xgetrs, IRS gesv; and the cuBLAS batched QR and GEMM those
// solvers are fed with). Every vendor status becomes an Error: allocation failures OutOfMemory
// (71), anything else Internal (70) naming the call. Raw device pointers, column-major, no Eigen:
// callers are the *_cuda.cpp host wrappers. Handles come from the caller's gpu::Context.
// CUDA build only (cusolver_bindings_cuda.cpp).
#pragma once
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "attnspec/gpu/base/context.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/gpu/infsa/neumann_cuda.hpp"  // IrsLowest

namespace attnspec::gpu::solver {

// cusolverDnDgesvdj (econ): A (m x n, lda) is destroyed; S gets min(m, n) values descending; U
// (m x min, ldu = m) and V (n x min, ldv = n) when `vectors`. `d_info` one device int.
// Tolerance: cuSOLVER's default (machine accuracy); at most 100 sweeps, values sorted.
std::size_t gesvdj_buffer_doubles(const Context& ctx, bool vectors, int m, int n);
void gesvdj(const Context& ctx, bool vectors, int m, int n, double* A, double* S, double* U,
            double* V, double* work, std::size_t work_doubles, int* d_info);

// cusolverDnDgesvdjBatched: `batch` matrices m x n (m, n <= 32), stride m*n; S stride min(m, n);
// U m x m (stride m*m), V n x n (stride n*n) are always written by cuSOLVER's layout.
std::size_t gesvdj_batched_buffer_doubles(const Context& ctx, bool vectors, int m, int n,
                                          int batch);
void gesvdj_batched(const Context& ctx, bool vectors, int m, int n, double* A, double* S, double* U,
                    double* V, double* work, std::size_t work_doubles, int* d_info, int batch);

// cublasDgeqrfBatched on `batch` matrices m x n (m >= n), stride m*n, tau stride n. The arrays of
// pointers are built here (device copies); returns cuBLAS's host-side argument check info.
void geqrf_batched(const Context& ctx, int m, int n, double* A, double* tau, int batch);

// C = alpha A B (cublasDgemm, no transposes), A m x k, B k x n, C m x n, leading dims = rows.
void gemm(const Context& ctx, long m, long n, long k, double alpha, const double* A,
          const double* B, double* C);

// cusolverDnXgetrf / Xgetrs (64-bit API, double). ipiv n int64 on the device; d_info one int.
struct GetrfWork {
    std::size_t device_bytes = 0, host_bytes = 0;
};
GetrfWork getrf_buffer(const Context& ctx, long n, double* A);
void getrf(const Context& ctx, long n, double* A, std::int64_t* ipiv, void* d_work,
           const GetrfWork& w, void* h_work, int* d_info);
void getrs(const Context& ctx, long n, long nrhs, const double* LU, const std::int64_t* ipiv,
           double* B, int* d_info);

// cusolverDnIRSXgesv: solve A X = B with the LU in `lowest` precision and refinement to fp64
// (classical refinement, fallback to the fp64 LU enabled). A (n x n) may be overwritten.
// Returns cuSOLVER's niters (> 0 refinement steps, < 0 fell back).
int irs_gesv(const Context& ctx, IrsLowest lowest, long n, long nrhs, double* A, double* B,
             double* X, int* d_info);

// ||x||_2 of `len` doubles (cublasDnrm2_64), returned to the host.
double nrm2(const Context& ctx, long len, const double* x);

// dst <- src, `len` doubles, device to device on the context's stream.
void copy(const Context& ctx, double* dst, const double* src, long len);

// One device int read back (stream-synchronised).
int read_info(const Context& ctx, const int* d_info);

using attnspec::gpu::median_seconds;  // gpu/check/gpu_check.hpp

}  // namespace attnspec::gpu::solver
