// The exit code and message a failed CUDA runtime / cuBLAS / cuSOLVER call gets
// (gpu/src/base/cuda_status_codes.hpp, the mapping behind every status::check of gpu/src). The
// numbers are the CUDA 13 enums' (cuda_status.hpp static_asserts them against the headers in the
// CUDA build); the ones not named in cuda_status_codes.hpp are written out here from the headers.
#include "../../../gpu/src/base/cuda_status_codes.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::gpu::status;

TEST_CASE("CUDA runtime errors map to 71 allocation, 69 no device, 70 otherwise", "[gpu-status]") {
    CHECK(exit_code_for(Library::cuda_runtime, kCudaMemoryAllocation) == ExitCode::OutOfMemory);
    CHECK(exit_code_for(Library::cuda_runtime, kCudaNoDevice) == ExitCode::NoDevice);
    CHECK(exit_code_for(Library::cuda_runtime, kCudaInsufficientDriver) == ExitCode::NoDevice);
    // cudaErrorInvalidValue 1, cudaErrorLaunchOutOfResources 701, cudaErrorIllegalAddress 700,
    // cudaErrorInvalidConfiguration 9: a bug in the caller or a kernel, not the machine.
    for (int code : {1, 9, 700, 701})
        CHECK(exit_code_for(Library::cuda_runtime, code) == ExitCode::Internal);
    // The allocation numbers of the other libraries are not the runtime's: cuBLAS 3 and
    // cuSOLVER 2 mean nothing special to the runtime (3 = cudaErrorInitializationError).
    CHECK(exit_code_for(Library::cuda_runtime, kCublasAllocFailed) == ExitCode::Internal);
}

TEST_CASE("cuBLAS and cuSOLVER allocation failures are 71, their other failures 70",
          "[gpu-status]") {
    CHECK(exit_code_for(Library::cublas, kCublasAllocFailed) == ExitCode::OutOfMemory);
    CHECK(exit_code_for(Library::cusolver, kCusolverAllocFailed) == ExitCode::OutOfMemory);
    // cuBLAS: 1 NOT_INITIALIZED, 7 INVALID_VALUE, 13 EXECUTION_FAILED; cuSOLVER: 3 INVALID_VALUE
    // (cuBLAS's ALLOC_FAILED number), 6 EXECUTION_FAILED, 7 INTERNAL_ERROR.
    for (int code : {1, 7, 13}) CHECK(exit_code_for(Library::cublas, code) == ExitCode::Internal);
    for (int code : {1, 3, 6, 7})
        CHECK(exit_code_for(Library::cusolver, code) == ExitCode::Internal);
    // The no-device numbers are the runtime's only: a cuBLAS status 100 does not exist, so 70.
    CHECK(exit_code_for(Library::cublas, kCudaNoDevice) == ExitCode::Internal);
}

TEST_CASE("a failed call's Error names the call and the library's words", "[gpu-status]") {
    const Error oom = failure(Library::cusolver, kCusolverAllocFailed, "cusolverDnDgesvdj",
                              cusolver_status_name(kCusolverAllocFailed));
    CHECK(oom.code() == ExitCode::OutOfMemory);
    CHECK(std::string(oom.what()) == "cusolverDnDgesvdj: CUSOLVER_STATUS_ALLOC_FAILED");
    const Error launch =
        failure(Library::cuda_runtime, 9, "extract_r launch", "invalid configuration argument");
    CHECK(launch.code() == ExitCode::Internal);
    CHECK(std::string(launch.what()) == "extract_r launch: invalid configuration argument");
    CHECK(cusolver_status_name(3) == "CUSOLVER_STATUS_INVALID_VALUE");
    CHECK(cusolver_status_name(31) == "CUSOLVER_STATUS_INVALID_WORKSPACE");
    CHECK(cusolver_status_name(999) == "cuSOLVER status 999");
}
