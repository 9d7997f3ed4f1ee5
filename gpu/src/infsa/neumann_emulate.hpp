// The Neumann sequence's operations for `gpu-check --emulate` (neumann_sequence.hpp lists them):
// the kernel bodies of neumann_kernels.hpp on the CPU grid runner, buffers and cuSOLVER / cuBLAS
// calls on emu::CpuSolver (LAPACK and the CPU BLAS on the device calls' arguments, each operand
// checked against its buffer). Host-only. The CPU suite plants layout faults by deriving from
// CpuOps and hiding one call (the sequence is a template on the derived type). The runner-only
// planted faults (index-math, no-barrier) reach the kernel bodies here, never on the device.
#pragma once
#include <cstdint>
#include <cstring>

#include "../base/cpu_solver.hpp"
#include "attnspec/gpu/base/cpu_grid.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "neumann_kernels.hpp"

namespace attnspec::gpu::neumann_seq {

// The planted fault as the kernel bodies receive it (neumann_kernels.hpp kFault*).
inline int runner_fault() {
    return planted_fault() == PlantedFault::index_math   ? neumann_logic::kFaultTransposedA
           : planted_fault() == PlantedFault::no_barrier ? neumann_logic::kFaultNoBarrier
                                                         : neumann_logic::kFaultNone;
}

struct CpuOps : emu::CpuOpsBase {
    void form_m(const double* A, double* M, double gamma, long n, long dropped) {
        solver.require(A, static_cast<std::size_t>(n * n) * 8, "form_m", "A");
        solver.require(M, static_cast<std::size_t>(n * n) * 8, "form_m", "M");
        neumann_logic::launch_form_m(grid, A, M, gamma, n, dropped, runner_fault());
    }
    void residual(const double* B, const double* X, const double* GAX, double* partial, long len) {
        const auto bytes = static_cast<std::size_t>(len) * 8;
        solver.require(B, bytes, "residual", "B"), solver.require(X, bytes, "residual", "X");
        solver.require(GAX, bytes, "residual", "GAX");
        if (len > 0)
            solver.require(partial,
                           static_cast<std::size_t>(neumann_logic::residual_blocks(len)) * 8,
                           "residual", "partial");
        neumann_logic::launch_residual(grid, B, X, GAX, partial, len, runner_fault());
    }
    void gemm(bool ta, bool tb, long m, long n, long k, double alpha, const double* A, long lda,
              const double* B, long ldb, double beta, double* C, long ldc) {
        solver.gemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    }
    double nrm2(long len, const double* x) { return solver.nrm2(len, x); }
    void copy(double* dst, const double* src, long len) { solver.copy(dst, src, len); }
    emu::GetrfWork getrf_buffer(long m, long n, double* A, long lda) {
        return solver.getrf_buffer(m, n, A, lda);
    }
    void getrf(long m, long n, double* A, long lda, std::int64_t* ipiv, void*,
               const emu::GetrfWork&, void*, int* info) {
        solver.getrf(m, n, A, lda, ipiv, info);
    }
    void getrs(bool trans, long n, long nrhs, const double* LU, long lda, const std::int64_t* ipiv,
               double* B, long ldb, int* info) {
        solver.getrs(trans, n, nrhs, LU, lda, ipiv, B, ldb, info);
    }
    int irs_gesv(IrsLowest lowest, long n, long nrhs, const double* A, long lda, const double* B,
                 long ldb, double* X, long ldx, int* info) {
        return solver.irs_gesv(lowest, n, nrhs, A, lda, B, ldb, X, ldx, info);
    }
};

}  // namespace attnspec::gpu::neumann_seq
