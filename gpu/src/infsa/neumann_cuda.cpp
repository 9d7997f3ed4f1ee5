// gpu::neumann_kernels, closure_times, closure_times_mixed (neumann_cuda.hpp): the host sequence of
// neumann_sequence.hpp on the device, its operations cuSOLVER Xgetrf/Xgetrs and IRSXgesv, cuBLAS
// and the kernels of neumann_cuda.cu on the context's stream. Twin of lib/src/infsa/neumann.cpp.
#include "attnspec/gpu/infsa/neumann_cuda.hpp"

#include <vector>

#include "../base/cusolver_bindings.hpp"
#include "neumann_launch.hpp"
#include "neumann_sequence.hpp"

namespace attnspec::gpu {

namespace {

// The sequence's operations on the device (neumann_sequence.hpp lists them).
struct DeviceOps {
    Context& ctx;
    template <class T>
    using Mat = DeviceMatrix<T>;
    template <class T>
    DeviceMatrix<T> matrix(long rows, long cols) {
        return DeviceMatrix<T>(rows, cols);
    }
    void upload(DeviceMatrix<double>& d, const double* host) { d.upload_sync(ctx, host); }
    void download(const DeviceMatrix<double>& d, double* host) { d.download_sync(ctx, host); }
    void form_m(const double* A, double* M, double gamma, long n, long dropped) {
        neumann_dev::form_m(A, M, gamma, n, dropped, ctx.stream());
    }
    void residual(const double* B, const double* X, const double* GAX, double* partial, long len) {
        neumann_dev::residual(B, X, GAX, partial, len, ctx.stream());
    }
    void gemm(bool ta, bool tb, long m, long n, long k, double alpha, const double* A, long lda,
              const double* B, long ldb, double beta, double* C, long ldc) {
        solver::gemm(ctx, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    }
    double nrm2(long len, const double* x) { return solver::nrm2(ctx, len, x); }
    void copy(double* dst, const double* src, long len) { solver::copy(ctx, dst, src, len); }
    solver::GetrfWork getrf_buffer(long m, long n, double* A, long lda) {
        return solver::getrf_buffer(ctx, m, n, A, lda);
    }
    void getrf(long m, long n, double* A, long lda, std::int64_t* ipiv, void* d_work,
               const solver::GetrfWork& w, void* h_work, int* info) {
        solver::getrf(ctx, m, n, A, lda, ipiv, d_work, w, h_work, info);
    }
    void getrs(bool trans, long n, long nrhs, const double* LU, long lda, const std::int64_t* ipiv,
               double* B, long ldb, int* info) {
        solver::getrs(ctx, trans, n, nrhs, LU, lda, ipiv, B, ldb, info);
    }
    int irs_gesv(IrsLowest lowest, long n, long nrhs, double* A, long lda, const double* B,
                 long ldb, double* X, long ldx, int* info) {
        // cuSOLVER takes B as void* but does not write it
        return solver::irs_gesv(ctx, lowest, n, nrhs, A, lda, const_cast<double*>(B), ldb, X, ldx,
                                info);
    }
    int read_info(const int* info) { return solver::read_info(ctx, info); }
    void synchronize() { ctx.synchronize(); }
};

}  // namespace

std::vector<Eigen::MatrixXd> neumann_kernels(Context& ctx,
                                             const std::vector<Eigen::MatrixXd>& A_hats,
                                             double gamma, std::vector<NeumannSolveStats>* stats) {
    DeviceOps ops{ctx};
    return neumann_seq::kernels(ops, A_hats, gamma, stats);
}

std::vector<Eigen::MatrixXd> closure_times(Context& ctx, const std::vector<Eigen::MatrixXd>& A_hats,
                                           double gamma, const std::vector<Eigen::MatrixXd>& Vs,
                                           std::vector<NeumannSolveStats>* stats) {
    DeviceOps ops{ctx};
    return neumann_seq::closure(ops, A_hats, gamma, Vs, stats);
}

Eigen::MatrixXd closure_times_mixed(Context& ctx, const Eigen::MatrixXd& A_hat, double gamma,
                                    const Eigen::MatrixXd& V, int* iterations, IrsLowest lowest,
                                    NeumannSolveStats* stats) {
    DeviceOps ops{ctx};
    return neumann_seq::closure_mixed(ops, A_hat, gamma, V, iterations, lowest, stats);
}

}  // namespace attnspec::gpu
