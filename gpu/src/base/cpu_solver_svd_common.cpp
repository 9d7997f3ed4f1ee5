// The emulated SVD and batched-QR calls of emu::CpuSolver (cpu_solver.hpp): cuSOLVER gesvdj /
// gesvdjBatched by LAPACK dgesvd (the same leading dimensions and strides, V written as V), cuBLAS
// geqrfBatched by LAPACK dgeqrf per matrix.
#include <lapacke.h>

#include <algorithm>
#include <string>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "cpu_solver.hpp"

namespace attnspec::gpu::emu {

namespace {

[[noreturn]] void invalid(const char* call, const std::string& what) {
    throw Error(ExitCode::Internal, std::string(call) + ": invalid value (" + what +
                                        ") [emulated: the device call would fail too]");
}

void require_ld(const char* call, const char* name, long ld, long rows) {
    if (ld < std::max(1L, rows))
        invalid(call, std::string(name) + " = " + std::to_string(ld) + " < max(1, " +
                          std::to_string(rows) + ")");
}

std::size_t span(long rows, long cols, long ld) {
    if (rows <= 0 || cols <= 0) return 0;
    return static_cast<std::size_t>(ld * (cols - 1) + rows) * sizeof(double);
}

// dgesvd's workspace for an m x n matrix, jobs 'S'/'S' (vectors) or 'N'/'N' (econ) or 'A'/'A'.
long dgesvd_lwork(char job, long m, long n) {
    double q = 0;
    const long r = std::min(m, n);
    LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, job, job, lapack_int(m), lapack_int(n), nullptr,
                        lapack_int(std::max(1L, m)), nullptr, nullptr, lapack_int(std::max(1L, m)),
                        nullptr, lapack_int(std::max(1L, job == 'A' ? n : r)), &q, -1);
    return std::max(1L, static_cast<long>(q));
}

// One dgesvd: A (m x n, lda) destroyed; S; with `job` 'S' or 'A' U (ldu) and V (ldv, columns
// `vcols`) written from dgesvd's V^T. Returns dgesvd's info.
int one_svd(char job, long m, long n, double* A, long lda, double* S, double* U, long ldu,
            double* V, long ldv, double* work, long lwork) {
    const long r = std::min(m, n), vrows = job == 'A' ? n : r;
    std::vector<double> vt(static_cast<std::size_t>(std::max(1L, vrows * n)));
    const lapack_int info = LAPACKE_dgesvd_work(
        LAPACK_COL_MAJOR, job, job, lapack_int(m), lapack_int(n), A, lapack_int(lda), S, U,
        lapack_int(ldu), vt.data(), lapack_int(std::max(1L, vrows)), work, lapack_int(lwork));
    if (job != 'N')
        for (long j = 0; j < vrows; ++j)  // V(:, j) = VT(j, :)^T
            for (long i = 0; i < n; ++i)
                V[i + j * ldv] = vt[static_cast<std::size_t>(j + i * vrows)];
    return static_cast<int>(info);
}

}  // namespace

std::size_t CpuSolver::gesvdj_buffer_doubles(bool vectors, long m, long n, long lda, long ldu,
                                             long ldv) const {
    const char* call = "cusolverDnDgesvdj_bufferSize";
    require_ld(call, "lda", lda, m);
    if (vectors) require_ld(call, "ldu", ldu, m), require_ld(call, "ldv", ldv, n);
    return static_cast<std::size_t>(dgesvd_lwork(vectors ? 'S' : 'N', m, n));
}

void CpuSolver::gesvdj(bool vectors, long m, long n, double* A, long lda, double* S, double* U,
                       long ldu, double* V, long ldv, double* work, std::size_t work_doubles,
                       int* info) const {
    const char* call = "cusolverDnDgesvdj";
    require_ld(call, "lda", lda, m);
    if (vectors) require_ld(call, "ldu", ldu, m), require_ld(call, "ldv", ldv, n);
    const long r = std::min(m, n);
    require(A, span(m, n, lda), call, "A");
    require(S, span(r, 1, r), call, "S");
    if (vectors) require(U, span(m, r, ldu), call, "U"), require(V, span(n, r, ldv), call, "V");
    const long lwork = dgesvd_lwork(vectors ? 'S' : 'N', m, n);
    if (static_cast<long>(work_doubles) < lwork)
        invalid(call, "lwork = " + std::to_string(work_doubles) + " below the query's " +
                          std::to_string(lwork));
    require(work, work_doubles * sizeof(double), call, "work");
    require(info, sizeof(int), call, "info");
    *info = one_svd(vectors ? 'S' : 'N', m, n, A, lda, S, U, ldu, V, ldv, work, lwork);
}

std::size_t CpuSolver::gesvdj_batched_buffer_doubles(bool vectors, long m, long n, long lda,
                                                     long ldu, long ldv, long batch) const {
    const char* call = "cusolverDnDgesvdjBatched_bufferSize";
    if (m > 32 || n > 32 || batch < 0)
        invalid(call, "m = " + std::to_string(m) + ", n = " + std::to_string(n) + " (<= 32)");
    require_ld(call, "lda", lda, m), require_ld(call, "ldu", ldu, m);
    require_ld(call, "ldv", ldv, n);
    (void)vectors;  // gesvdjBatched writes U and V in either mode
    return static_cast<std::size_t>(batch * dgesvd_lwork('A', m, n));
}

void CpuSolver::gesvdj_batched(bool vectors, long m, long n, double* A, long lda, double* S,
                               double* U, long ldu, double* V, long ldv, double* work,
                               std::size_t work_doubles, int* info, long batch) const {
    const char* call = "cusolverDnDgesvdjBatched";
    const std::size_t need = gesvdj_batched_buffer_doubles(vectors, m, n, lda, ldu, ldv, batch);
    if (batch == 0) return;
    if (work_doubles < need)
        invalid(call, "lwork = " + std::to_string(work_doubles) + " below the query's " +
                          std::to_string(need));
    const long r = std::min(m, n), sA = lda * n, sU = ldu * m, sV = ldv * n;
    const auto last = [batch](long stride) {  // bytes up to the last matrix
        return static_cast<std::size_t>(stride * (batch - 1)) * sizeof(double);
    };
    require(A, last(sA) + span(m, n, lda), call, "A (batch)");
    require(S, last(r) + span(r, 1, r), call, "S (batch)");
    require(U, last(sU) + span(m, m, ldu), call, "U (batch)");
    require(V, last(sV) + span(n, n, ldv), call, "V (batch)");
    require(work, need * sizeof(double), call, "work");
    require(info, static_cast<std::size_t>(batch) * sizeof(int), call, "info");
    const long lw = static_cast<long>(need) / batch;
    for (long b = 0; b < batch; ++b)
        info[b] = one_svd('A', m, n, A + b * sA, lda, S + b * r, U + b * sU, ldu, V + b * sV, ldv,
                          work + b * lw, lw);
}

void CpuSolver::geqrf_batched(long m, long n, double* A, long lda, long strideA, double* tau,
                              long strideTau, long batch) const {
    const char* call = "cublasDgeqrfBatched";
    require_ld(call, "lda", lda, m);
    if (m < n) invalid(call, "m < n");
    if (batch == 0) return;
    require(A, static_cast<std::size_t>(strideA * (batch - 1)) * sizeof(double) + span(m, n, lda),
            call, "A (batch)");
    require(tau, static_cast<std::size_t>(strideTau * (batch - 1) + n) * sizeof(double), call,
            "tau (batch)");
    for (long b = 0; b < batch; ++b) {
        double q = 0;
        LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, lapack_int(m), lapack_int(n), nullptr,
                            lapack_int(lda), nullptr, &q, -1);
        std::vector<double> w(static_cast<std::size_t>(std::max(1.0, q)));
        LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, lapack_int(m), lapack_int(n), A + b * strideA,
                            lapack_int(lda), tau + b * strideTau, w.data(), lapack_int(w.size()));
    }
}

}  // namespace attnspec::gpu::emu
