// gpu::Context, DeviceBuffer (CUDA build). Twin: none. CPU-only builds: device_stub.cpp.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <string>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/context.hpp"

namespace attnspec::gpu {

namespace {

void check_cuda(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return;
    cudaGetLastError();  // clear a non-sticky error
    const ExitCode code = e == cudaErrorMemoryAllocation ? ExitCode::OutOfMemory
                          : (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
                              ? ExitCode::NoDevice
                              : ExitCode::Internal;
    throw Error(code, std::string(what) + ": " + cudaGetErrorString(e));
}

void check_cublas(cublasStatus_t s, const char* what) {
    if (s == CUBLAS_STATUS_SUCCESS) return;
    throw Error(s == CUBLAS_STATUS_ALLOC_FAILED ? ExitCode::OutOfMemory : ExitCode::Internal,
                std::string(what) + ": " + cublasGetStatusString(s));
}

void check_cusolver(cusolverStatus_t s, const char* what) {
    if (s == CUSOLVER_STATUS_SUCCESS) return;
    throw Error(s == CUSOLVER_STATUS_ALLOC_FAILED ? ExitCode::OutOfMemory : ExitCode::Internal,
                std::string(what) + ": cusolver status " + std::to_string(static_cast<int>(s)));
}

}  // namespace

Context::Context(int device, MathMode mode) : device_(device), mode_(mode) {
    int count = 0;
    check_cuda(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (device < 0 || device >= count)
        throw Error(ExitCode::NoDevice, "CUDA device " + std::to_string(device) +
                                            " does not exist (" + std::to_string(count) +
                                            " device(s) present)");
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    try {
        check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                   "cudaStreamCreateWithFlags");
        check_cublas(cublasCreate(&cublas_), "cublasCreate");
        check_cublas(cublasSetStream(cublas_, stream_), "cublasSetStream");
        check_cublas(cublasSetMathMode(cublas_, mode == MathMode::pedantic ? CUBLAS_PEDANTIC_MATH
                                                                           : CUBLAS_DEFAULT_MATH),
                     "cublasSetMathMode");
        check_cusolver(cusolverDnCreate(&cusolver_), "cusolverDnCreate");
        check_cusolver(cusolverDnSetStream(cusolver_, stream_), "cusolverDnSetStream");
        if (mode == MathMode::pedantic)
            check_cusolver(
                cusolverDnSetDeterministicMode(cusolver_, CUSOLVER_DETERMINISTIC_RESULTS),
                "cusolverDnSetDeterministicMode");
    } catch (...) {
        if (cusolver_) cusolverDnDestroy(cusolver_);
        if (cublas_) cublasDestroy(cublas_);
        if (stream_) cudaStreamDestroy(stream_);
        throw;
    }
}

Context::~Context() {
    if (cusolver_) cusolverDnDestroy(cusolver_);
    if (cublas_) cublasDestroy(cublas_);
    if (stream_) cudaStreamDestroy(stream_);
}

std::string Context::math_mode_description() const {
    return mode_ == MathMode::pedantic
               ? "cuBLAS CUBLAS_PEDANTIC_MATH; cuSOLVER CUSOLVER_DETERMINISTIC_RESULTS"
               : "cuBLAS CUBLAS_DEFAULT_MATH; cuSOLVER default (non-deterministic allowed)";
}

void Context::synchronize() const { check_cuda(cudaStreamSynchronize(stream_), "kernel or copy"); }

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes == 0) return;
    const cudaError_t e = cudaMalloc(&ptr_, bytes);
    if (e != cudaSuccess) {
        cudaGetLastError();
        ptr_ = nullptr;
        throw Error(ExitCode::OutOfMemory, "device allocation of " + std::to_string(bytes) +
                                               " bytes failed: " + cudaGetErrorString(e));
    }
}

DeviceBuffer::~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) {
    o.ptr_ = nullptr;
    o.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
        if (ptr_) cudaFree(ptr_);
        ptr_ = o.ptr_;
        bytes_ = o.bytes_;
        o.ptr_ = nullptr;
        o.bytes_ = 0;
    }
    return *this;
}

namespace {
void check_range(std::size_t offset, std::size_t bytes, std::size_t have) {
    if (offset > have || bytes > have - offset)
        throw Error(ExitCode::Internal, "device transfer of " + std::to_string(bytes) +
                                            " bytes at offset " + std::to_string(offset) +
                                            " overruns a buffer of " + std::to_string(have));
}
}  // namespace

void DeviceBuffer::upload_sync(const Context& ctx, const void* host, std::size_t bytes,
                               std::size_t offset) {
    check_range(offset, bytes, bytes_);
    if (bytes == 0) return;
    check_cuda(cudaMemcpyAsync(static_cast<char*>(ptr_) + offset, host, bytes,
                               cudaMemcpyHostToDevice, ctx.stream()),
               "cudaMemcpyAsync host to device");
    ctx.synchronize();
}

void DeviceBuffer::download_sync(const Context& ctx, void* host, std::size_t bytes,
                                 std::size_t offset) const {
    check_range(offset, bytes, bytes_);
    if (bytes == 0) return;
    check_cuda(cudaMemcpyAsync(host, static_cast<const char*>(ptr_) + offset, bytes,
                               cudaMemcpyDeviceToHost, ctx.stream()),
               "cudaMemcpyAsync device to host");
    ctx.synchronize();
}

void DeviceBuffer::zero(const Context& ctx) {
    if (bytes_ == 0) return;
    check_cuda(cudaMemsetAsync(ptr_, 0, bytes_, ctx.stream()), "cudaMemsetAsync");
}

}  // namespace attnspec::gpu
