// The kappa(J) sequence's operations for `gpu-check --emulate` (jacobian_spectrum_sequence.hpp
// lists them): the kernel bodies of jacobian_spectrum_kernels.hpp on the CPU grid runner, buffers
// and cuBLAS / cuSOLVER calls on emu::CpuSolver (the CPU BLAS and LAPACK on the device calls'
// arguments, each operand checked against its buffer). Host-only. The CPU suite plants layout
// faults by deriving from CpuOps and hiding one call. The runner-only planted faults (index-math,
// no-barrier) reach the kernel bodies here, never on the device.
#pragma once
#include <cstddef>
#include <string>

#include "../base/cpu_solver.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "jacobian_spectrum_kernels.hpp"

namespace attnspec::gpu::jac_seq {

// The planted fault as the kernel bodies receive it (jacobian_spectrum_kernels.hpp kFault*).
inline int runner_fault() {
    return planted_fault() == PlantedFault::index_math   ? gram_logic::kFaultRowSplit
           : planted_fault() == PlantedFault::no_barrier ? gram_logic::kFaultNoBarrier
                                                         : gram_logic::kFaultNone;
}

struct CpuOps : emu::CpuOpsBase {
    void p_factors(const double* S, const double* V, const double* A, double* P, long N, long d) {
        const auto nn = static_cast<std::size_t>(N * N) * 8,
                   nd = static_cast<std::size_t>(N * d) * 8;
        solver.require(S, nn, "p_factors", "S"), solver.require(V, nd, "p_factors", "V");
        solver.require(A, nd, "p_factors", "A");
        solver.require(P, nd * static_cast<std::size_t>(N), "p_factors", "P");
        gram_logic::launch_p_factors(grid, S, V, A, P, N, d, runner_fault());
    }
    void gram_combine(double* G, long Nd, const double* XX, const double* QQ, const double* VV,
                      const double* T, long ldT, long N, long cp, bool skip, bool drop) {
        const auto nn = static_cast<std::size_t>(N * N) * 8;
        solver.require(G, static_cast<std::size_t>(Nd * Nd) * 8, "gram_combine", "G");
        solver.require(XX, nn, "gram_combine", "XX"), solver.require(QQ, nn, "gram_combine", "QQ");
        solver.require(VV, nn, "gram_combine", "VV");
        solver.require(T, static_cast<std::size_t>(ldT * N) * 8, "gram_combine", "T");
        gram_logic::launch_gram_combine(grid, G, Nd, XX, QQ, VV, T, ldT, N, cp, skip, drop,
                                        runner_fault());
    }
    void gemm(bool ta, bool tb, long m, long n, long k, double alpha, const double* A, long lda,
              const double* B, long ldb, double beta, double* C, long ldc) {
        solver.gemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    }
    double asum(long n, const double* x, long incx) { return solver.asum(n, x, incx); }
    void symv_lower(long n, double alpha, const double* A, long lda, const double* x, long incx,
                    double beta, double* y, long incy) {
        solver.symv_lower(n, alpha, A, lda, x, incx, beta, y, incy);
    }
    long syevd_buffer(long n, const double* A, long lda) { return solver.syevd_buffer(n, A, lda); }
    void syevd(long n, double* A, long lda, double* W, double* work, long lwork, int* info) {
        solver.syevd(n, A, lda, W, work, lwork, info);
    }
    std::string math_mode_description() const {
        return "the CPU grid runner and the CPU BLAS / LAPACK (emulated)";
    }
};

}  // namespace attnspec::gpu::jac_seq
