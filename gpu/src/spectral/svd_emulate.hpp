// The SVD sequence's operations for `gpu-check --emulate` (svd_sequence.hpp lists them): the
// kernel body of svd_kernels.hpp on the CPU grid runner, buffers and cuSOLVER / cuBLAS calls on
// emu::CpuSolver (LAPACK on the device calls' arguments, each operand checked against its
// buffer). Host-only. The CPU suite plants layout faults by deriving from CpuOps and hiding one
// call (the sequence is a template on the derived type). The runner-only planted faults
// (index-math, no-barrier) reach the kernel body here, never on the device.
#pragma once
#include <cstddef>

#include "../base/cpu_solver.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "svd_kernels.hpp"

namespace attnspec::gpu::svd_seq {

// The planted fault as the kernel body receives it (svd_kernels.hpp kFault*).
inline int runner_fault() {
    return planted_fault() == PlantedFault::index_math   ? svd_logic::kFaultSwappedTile
           : planted_fault() == PlantedFault::no_barrier ? svd_logic::kFaultNoBarrier
                                                         : svd_logic::kFaultNone;
}

struct CpuOps : emu::CpuOpsBase {
    void extract_r(const double* qr, double* R, long m, long n, long batch) {
        if (batch > 0) {
            solver.require(qr, static_cast<std::size_t>(batch * m * n) * 8, "extract_r", "qr");
            solver.require(R, static_cast<std::size_t>(batch * n * n) * 8, "extract_r", "R");
        }
        svd_logic::launch_extract_r(grid, qr, R, m, n, batch, runner_fault());
    }
    std::size_t gesvdj_buffer_doubles(bool vectors, int m, int n, int lda, int ldu, int ldv) {
        return solver.gesvdj_buffer_doubles(vectors, m, n, lda, ldu, ldv);
    }
    void gesvdj(bool vectors, int m, int n, double* A, int lda, double* S, double* U, int ldu,
                double* V, int ldv, double* work, std::size_t lw, int* info) {
        solver.gesvdj(vectors, m, n, A, lda, S, U, ldu, V, ldv, work, lw, info);
    }
    std::size_t gesvdj_batched_buffer_doubles(bool vectors, int m, int n, int lda, int ldu, int ldv,
                                              int batch) {
        return solver.gesvdj_batched_buffer_doubles(vectors, m, n, lda, ldu, ldv, batch);
    }
    void gesvdj_batched(bool vectors, int m, int n, double* A, int lda, double* S, double* U,
                        int ldu, double* V, int ldv, double* work, std::size_t lw, int* info,
                        int batch) {
        solver.gesvdj_batched(vectors, m, n, A, lda, S, U, ldu, V, ldv, work, lw, info, batch);
    }
    void geqrf_batched(int m, int n, double* A, int lda, long strideA, double* tau, long strideTau,
                       int batch) {
        solver.geqrf_batched(m, n, A, lda, strideA, tau, strideTau, batch);
    }
};

}  // namespace attnspec::gpu::svd_seq
