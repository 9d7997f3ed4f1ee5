// Typed cuBLAS GEMM bindings for the attention twins (double / float overloads, error-checked),
// column-major as cuBLAS: C = alpha op(A) op(B) + beta C. Host code only.
#pragma once
#include "../base/cuda_status.hpp"
#include "attnspec/gpu/base/context.hpp"

namespace attnspec::gpu::attn {

inline int blas_int(long v) {
    if (v < 0 || v > 2147483647L)
        throw Error(ExitCode::DataError,
                    "matrix dimension " + std::to_string(v) + " exceeds cuBLAS's 32-bit sizes");
    return static_cast<int>(v);
}

// The cuBLAS entry points per scalar type.
template <class T>
struct BlasFns;
template <>
struct BlasFns<double> {
    static constexpr auto gemm = cublasDgemm;
    static constexpr auto gemm_batched = cublasDgemmStridedBatched;
    static constexpr const char* name = "cublasDgemm";
};
template <>
struct BlasFns<float> {
    static constexpr auto gemm = cublasSgemm;
    static constexpr auto gemm_batched = cublasSgemmStridedBatched;
    static constexpr const char* name = "cublasSgemm";
};

inline cublasOperation_t op(bool transpose) { return transpose ? CUBLAS_OP_T : CUBLAS_OP_N; }

template <class T>
void gemm(const Context& ctx, bool ta, bool tb, long m, long n, long k, T alpha, const T* A,
          long lda, const T* B, long ldb, T beta, T* C, long ldc) {
    status::check(
        BlasFns<T>::gemm(ctx.cublas(), op(ta), op(tb), blas_int(m), blas_int(n), blas_int(k),
                         &alpha, A, blas_int(lda), B, blas_int(ldb), &beta, C, blas_int(ldc)),
        BlasFns<T>::name);
}

// `batch` products with the operands strideA / strideB / strideC elements apart.
template <class T>
void gemm_batched(const Context& ctx, bool ta, bool tb, long m, long n, long k, T alpha, const T* A,
                  long lda, long strideA, const T* B, long ldb, long strideB, T beta, T* C,
                  long ldc, long strideC, long batch) {
    status::check(
        BlasFns<T>::gemm_batched(ctx.cublas(), op(ta), op(tb), blas_int(m), blas_int(n),
                                 blas_int(k), &alpha, A, blas_int(lda), strideA, B, blas_int(ldb),
                                 strideB, &beta, C, blas_int(ldc), strideC, blas_int(batch)),
        BlasFns<T>::name);
}

}  // namespace attnspec::gpu::attn
