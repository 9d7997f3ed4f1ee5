// The dense-solver bindings (cusolver_bindings.hpp): cuSOLVER gesvdj, gesvdjBatched, Xgetrf,
// Xgetrs, IRSXgesv and cuBLAS geqrfBatched, dgemm, each status checked. Twin: none.
#include <string>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "cuda_status.hpp"
#include "cusolver_bindings.hpp"

namespace attnspec::gpu::solver {

namespace {

using status::check;

int as_int(long v, const char* what) {
    if (v < 0 || v > 2147483647L)
        throw Error(ExitCode::DataError, std::string(what) + " = " + std::to_string(v) +
                                             " exceeds the 32-bit size cuSOLVER accepts here");
    return static_cast<int>(v);
}

// gesvdj parameters: the default tolerance (machine accuracy), 100 sweeps, sorted values (RAII).
class GesvdjParams {
  public:
    GesvdjParams() {
        check(cusolverDnCreateGesvdjInfo(&p_), "cusolverDnCreateGesvdjInfo");
        check(cusolverDnXgesvdjSetMaxSweeps(p_, 100), "cusolverDnXgesvdjSetMaxSweeps");
        check(cusolverDnXgesvdjSetSortEig(p_, 1), "cusolverDnXgesvdjSetSortEig");
    }
    ~GesvdjParams() { cusolverDnDestroyGesvdjInfo(p_); }
    GesvdjParams(const GesvdjParams&) = delete;
    GesvdjParams& operator=(const GesvdjParams&) = delete;
    gesvdjInfo_t get() const { return p_; }

  private:
    gesvdjInfo_t p_ = nullptr;
};

class DnParams {
  public:
    DnParams() { check(cusolverDnCreateParams(&p_), "cusolverDnCreateParams"); }
    ~DnParams() { cusolverDnDestroyParams(p_); }
    DnParams(const DnParams&) = delete;
    DnParams& operator=(const DnParams&) = delete;
    cusolverDnParams_t get() const { return p_; }

  private:
    cusolverDnParams_t p_ = nullptr;
};

cusolverEigMode_t mode(bool vectors) {
    return vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
}

}  // namespace

std::size_t gesvdj_buffer_doubles(const Context& ctx, bool vectors, int m, int n, int lda, int ldu,
                                  int ldv) {
    GesvdjParams p;
    int lwork = 0;
    check(cusolverDnDgesvdj_bufferSize(ctx.cusolver(), mode(vectors), 1, m, n, nullptr, lda,
                                       nullptr, nullptr, ldu, nullptr, ldv, &lwork, p.get()),
          "cusolverDnDgesvdj_bufferSize");
    return static_cast<std::size_t>(lwork);
}

void gesvdj(const Context& ctx, bool vectors, int m, int n, double* A, int lda, double* S,
            double* U, int ldu, double* V, int ldv, double* work, std::size_t work_doubles,
            int* d_info) {
    GesvdjParams p;
    check(
        cusolverDnDgesvdj(ctx.cusolver(), mode(vectors), 1, m, n, A, lda, S, U, ldu, V, ldv, work,
                          as_int(static_cast<long>(work_doubles), "gesvdj work"), d_info, p.get()),
        "cusolverDnDgesvdj");
}

std::size_t gesvdj_batched_buffer_doubles(const Context& ctx, bool vectors, int m, int n, int lda,
                                          int ldu, int ldv, int batch) {
    GesvdjParams p;
    int lwork = 0;
    check(cusolverDnDgesvdjBatched_bufferSize(ctx.cusolver(), mode(vectors), m, n, nullptr, lda,
                                              nullptr, nullptr, ldu, nullptr, ldv, &lwork, p.get(),
                                              batch),
          "cusolverDnDgesvdjBatched_bufferSize");
    return static_cast<std::size_t>(lwork);
}

void gesvdj_batched(const Context& ctx, bool vectors, int m, int n, double* A, int lda, double* S,
                    double* U, int ldu, double* V, int ldv, double* work, std::size_t work_doubles,
                    int* d_info, int batch) {
    GesvdjParams p;
    check(cusolverDnDgesvdjBatched(ctx.cusolver(), mode(vectors), m, n, A, lda, S, U, ldu, V, ldv,
                                   work, as_int(static_cast<long>(work_doubles), "gesvdj work"),
                                   d_info, p.get(), batch),
          "cusolverDnDgesvdjBatched");
}

void geqrf_batched(const Context& ctx, int m, int n, double* A, int lda, long strideA, double* tau,
                   long strideTau, int batch) {
    std::vector<double*> a(static_cast<std::size_t>(batch)), t(a.size());
    for (int b = 0; b < batch; ++b) {
        a[static_cast<std::size_t>(b)] = A + static_cast<std::ptrdiff_t>(b) * strideA;
        t[static_cast<std::size_t>(b)] = tau + static_cast<std::ptrdiff_t>(b) * strideTau;
    }
    const std::size_t bytes = a.size() * sizeof(double*);
    DeviceBuffer da(bytes), dt(bytes);
    da.upload_sync(ctx, a.data(), bytes);
    dt.upload_sync(ctx, t.data(), bytes);
    int info = 0;
    // cuBLAS's batched QR takes arrays of device pointers.
    check(cublasDgeqrfBatched(ctx.cublas(), m, n, static_cast<double**>(da.data()), lda,
                              static_cast<double**>(dt.data()), &info, batch),
          "cublasDgeqrfBatched");
    if (info != 0)
        throw Error(ExitCode::Internal,
                    "cublasDgeqrfBatched rejected argument " + std::to_string(-info));
    ctx.synchronize();  // the pointer arrays are freed on return
}

void gemm(const Context& ctx, bool ta, bool tb, long m, long n, long k, double alpha,
          const double* A, long lda, const double* B, long ldb, double beta, double* C, long ldc) {
    check(cublasDgemm(ctx.cublas(), ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                      as_int(m, "rows"), as_int(n, "columns"), as_int(k, "inner size"), &alpha, A,
                      as_int(lda, "lda"), B, as_int(ldb, "ldb"), &beta, C, as_int(ldc, "ldc")),
          "cublasDgemm");
}

void gemm(const Context& ctx, long m, long n, long k, double alpha, const double* A,
          const double* B, double* C) {
    gemm(ctx, false, false, m, n, k, alpha, A, m, B, k, 0.0, C, m);
}

GetrfWork getrf_buffer(const Context& ctx, long m, long n, double* A, long lda) {
    DnParams p;
    GetrfWork w;
    check(cusolverDnXgetrf_bufferSize(ctx.cusolver(), p.get(), m, n, CUDA_R_64F, A, lda, CUDA_R_64F,
                                      &w.device_bytes, &w.host_bytes),
          "cusolverDnXgetrf_bufferSize");
    return w;
}

void getrf(const Context& ctx, long m, long n, double* A, long lda, std::int64_t* ipiv,
           void* d_work, const GetrfWork& w, void* h_work, int* d_info) {
    DnParams p;
    check(cusolverDnXgetrf(ctx.cusolver(), p.get(), m, n, CUDA_R_64F, A, lda, ipiv, CUDA_R_64F,
                           d_work, w.device_bytes, h_work, w.host_bytes, d_info),
          "cusolverDnXgetrf");
}

void getrs(const Context& ctx, bool trans, long n, long nrhs, const double* LU, long lda,
           const std::int64_t* ipiv, double* B, long ldb, int* d_info) {
    DnParams p;
    check(cusolverDnXgetrs(ctx.cusolver(), p.get(), trans ? CUBLAS_OP_T : CUBLAS_OP_N, n, nrhs,
                           CUDA_R_64F, LU, lda, ipiv, CUDA_R_64F, B, ldb, d_info),
          "cusolverDnXgetrs");
}

namespace {
cusolverPrecType_t prec(IrsLowest p) {
    switch (p) {
        case IrsLowest::fp32:
            return CUSOLVER_R_32F;
        case IrsLowest::fp16:
            return CUSOLVER_R_16F;
        case IrsLowest::bf16:
            return CUSOLVER_R_16BF;
        case IrsLowest::tf32:
            return CUSOLVER_R_TF32;
    }
    return CUSOLVER_R_32F;
}

class IrsParams {
  public:
    explicit IrsParams(IrsLowest lowest) {
        check(cusolverDnIRSParamsCreate(&p_), "cusolverDnIRSParamsCreate");
        try {
            check(cusolverDnIRSParamsSetSolverPrecisions(p_, CUSOLVER_R_64F, prec(lowest)),
                  "cusolverDnIRSParamsSetSolverPrecisions");
            check(cusolverDnIRSParamsSetRefinementSolver(p_, CUSOLVER_IRS_REFINE_CLASSICAL),
                  "cusolverDnIRSParamsSetRefinementSolver");
            check(cusolverDnIRSParamsEnableFallback(p_), "cusolverDnIRSParamsEnableFallback");
            check(cusolverDnIRSInfosCreate(&i_), "cusolverDnIRSInfosCreate");
        } catch (...) {
            cusolverDnIRSParamsDestroy(p_);
            throw;
        }
    }
    ~IrsParams() {
        cusolverDnIRSInfosDestroy(i_);
        cusolverDnIRSParamsDestroy(p_);
    }
    IrsParams(const IrsParams&) = delete;
    IrsParams& operator=(const IrsParams&) = delete;
    cusolverDnIRSParams_t params() const { return p_; }
    cusolverDnIRSInfos_t infos() const { return i_; }

  private:
    cusolverDnIRSParams_t p_ = nullptr;
    cusolverDnIRSInfos_t i_ = nullptr;
};
}  // namespace

int irs_gesv(const Context& ctx, IrsLowest lowest, long n, long nrhs, double* A, long lda,
             double* B, long ldb, double* X, long ldx, int* d_info) {
    IrsParams p(lowest);
    const int ni = as_int(n, "N"), ri = as_int(nrhs, "right-hand sides");
    std::size_t bytes = 0;
    check(cusolverDnIRSXgesv_bufferSize(ctx.cusolver(), p.params(), ni, ri, &bytes),
          "cusolverDnIRSXgesv_bufferSize");
    DeviceBuffer work(bytes);
    int niters = 0;
    check(cusolverDnIRSXgesv(ctx.cusolver(), p.params(), p.infos(), ni, ri, A, as_int(lda, "lda"),
                             B, as_int(ldb, "ldb"), X, as_int(ldx, "ldx"), work.data(), bytes,
                             &niters, d_info),
          "cusolverDnIRSXgesv");
    ctx.synchronize();  // the workspace is freed on return
    return niters;
}

double nrm2(const Context& ctx, long len, const double* x) {
    double r = 0;
    check(cublasSetPointerMode(ctx.cublas(), CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
    check(cublasDnrm2_64(ctx.cublas(), len, x, 1, &r), "cublasDnrm2_64");
    return r;  // host pointer mode: cuBLAS returns after the result is written
}

void copy(const Context& ctx, double* dst, const double* src, long len) {
    check(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(len) * sizeof(double),
                          cudaMemcpyDeviceToDevice, ctx.stream()),
          "cudaMemcpyAsync device to device");
}

int read_info(const Context& ctx, const int* d_info) {
    int h = 0;
    check(cudaMemcpyAsync(&h, d_info, sizeof h, cudaMemcpyDeviceToHost, ctx.stream()),
          "cudaMemcpyAsync info");
    ctx.synchronize();
    return h;
}

}  // namespace attnspec::gpu::solver
