// Status checks for the attention twins' host code (cuBLAS, cuSOLVER, CUDA runtime): a failed
// call throws Error naming the call, OutOfMemory (exit 71) for an allocation failure, Internal
// (exit 70) otherwise. Included only by gpu/src/attention/*_cuda.{cpp,cu}.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <string>

#include "attnspec/base/errors.hpp"

namespace attnspec::gpu::attn {

inline void cuda_ok(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return;
    cudaGetLastError();
    throw Error(e == cudaErrorMemoryAllocation ? ExitCode::OutOfMemory : ExitCode::Internal,
                std::string(what) + ": " + cudaGetErrorString(e));
}

inline void cublas_ok(cublasStatus_t s, const char* what) {
    if (s == CUBLAS_STATUS_SUCCESS) return;
    throw Error(s == CUBLAS_STATUS_ALLOC_FAILED ? ExitCode::OutOfMemory : ExitCode::Internal,
                std::string(what) + ": " + cublasGetStatusString(s));
}

inline void cusolver_ok(cusolverStatus_t s, const char* what) {
    if (s == CUSOLVER_STATUS_SUCCESS) return;
    throw Error(s == CUSOLVER_STATUS_ALLOC_FAILED ? ExitCode::OutOfMemory : ExitCode::Internal,
                std::string(what) + ": cuSOLVER status " + std::to_string(static_cast<int>(s)));
}

}  // namespace attnspec::gpu::attn
