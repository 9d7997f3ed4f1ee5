// gpu::Context, DeviceBuffer (CUDA build). Twin: none. CPU-only builds: base_stub.cpp.
#include <string>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/context.hpp"
#include "cuda_status.hpp"

namespace attnspec::gpu {

Context::Context(int device, MathMode mode) : device_(device), mode_(mode) {
    int count = 0;
    status::check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (device < 0 || device >= count)
        throw Error(ExitCode::NoDevice, "CUDA device " + std::to_string(device) +
                                            " does not exist (" + std::to_string(count) +
                                            " device(s) present)");
    status::check(cudaSetDevice(device), "cudaSetDevice");
    try {
        status::check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                      "cudaStreamCreateWithFlags");
        status::check(cublasCreate(&cublas_), "cublasCreate");
        status::check(cublasSetStream(cublas_, stream_), "cublasSetStream");
        status::check(cublasSetMathMode(cublas_, mode == MathMode::pedantic ? CUBLAS_PEDANTIC_MATH
                                                                            : CUBLAS_DEFAULT_MATH),
                      "cublasSetMathMode");
        status::check(cusolverDnCreate(&cusolver_), "cusolverDnCreate");
        status::check(cusolverDnSetStream(cusolver_, stream_), "cusolverDnSetStream");
        if (mode == MathMode::pedantic)
            status::check(cusolverDnSetDeterministicMode(cusolver_, CUSOLVER_DETERMINISTIC_RESULTS),
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

void Context::synchronize() const {
    status::check(cudaStreamSynchronize(stream_), "kernel or copy");
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes == 0) return;
    const cudaError_t e = cudaMalloc(&ptr_, bytes);
    if (e != cudaSuccess) {
        cudaGetLastError();
        ptr_ = nullptr;
        throw Error(status::exit_code_for(status::Library::cuda_runtime, static_cast<int>(e)),
                    "device allocation of " + std::to_string(bytes) +
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
    status::check(cudaMemcpyAsync(static_cast<char*>(ptr_) + offset, host, bytes,
                                  cudaMemcpyHostToDevice, ctx.stream()),
                  "cudaMemcpyAsync host to device");
    ctx.synchronize();
}

void DeviceBuffer::download_sync(const Context& ctx, void* host, std::size_t bytes,
                                 std::size_t offset) const {
    check_range(offset, bytes, bytes_);
    if (bytes == 0) return;
    status::check(cudaMemcpyAsync(host, static_cast<const char*>(ptr_) + offset, bytes,
                                  cudaMemcpyDeviceToHost, ctx.stream()),
                  "cudaMemcpyAsync device to host");
    ctx.synchronize();
}

void DeviceBuffer::zero(const Context& ctx) {
    if (bytes_ == 0) return;
    status::check(cudaMemsetAsync(ptr_, 0, bytes_, ctx.stream()), "cudaMemsetAsync");
}

}  // namespace attnspec::gpu
