// The cuBLAS / cuSOLVER calls of the twins' host sequences served on the CPU for
// `gpu-check --emulate` (cpu_solver_common.cpp): the same arguments as the device bindings of
// cusolver_bindings.hpp (column-major operands, transposes, leading dimensions), answered by the
// CPU BLAS (cblas) and LAPACK (LAPACKE). "Device" memory is host memory the solver hands out
// (HostMatrix, filled with 0xff bytes: NaN in double, so an entry never written shows) and keeps
// a record of: every call checks its arguments as the vendor library does (a leading dimension
// below the rows is rejected, as cuSOLVER's INVALID_VALUE) and that each operand, with its
// leading dimension, lies inside one of those buffers (on a device a leading dimension too large
// reads or writes past the allocation). A violation throws Error(Internal) naming the call and the
// operand. Host-only, both builds (attnspec_gpu_host).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>

#include "attnspec/gpu/base/cpu_grid.hpp"
#include "attnspec/gpu/infsa/neumann_cuda.hpp"  // IrsLowest

namespace attnspec::gpu::emu {

class CpuSolver;

// A rows x cols column-major buffer the solver knows (the emulated DeviceMatrix); move-only.
template <class T>
class HostMatrix {
  public:
    HostMatrix(CpuSolver& s, long rows, long cols);
    ~HostMatrix();
    HostMatrix(HostMatrix&& o) noexcept
        : s_(o.s_), rows_(o.rows_), cols_(o.cols_), data_(std::move(o.data_)) {
        o.s_ = nullptr;
    }
    HostMatrix& operator=(HostMatrix&&) = delete;
    HostMatrix(const HostMatrix&) = delete;
    HostMatrix& operator=(const HostMatrix&) = delete;
    long rows() const { return rows_; }
    long cols() const { return cols_; }
    long size() const { return rows_ * cols_; }
    T* data() const { return data_.get(); }

  private:
    CpuSolver* s_;
    long rows_, cols_;
    std::unique_ptr<T[]> data_;
};

// Workspace sizes of a getrf (the device binding's solver::GetrfWork).
struct GetrfWork {
    std::size_t device_bytes = 0, host_bytes = 0;
};

class CpuSolver {
  public:
    // The record of buffers (HostMatrix registers itself).
    void track(const void* p, std::size_t bytes);
    void untrack(const void* p);
    // Throws unless [p, p + bytes) lies inside one tracked buffer.
    void require(const void* p, std::size_t bytes, const char* call, const char* operand) const;

    // cublasDgemm: C = alpha op(A) op(B) + beta C.
    void gemm(bool ta, bool tb, long m, long n, long k, double alpha, const double* A, long lda,
              const double* B, long ldb, double beta, double* C, long ldc) const;
    // cublasDasum (incx > 0), cublasDsymv with the lower triangle (incx, incy > 0).
    double asum(long n, const double* x, long incx) const;
    void symv_lower(long n, double alpha, const double* A, long lda, const double* x, long incx,
                    double beta, double* y, long incy) const;
    // cusolverDnDsyevd, eigenvalues only, lower triangle, by LAPACK dsyevd: the buffer query is
    // dsyevd's (the work handed back must hold it: it is dsyevd's workspace); A is destroyed.
    long syevd_buffer(long n, const double* A, long lda) const;
    void syevd(long n, double* A, long lda, double* W, double* work, long lwork, int* info) const;
    // cublasDnrm2_64, cudaMemcpy device to device.
    double nrm2(long len, const double* x) const;
    void copy(double* dst, const double* src, long len) const;
    // cusolverDnXgetrf_bufferSize / Xgetrf (m x n, lda; ipiv min(m, n) int64; *info as cuSOLVER's
    // devInfo: 0, or i > 0 when U(i, i) is exactly zero).
    GetrfWork getrf_buffer(long m, long n, const double* A, long lda) const;
    void getrf(long m, long n, double* A, long lda, std::int64_t* ipiv, int* info) const;
    // cusolverDnXgetrs: op(LU)^{-1} B in place, B n x nrhs (ldb).
    void getrs(bool trans, long n, long nrhs, const double* LU, long lda, const std::int64_t* ipiv,
               double* B, long ldb, int* info) const;
    // cusolverDnIRSXgesv (classical refinement, fallback to the fp64 LU): the LU of A rounded to
    // `lowest`, the residual in fp64, at most 30 refinement steps (LAPACK dsgesv's criterion);
    // returns niters (> 0 steps, < 0 fell back). A is not overwritten.
    int irs_gesv(IrsLowest lowest, long n, long nrhs, const double* A, long lda, const double* B,
                 long ldb, double* X, long ldx, int* info) const;
    // cusolverDnDgesvdj (econ) by LAPACK dgesvd: the buffer query is dgesvd's workspace query
    // (the work handed to gesvdj must hold it: it is dgesvd's workspace); V is written as V, not
    // V^T, with ldv; A is destroyed.
    std::size_t gesvdj_buffer_doubles(bool vectors, long m, long n, long lda, long ldu,
                                      long ldv) const;
    void gesvdj(bool vectors, long m, long n, double* A, long lda, double* S, double* U, long ldu,
                double* V, long ldv, double* work, std::size_t work_doubles, int* info) const;
    // cusolverDnDgesvdjBatched: matrix b at A + b lda n, S + b min(m, n), full U (m x m) at
    // U + b ldu m, full V (n x n) at V + b ldv n, info[b]; m, n <= 32 as cuSOLVER requires. The
    // buffer is `batch` times dgesvd's.
    std::size_t gesvdj_batched_buffer_doubles(bool vectors, long m, long n, long lda, long ldu,
                                              long ldv, long batch) const;
    void gesvdj_batched(bool vectors, long m, long n, double* A, long lda, double* S, double* U,
                        long ldu, double* V, long ldv, double* work, std::size_t work_doubles,
                        int* info, long batch) const;
    // cublasDgeqrfBatched by LAPACK dgeqrf per matrix (A + b strideA, tau + b strideTau).
    void geqrf_batched(long m, long n, double* A, long lda, long strideA, double* tau,
                       long strideTau, long batch) const;

  private:
    std::map<std::uintptr_t, std::size_t> buffers_;  // start address -> bytes
};

template <class T>
HostMatrix<T>::HostMatrix(CpuSolver& s, long rows, long cols)
    : s_(&s), rows_(rows), cols_(cols), data_(new T[static_cast<std::size_t>(rows * cols)]) {
    const std::size_t bytes = static_cast<std::size_t>(rows * cols) * sizeof(T);
    std::memset(static_cast<void*>(data_.get()), 0xff, bytes);
    s.track(data_.get(), bytes);
}

template <class T>
HostMatrix<T>::~HostMatrix() {
    if (s_) s_->untrack(data_.get());
}

// What every emulated host sequence's Ops share: the CPU grid runner for the kernels, the solver
// for buffers and library calls, transfers (memcpy), zeroing, the info read-back.
struct CpuOpsBase {
    CpuGrid grid;
    CpuSolver solver;
    template <class T>
    using Mat = HostMatrix<T>;
    template <class T>
    Mat<T> matrix(long rows, long cols) {
        return Mat<T>(solver, rows, cols);
    }
    template <class T>
    void upload(Mat<T>& d, const T* host) {
        if (d.size()) std::memcpy(d.data(), host, static_cast<std::size_t>(d.size()) * sizeof(T));
    }
    template <class T>
    void download(const Mat<T>& d, T* host) {
        if (d.size()) std::memcpy(host, d.data(), static_cast<std::size_t>(d.size()) * sizeof(T));
    }
    template <class T>
    void zero(Mat<T>& d) {
        if (d.size()) std::memset(static_cast<void*>(d.data()), 0, d.size() * sizeof(T));
    }
    int read_info(const int* info) const {
        solver.require(info, sizeof(int), "read_info", "info");
        return *info;
    }
    void synchronize() const {}
};

}  // namespace attnspec::gpu::emu
