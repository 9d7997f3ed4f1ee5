// gpu::svd, svd_batched, kappa (svd_cuda.hpp): the host sequence of svd_sequence.hpp on the
// device, its operations cuSOLVER gesvdj / gesvdjBatched, cuBLAS geqrfBatched and the kernel of
// svd_cuda.cu on the context's stream; checks, scaling, enclosures and refinement by the CPU's
// svd_with on the host. Twin of lib/src/spectral/svd.cpp.
#include "attnspec/gpu/spectral/svd_cuda.hpp"

#include <vector>

#include "../base/cusolver_bindings.hpp"
#include "svd_launch.hpp"
#include "svd_sequence.hpp"

namespace attnspec::gpu {

namespace {

// The sequence's operations on the device (svd_sequence.hpp lists them).
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
    template <class T>
    void zero(DeviceMatrix<T>& d) {
        d.zero(ctx);
    }
    void extract_r(const double* qr, double* R, long m, long n, long batch) {
        svd_kernels::extract_r(qr, R, m, n, batch, ctx.stream());
    }
    std::size_t gesvdj_buffer_doubles(bool vectors, int m, int n, int lda, int ldu, int ldv) {
        return solver::gesvdj_buffer_doubles(ctx, vectors, m, n, lda, ldu, ldv);
    }
    void gesvdj(bool vectors, int m, int n, double* A, int lda, double* S, double* U, int ldu,
                double* V, int ldv, double* work, std::size_t lw, int* info) {
        solver::gesvdj(ctx, vectors, m, n, A, lda, S, U, ldu, V, ldv, work, lw, info);
    }
    std::size_t gesvdj_batched_buffer_doubles(bool vectors, int m, int n, int lda, int ldu, int ldv,
                                              int batch) {
        return solver::gesvdj_batched_buffer_doubles(ctx, vectors, m, n, lda, ldu, ldv, batch);
    }
    void gesvdj_batched(bool vectors, int m, int n, double* A, int lda, double* S, double* U,
                        int ldu, double* V, int ldv, double* work, std::size_t lw, int* info,
                        int batch) {
        solver::gesvdj_batched(ctx, vectors, m, n, A, lda, S, U, ldu, V, ldv, work, lw, info,
                               batch);
    }
    void geqrf_batched(int m, int n, double* A, int lda, long strideA, double* tau, long strideTau,
                       int batch) {
        solver::geqrf_batched(ctx, m, n, A, lda, strideA, tau, strideTau, batch);
    }
    int read_info(const int* info) { return solver::read_info(ctx, info); }
    void synchronize() { ctx.synchronize(); }
};

}  // namespace

SvdResult svd(Context& ctx, const Eigen::MatrixXd& M, const SvdOptions& opt) {
    DeviceOps ops{ctx};
    return svd_seq::svd(ops, M, opt);
}

SvdResult svd(Context& ctx, const Eigen::MatrixXd& M, SvdMethod method) {
    SvdOptions o;
    o.method = method;
    return svd(ctx, M, o);
}

std::vector<SvdResult> svd_batched(Context& ctx, const std::vector<Eigen::MatrixXd>& Ms,
                                   const SvdOptions& opt) {
    DeviceOps ops{ctx};
    return svd_seq::svd_batched(ops, Ms, opt);
}

Kappa kappa(Context& ctx, const Eigen::MatrixXd& M, KappaConvention c, double rtol) {
    return attnspec::kappa(svd(ctx, M), M.rows(), M.cols(), c, rtol);
}

}  // namespace attnspec::gpu
