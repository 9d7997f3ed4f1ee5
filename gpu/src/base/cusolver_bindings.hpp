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
// (m x min, ldu) and V (n x min, ldv) when `vectors`. `d_info` one device int.
// Tolerance: cuSOLVER's default (machine accuracy); at most 100 sweeps, values sorted. Every
// leading dimension is an argument, as in the emulation (emu::CpuSolver) that takes the same.
std::size_t gesvdj_buffer_doubles(const Context& ctx, bool vectors, int m, int n, int lda, int ldu,
                                  int ldv);
void gesvdj(const Context& ctx, bool vectors, int m, int n, double* A, int lda, double* S,
            double* U, int ldu, double* V, int ldv, double* work, std::size_t work_doubles,
            int* d_info);

// cusolverDnDgesvdjBatched: `batch` matrices m x n (m, n <= 32), stride lda*n; S stride
// min(m, n); U m x m (ldu, stride ldu*m), V n x n (ldv, stride ldv*n) are always written by
// cuSOLVER's layout; d_info `batch` ints.
std::size_t gesvdj_batched_buffer_doubles(const Context& ctx, bool vectors, int m, int n, int lda,
                                          int ldu, int ldv, int batch);
void gesvdj_batched(const Context& ctx, bool vectors, int m, int n, double* A, int lda, double* S,
                    double* U, int ldu, double* V, int ldv, double* work, std::size_t work_doubles,
                    int* d_info, int batch);

// cublasDgeqrfBatched on `batch` matrices m x n (m >= n, lda), strideA doubles apart, tau
// strideTau apart. The arrays of pointers are built here (device copies).
void geqrf_batched(const Context& ctx, int m, int n, double* A, int lda, long strideA, double* tau,
                   long strideTau, int batch);

// C = alpha A B (cublasDgemm, no transposes), A m x k, B k x n, C m x n, leading dims = rows.
void gemm(const Context& ctx, long m, long n, long k, double alpha, const double* A,
          const double* B, double* C);
// cublasDgemm with every argument: C = alpha op(A) op(B) + beta C (the emulation's
// emu::CpuSolver::gemm takes the same).
void gemm(const Context& ctx, bool ta, bool tb, long m, long n, long k, double alpha,
          const double* A, long lda, const double* B, long ldb, double beta, double* C, long ldc);

// cusolverDnXgetrf / Xgetrs (64-bit API, double), m x n with leading dimension lda; getrs solves
// op(LU) X = B in place (trans: op = transpose), B n x nrhs with ldb. ipiv min(m, n) int64 on the
// device; d_info one int. The emulation (emu::CpuSolver) takes the same arguments.
struct GetrfWork {
    std::size_t device_bytes = 0, host_bytes = 0;
};
GetrfWork getrf_buffer(const Context& ctx, long m, long n, double* A, long lda);
void getrf(const Context& ctx, long m, long n, double* A, long lda, std::int64_t* ipiv,
           void* d_work, const GetrfWork& w, void* h_work, int* d_info);
void getrs(const Context& ctx, bool trans, long n, long nrhs, const double* LU, long lda,
           const std::int64_t* ipiv, double* B, long ldb, int* d_info);

// cusolverDnIRSXgesv: solve A X = B with the LU in `lowest` precision and refinement to fp64
// (classical refinement, fallback to the fp64 LU enabled). A (n x n, lda) may be overwritten;
// B (ldb), X (ldx) n x nrhs. Returns cuSOLVER's niters (> 0 refinement steps, < 0 fell back).
int irs_gesv(const Context& ctx, IrsLowest lowest, long n, long nrhs, double* A, long lda,
             double* B, long ldb, double* X, long ldx, int* d_info);

// ||x||_2 of `len` doubles (cublasDnrm2_64), returned to the host.
double nrm2(const Context& ctx, long len, const double* x);

// dst <- src, `len` doubles, device to device on the context's stream.
void copy(const Context& ctx, double* dst, const double* src, long len);

// One device int read back (stream-synchronised).
int read_info(const Context& ctx, const int* d_info);

using attnspec::gpu::median_seconds;  // gpu/check/gpu_check.hpp

}  // namespace attnspec::gpu::solver
