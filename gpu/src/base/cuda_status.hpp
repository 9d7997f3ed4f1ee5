// The one set of typed, error-checked CUDA bindings of gpu/src: status::check(result, "call"), the
// overload picked by the result type, and status::check_launch("kernel") after a launch. A failed
// CUDA runtime, cuBLAS or cuSOLVER call, or a failed kernel launch, throws attnspec::Error naming
// the call, with the exit code of cuda_status_codes.hpp (71 allocation failure, 69 no usable
// device, 70 otherwise). For .cu and *_cuda.cpp files alike (no Eigen).
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "cuda_status_codes.hpp"

namespace attnspec::gpu::status {

static_assert(kCudaSuccess == cudaSuccess && kCudaMemoryAllocation == cudaErrorMemoryAllocation &&
                  kCudaInsufficientDriver == cudaErrorInsufficientDriver &&
                  kCudaNoDevice == cudaErrorNoDevice,
              "cuda_status_codes.hpp: CUDA runtime numbers differ from driver_types.h");
static_assert(kCublasAllocFailed == CUBLAS_STATUS_ALLOC_FAILED,
              "cuda_status_codes.hpp: cuBLAS numbers differ from cublas_api.h");
static_assert(CUSOLVER_STATUS_SUCCESS == 0 &&
                  kCusolverAllocFailed == CUSOLVER_STATUS_ALLOC_FAILED &&
                  CUSOLVER_STATUS_INVALID_VALUE == 3 && CUSOLVER_STATUS_EXECUTION_FAILED == 6 &&
                  CUSOLVER_STATUS_INTERNAL_ERROR == 7 && CUSOLVER_STATUS_ZERO_PIVOT == 10 &&
                  CUSOLVER_STATUS_INVALID_WORKSPACE == 31,
              "cuda_status_codes.hpp: cuSOLVER numbers differ from cusolver_common.h");

inline void check(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return;
    cudaGetLastError();  // clear a non-sticky error so later calls do not report it again
    throw failure(Library::cuda_runtime, static_cast<int>(e), what, cudaGetErrorString(e));
}

inline void check(cublasStatus_t s, const char* what) {
    if (s == CUBLAS_STATUS_SUCCESS) return;
    throw failure(Library::cublas, static_cast<int>(s), what, cublasGetStatusString(s));
}

inline void check(cusolverStatus_t s, const char* what) {
    if (s == CUSOLVER_STATUS_SUCCESS) return;
    throw failure(Library::cusolver, static_cast<int>(s), what,
                  cusolver_status_name(static_cast<int>(s)));
}

// After a <<<...>>> launch: a bad configuration or a sticky error from an earlier kernel.
inline void check_launch(const char* what) { check(cudaGetLastError(), what); }

}  // namespace attnspec::gpu::status
