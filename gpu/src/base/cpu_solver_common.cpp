// The emulated cuBLAS / cuSOLVER calls (cpu_solver.hpp): argument checks as the vendor library's,
// operand extents against the solver's buffers, then cblas / LAPACKE on the same arguments.
#include <cblas.h>
#include <lapacke.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
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

void require_size(const char* call, const char* name, long v) {
    if (v < 0 || v > 2147483647L) invalid(call, std::string(name) + " = " + std::to_string(v));
}

// The bytes a rows x cols operand with leading dimension ld spans.
std::size_t span(long rows, long cols, long ld, std::size_t elem) {
    if (rows <= 0 || cols <= 0) return 0;
    return static_cast<std::size_t>(ld * (cols - 1) + rows) * elem;
}

// x rounded to the refinement solver's lowest precision (round to nearest even).
float round_to(IrsLowest p, double x) {
    switch (p) {
        case IrsLowest::fp16:
            return static_cast<float>(Eigen::half(static_cast<float>(x)));
        case IrsLowest::bf16:
            return static_cast<float>(Eigen::bfloat16(static_cast<float>(x)));
        case IrsLowest::tf32: {
            float f = static_cast<float>(x);
            std::uint32_t u = 0;
            std::memcpy(&u, &f, sizeof u);
            if ((u & 0x7f800000u) != 0x7f800000u) {  // finite: keep 10 mantissa bits
                u += 0xfffu + ((u >> 13) & 1u);
                u &= ~0x1fffu;
            }
            std::memcpy(&f, &u, sizeof f);
            return f;
        }
        case IrsLowest::fp32:
            break;
    }
    return static_cast<float>(x);
}

}  // namespace

void CpuSolver::track(const void* p, std::size_t bytes) {
    buffers_[reinterpret_cast<std::uintptr_t>(p)] = bytes;
}

void CpuSolver::untrack(const void* p) { buffers_.erase(reinterpret_cast<std::uintptr_t>(p)); }

void CpuSolver::require(const void* p, std::size_t bytes, const char* call,
                        const char* operand) const {
    if (bytes == 0) return;
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    auto it = buffers_.upper_bound(a);
    if (it != buffers_.begin()) {
        --it;
        if (a + bytes <= it->first + it->second) return;
        throw Error(ExitCode::Internal,
                    std::string(call) + ": operand " + operand + " (" + std::to_string(bytes) +
                        " bytes from offset " + std::to_string(a - it->first) +
                        ") reaches past its buffer of " + std::to_string(it->second) +
                        " bytes (a leading dimension or stride too large)");
    }
    throw Error(ExitCode::Internal,
                std::string(call) + ": operand " + operand + " is not an emulated device buffer");
}

void CpuSolver::gemm(bool ta, bool tb, long m, long n, long k, double alpha, const double* A,
                     long lda, const double* B, long ldb, double beta, double* C, long ldc) const {
    const char* call = "cublasDgemm";
    require_size(call, "m", m), require_size(call, "n", n), require_size(call, "k", k);
    const long ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    require_ld(call, "lda", lda, ar), require_ld(call, "ldb", ldb, br);
    require_ld(call, "ldc", ldc, m);
    if (k > 0) {
        require(A, span(ar, ac, lda, sizeof(double)), call, "A");
        require(B, span(br, bc, ldb, sizeof(double)), call, "B");
    }
    require(C, span(m, n, ldc, sizeof(double)), call, "C");
    if (m == 0 || n == 0) return;
    cblas_dgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                int(m), int(n), int(k), alpha, A, int(lda), B, int(ldb), beta, C, int(ldc));
}

double CpuSolver::asum(long n, const double* x, long incx) const {
    const char* call = "cublasDasum";
    require_size(call, "n", n);
    if (incx <= 0) invalid(call, "incx = " + std::to_string(incx));
    require(x, span(1, n, incx, sizeof(double)), call, "x");
    return n > 0 ? cblas_dasum(int(n), x, int(incx)) : 0.0;
}

void CpuSolver::symv_lower(long n, double alpha, const double* A, long lda, const double* x,
                           long incx, double beta, double* y, long incy) const {
    const char* call = "cublasDsymv";
    require_size(call, "n", n), require_ld(call, "lda", lda, n);
    if (incx <= 0 || incy <= 0) invalid(call, "incx, incy must be positive here");
    require(A, span(n, n, lda, sizeof(double)), call, "A");
    require(x, span(1, n, incx, sizeof(double)), call, "x");
    require(y, span(1, n, incy, sizeof(double)), call, "y");
    if (n == 0) return;
    cblas_dsymv(CblasColMajor, CblasLower, int(n), alpha, A, int(lda), x, int(incx), beta, y,
                int(incy));
}

long CpuSolver::syevd_buffer(long n, const double*, long lda) const {
    const char* call = "cusolverDnDsyevd_bufferSize";
    require_size(call, "n", n), require_ld(call, "lda", lda, n);
    double q = 0;
    lapack_int iq = 0;
    LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'N', 'L', lapack_int(n), nullptr,
                        lapack_int(std::max(1L, n)), nullptr, &q, -1, &iq, -1);
    return std::max(1L, static_cast<long>(q));
}

void CpuSolver::syevd(long n, double* A, long lda, double* W, double* work, long lwork,
                      int* info) const {
    const char* call = "cusolverDnDsyevd";
    require_size(call, "n", n), require_ld(call, "lda", lda, n);
    const long need = syevd_buffer(n, A, lda);
    if (lwork < need)
        invalid(call,
                "lwork = " + std::to_string(lwork) + " below the query's " + std::to_string(need));
    require(A, span(n, n, lda, sizeof(double)), call, "A");
    require(W, span(n, 1, n, sizeof(double)), call, "W");
    require(work, static_cast<std::size_t>(lwork) * sizeof(double), call, "work");
    require(info, sizeof(int), call, "info");
    lapack_int iwork = 1;
    *info = static_cast<int>(LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'N', 'L', lapack_int(n), A,
                                                 lapack_int(lda), W, work, lapack_int(lwork),
                                                 &iwork, 1));
}

double CpuSolver::nrm2(long len, const double* x) const {
    require(x, span(len, 1, len, sizeof(double)), "cublasDnrm2_64", "x");
    return len > 0 ? cblas_dnrm2(int(len), x, 1) : 0.0;
}

void CpuSolver::copy(double* dst, const double* src, long len) const {
    const std::size_t bytes = span(len, 1, len, sizeof(double));
    require(src, bytes, "cudaMemcpyAsync", "src");
    require(dst, bytes, "cudaMemcpyAsync", "dst");
    if (bytes) std::memcpy(dst, src, bytes);
}

GetrfWork CpuSolver::getrf_buffer(long m, long n, const double*, long lda) const {
    const char* call = "cusolverDnXgetrf_bufferSize";
    require_size(call, "m", m), require_size(call, "n", n), require_ld(call, "lda", lda, m);
    return {};  // LAPACK's dgetrf needs no workspace
}

void CpuSolver::getrf(long m, long n, double* A, long lda, std::int64_t* ipiv, int* info) const {
    const char* call = "cusolverDnXgetrf";
    require_size(call, "m", m), require_size(call, "n", n), require_ld(call, "lda", lda, m);
    require(A, span(m, n, lda, sizeof(double)), call, "A");
    const long p = std::min(m, n);
    require(ipiv, span(p, 1, p, sizeof(std::int64_t)), call, "ipiv");
    require(info, sizeof(int), call, "info");
    std::vector<lapack_int> piv(static_cast<std::size_t>(std::max(1L, p)));
    const lapack_int r = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, lapack_int(m), lapack_int(n), A,
                                             lapack_int(lda), piv.data());
    for (long i = 0; i < p; ++i) ipiv[i] = piv[static_cast<std::size_t>(i)];
    *info = static_cast<int>(r);
}

void CpuSolver::getrs(bool trans, long n, long nrhs, const double* LU, long lda,
                      const std::int64_t* ipiv, double* B, long ldb, int* info) const {
    const char* call = "cusolverDnXgetrs";
    require_size(call, "n", n), require_size(call, "nrhs", nrhs);
    require_ld(call, "lda", lda, n), require_ld(call, "ldb", ldb, n);
    require(LU, span(n, n, lda, sizeof(double)), call, "A");
    require(ipiv, span(n, 1, n, sizeof(std::int64_t)), call, "ipiv");
    require(B, span(n, nrhs, ldb, sizeof(double)), call, "B");
    require(info, sizeof(int), call, "info");
    std::vector<lapack_int> piv(static_cast<std::size_t>(std::max(1L, n)));
    for (long i = 0; i < n; ++i) piv[static_cast<std::size_t>(i)] = lapack_int(ipiv[i]);
    *info = static_cast<int>(LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, trans ? 'T' : 'N', lapack_int(n),
                                                 lapack_int(nrhs), LU, lapack_int(lda), piv.data(),
                                                 B, lapack_int(ldb)));
}

int CpuSolver::irs_gesv(IrsLowest lowest, long n, long nrhs, const double* A, long lda,
                        const double* B, long ldb, double* X, long ldx, int* info) const {
    const char* call = "cusolverDnIRSXgesv";
    require_size(call, "n", n), require_size(call, "nrhs", nrhs);
    require_ld(call, "lda", lda, n), require_ld(call, "ldb", ldb, n),
        require_ld(call, "ldx", ldx, n);
    require(A, span(n, n, lda, sizeof(double)), call, "A");
    require(B, span(n, nrhs, ldb, sizeof(double)), call, "B");
    require(X, span(n, nrhs, ldx, sizeof(double)), call, "X");
    require(info, sizeof(int), call, "info");
    *info = 0;
    if (n == 0 || nrhs == 0) return 0;
    const auto N = static_cast<std::size_t>(n), R = static_cast<std::size_t>(nrhs);
    // The LU in the lowest precision (its values rounded, the factorisation in fp32).
    std::vector<float> low(N * N), d(N * R);
    std::vector<lapack_int> piv(N);
    double anrm = 0;  // ||A||_inf
    for (long i = 0; i < n; ++i) {
        double s = 0;
        for (long j = 0; j < n; ++j) s += std::abs(A[i + j * lda]);
        anrm = std::max(anrm, s);
    }
    for (long j = 0; j < n; ++j)
        for (long i = 0; i < n; ++i) low[i + j * N] = round_to(lowest, A[i + j * lda]);
    const double eps = std::numeric_limits<double>::epsilon() / 2;
    const double cte = anrm * eps * std::sqrt(static_cast<double>(n));
    std::vector<double> r(N * R);
    const auto residual_ok = [&] {  // r = B - A X; dsgesv's test per column
        for (long j = 0; j < nrhs; ++j)
            for (long i = 0; i < n; ++i) r[i + j * N] = B[i + j * ldb];
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, int(n), int(nrhs), int(n), -1.0, A,
                    int(lda), X, int(ldx), 1.0, r.data(), int(n));
        for (long j = 0; j < nrhs; ++j) {
            double xn = 0, rn = 0;
            for (long i = 0; i < n; ++i) {
                xn = std::max(xn, std::abs(X[i + j * ldx]));
                rn = std::max(rn, std::abs(r[i + j * N]));
            }
            if (!(rn <= xn * cte)) return false;
        }
        return true;
    };
    const int kMaxIter = 30;
    if (LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, int(n), int(n), low.data(), int(n), piv.data()) ==
        0) {
        for (long j = 0; j < nrhs; ++j)  // X = 0, r = B: the first solve is X = LU^{-1} B
            for (long i = 0; i < n; ++i) X[i + j * ldx] = 0, r[i + j * N] = B[i + j * ldb];
        for (int it = 0; it <= kMaxIter; ++it) {
            for (std::size_t t = 0; t < N * R; ++t) d[t] = static_cast<float>(r[t]);
            LAPACKE_sgetrs_work(LAPACK_COL_MAJOR, 'N', int(n), int(nrhs), low.data(), int(n),
                                piv.data(), d.data(), int(n));
            for (long j = 0; j < nrhs; ++j)
                for (long i = 0; i < n; ++i) X[i + j * ldx] += d[i + j * N];
            if (residual_ok()) return it;  // it refinement steps after the first solve
        }
    }
    // fallback: the fp64 LU
    std::vector<double> lu(N * N);
    for (long j = 0; j < n; ++j)
        for (long i = 0; i < n; ++i) lu[i + j * N] = A[i + j * lda];
    std::vector<lapack_int> piv64(N);
    const lapack_int f =
        LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, int(n), int(n), lu.data(), int(n), piv64.data());
    *info = static_cast<int>(f);
    if (f != 0) return -(kMaxIter + 1);
    for (long j = 0; j < nrhs; ++j)
        for (long i = 0; i < n; ++i) X[i + j * ldx] = B[i + j * ldb];
    LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', int(n), int(nrhs), lu.data(), int(n), piv64.data(),
                        X, int(ldx));
    return -(kMaxIter + 1);
}

}  // namespace attnspec::gpu::emu
