// Host wrapper of the kappa(J) twin (jacobian_spectrum_cuda.hpp): the host sequence of
// jacobian_spectrum_sequence.hpp on the device, its operations cuBLAS, cuSOLVER syevd and the
// kernels of jacobian_spectrum_cuda.cu on the context's stream.
#include "attnspec/gpu/attention/jacobian_spectrum_cuda.hpp"

#include "attention_blas.hpp"
#include "jacobian_spectrum_launch.hpp"
#include "jacobian_spectrum_sequence.hpp"

namespace attnspec::gpu {

namespace {

// The sequence's operations on the device (jacobian_spectrum_sequence.hpp lists them).
struct DeviceOps {
    Context& ctx;
    template <class T>
    using Mat = DeviceMatrix<T>;
    template <class T>
    DeviceMatrix<T> matrix(long rows, long cols) {
        return DeviceMatrix<T>(rows, cols);
    }
    template <class T>
    void upload(DeviceMatrix<T>& d, const T* host) {
        d.upload_sync(ctx, host);
    }
    template <class T>
    void download(const DeviceMatrix<T>& d, T* host) {
        d.download_sync(ctx, host);
    }
    void p_factors(const double* S, const double* V, const double* A, double* P, long N, long d) {
        attn::launch_p_factors(S, V, A, P, N, d, ctx.stream());
    }
    void gram_combine(double* G, long Nd, const double* XX, const double* QQ, const double* VV,
                      const double* T, long ldT, long N, long cp, bool skip, bool drop) {
        attn::launch_gram_combine(G, Nd, XX, QQ, VV, T, ldT, N, cp, skip, drop, ctx.stream());
    }
    void gemm(bool ta, bool tb, long m, long n, long k, double alpha, const double* A, long lda,
              const double* B, long ldb, double beta, double* C, long ldc) {
        attn::gemm(ctx, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    }
    double asum(long n, const double* x, long incx) {
        double r = 0;
        status::check(cublasDasum(ctx.cublas(), attn::blas_int(n), x, attn::blas_int(incx), &r),
                      "cublasDasum");
        return r;
    }
    void symv_lower(long n, double alpha, const double* A, long lda, const double* x, long incx,
                    double beta, double* y, long incy) {
        status::check(cublasDsymv(ctx.cublas(), CUBLAS_FILL_MODE_LOWER, attn::blas_int(n), &alpha,
                                  A, attn::blas_int(lda), x, attn::blas_int(incx), &beta, y,
                                  attn::blas_int(incy)),
                      "cublasDsymv");
    }
    long syevd_buffer(long n, const double* A, long lda) {
        int lwork = 0;
        status::check(cusolverDnDsyevd_bufferSize(ctx.cusolver(), CUSOLVER_EIG_MODE_NOVECTOR,
                                                  CUBLAS_FILL_MODE_LOWER, attn::blas_int(n), A,
                                                  attn::blas_int(lda), nullptr, &lwork),
                      "cusolverDnDsyevd_bufferSize");
        return lwork;
    }
    void syevd(long n, double* A, long lda, double* W, double* work, long lwork, int* info) {
        status::check(cusolverDnDsyevd(ctx.cusolver(), CUSOLVER_EIG_MODE_NOVECTOR,
                                       CUBLAS_FILL_MODE_LOWER, attn::blas_int(n), A,
                                       attn::blas_int(lda), W, work, attn::blas_int(lwork), info),
                      "cusolverDnDsyevd");
    }
    void synchronize() { ctx.synchronize(); }
    std::string math_mode_description() const { return ctx.math_mode_description(); }
};

}  // namespace

OperatorSpectrum jacobian_spectrum(Context& ctx, const Head& h, const LargeSvdOptions& opt) {
    DeviceOps ops{ctx};
    return jac_seq::spectrum(ops, h, opt);
}

}  // namespace attnspec::gpu
