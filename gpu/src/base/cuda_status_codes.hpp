// How a failed CUDA runtime, cuBLAS or cuSOLVER call maps to an exit code and a message, with no
// CUDA header: the status arrives as a plain int, so the CPU suite tests the mapping
// (tests/cpu/gpu/test_cuda_status_codes.cpp). The typed checks that throw live in cuda_status.hpp,
// which static_asserts every number below against the CUDA headers' enums.
//   allocation failure (cudaErrorMemoryAllocation, CUBLAS_/CUSOLVER_STATUS_ALLOC_FAILED) -> 71
//   no usable device (cudaErrorNoDevice, cudaErrorInsufficientDriver)                   -> 69
//   anything else (a bad argument, a failed launch, an illegal address: a bug)          -> 70
#pragma once
#include <string>

#include "attnspec/base/errors.hpp"

namespace attnspec::gpu::status {

enum class Library { cuda_runtime, cublas, cusolver };

// The status numbers the mapping singles out (CUDA 13: driver_types.h, cublas_api.h,
// cusolver_common.h).
constexpr int kCudaSuccess = 0;
constexpr int kCudaMemoryAllocation = 2;
constexpr int kCudaInsufficientDriver = 35;
constexpr int kCudaNoDevice = 100;
constexpr int kCublasAllocFailed = 3;
constexpr int kCusolverAllocFailed = 2;

inline ExitCode exit_code_for(Library lib, int code) {
    switch (lib) {
        case Library::cuda_runtime:
            if (code == kCudaMemoryAllocation) return ExitCode::OutOfMemory;
            if (code == kCudaNoDevice || code == kCudaInsufficientDriver) return ExitCode::NoDevice;
            return ExitCode::Internal;
        case Library::cublas:
            return code == kCublasAllocFailed ? ExitCode::OutOfMemory : ExitCode::Internal;
        case Library::cusolver:
            return code == kCusolverAllocFailed ? ExitCode::OutOfMemory : ExitCode::Internal;
    }
    return ExitCode::Internal;
}

// cuSOLVER has no status-string function: its enum's names (cusolver_common.h, CUDA 13), or
// "cuSOLVER status N" for a number not listed.
inline std::string cusolver_status_name(int code) {
    switch (code) {
        case 0:
            return "CUSOLVER_STATUS_SUCCESS";
        case 1:
            return "CUSOLVER_STATUS_NOT_INITIALIZED";
        case 2:
            return "CUSOLVER_STATUS_ALLOC_FAILED";
        case 3:
            return "CUSOLVER_STATUS_INVALID_VALUE";
        case 4:
            return "CUSOLVER_STATUS_ARCH_MISMATCH";
        case 5:
            return "CUSOLVER_STATUS_MAPPING_ERROR";
        case 6:
            return "CUSOLVER_STATUS_EXECUTION_FAILED";
        case 7:
            return "CUSOLVER_STATUS_INTERNAL_ERROR";
        case 8:
            return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
        case 9:
            return "CUSOLVER_STATUS_NOT_SUPPORTED";
        case 10:
            return "CUSOLVER_STATUS_ZERO_PIVOT";
        case 11:
            return "CUSOLVER_STATUS_INVALID_LICENSE";
        case 31:
            return "CUSOLVER_STATUS_INVALID_WORKSPACE";
        default:
            return "cuSOLVER status " + std::to_string(code);
    }
}

// The Error a failed call throws: "<what>: <the library's words>", with exit_code_for's code.
inline Error failure(Library lib, int code, const char* what, const std::string& words) {
    return Error(exit_code_for(lib, code), std::string(what) + ": " + words);
}

}  // namespace attnspec::gpu::status
