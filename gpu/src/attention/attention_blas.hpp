// Typed cuBLAS GEMM bindings for the attention twins (double / float overloads, error-checked),
// column-major as cuBLAS: C = alpha op(A) op(B) + beta C. Host code only.
#pragma once
#include "attention_cuda_status.hpp"
#include "attnspec/gpu/base/context.hpp"

namespace attnspec::gpu::attn {

inline int blas_int(long v) {
    if (v < 0 || v > 2147483647L)
        throw Error(ExitCode::DataError,
                    "matrix dimension " + std::to_string(v) + " exceeds cuBLAS's 32-bit sizes");
    return static_cast<int>(v);
}

inline void gemm(const Context& ctx, bool ta, bool tb, long m, long n, long k, double alpha,
                 const double* A, long lda, const double* B, long ldb, double beta, double* C,
                 long ldc) {
    cublas_ok(cublasDgemm(ctx.cublas(), ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                          tb ? CUBLAS_OP_T : CUBLAS_OP_N, blas_int(m), blas_int(n), blas_int(k),
                          &alpha, A, blas_int(lda), B, blas_int(ldb), &beta, C, blas_int(ldc)),
              "cublasDgemm");
}

inline void gemm(const Context& ctx, bool ta, bool tb, long m, long n, long k, float alpha,
                 const float* A, long lda, const float* B, long ldb, float beta, float* C,
                 long ldc) {
    cublas_ok(cublasSgemm(ctx.cublas(), ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                          tb ? CUBLAS_OP_T : CUBLAS_OP_N, blas_int(m), blas_int(n), blas_int(k),
                          &alpha, A, blas_int(lda), B, blas_int(ldb), &beta, C, blas_int(ldc)),
              "cublasSgemm");
}

// `batch` products with the operands strideA / strideB / strideC elements apart.
inline void gemm_batched(const Context& ctx, bool ta, bool tb, long m, long n, long k, double alpha,
                         const double* A, long lda, long strideA, const double* B, long ldb,
                         long strideB, double beta, double* C, long ldc, long strideC, long batch) {
    cublas_ok(cublasDgemmStridedBatched(
                  ctx.cublas(), ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                  blas_int(m), blas_int(n), blas_int(k), &alpha, A, blas_int(lda), strideA, B,
                  blas_int(ldb), strideB, &beta, C, blas_int(ldc), strideC, blas_int(batch)),
              "cublasDgemmStridedBatched");
}

inline void gemm_batched(const Context& ctx, bool ta, bool tb, long m, long n, long k, float alpha,
                         const float* A, long lda, long strideA, const float* B, long ldb,
                         long strideB, float beta, float* C, long ldc, long strideC, long batch) {
    cublas_ok(cublasSgemmStridedBatched(
                  ctx.cublas(), ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                  blas_int(m), blas_int(n), blas_int(k), &alpha, A, blas_int(lda), strideA, B,
                  blas_int(ldb), strideB, &beta, C, blas_int(ldc), strideC, blas_int(batch)),
              "cublasSgemmStridedBatched");
}

}  // namespace attnspec::gpu::attn
