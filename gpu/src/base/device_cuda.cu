// Device discovery (CUDA build). Twin: none (CPU-only builds link stub.cpp).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/device.hpp"
#include "attnspec/gpu/base/driver_probe.hpp"
#include "device_common.hpp"

namespace attnspec::gpu {

DeviceInfo device_info() {
    DeviceInfo info;
    info.compiled = true;
    cudaRuntimeGetVersion(&info.runtime_version);
    cudaDriverGetVersion(&info.driver_version);
    int maj = 0, min = 0, pat = 0;
    if (cublasGetProperty(MAJOR_VERSION, &maj) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(MINOR_VERSION, &min) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(PATCH_LEVEL, &pat) == CUBLAS_STATUS_SUCCESS)
        info.cublas_version = maj * 10000 + min * 100 + pat;
    if (cusolverGetProperty(MAJOR_VERSION, &maj) == CUSOLVER_STATUS_SUCCESS &&
        cusolverGetProperty(MINOR_VERSION, &min) == CUSOLVER_STATUS_SUCCESS &&
        cusolverGetProperty(PATCH_LEVEL, &pat) == CUSOLVER_STATUS_SUCCESS)
        info.cusolver_version = maj * 10000 + min * 100 + pat;
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        // In words first (no driver, too old a driver, no device), then the runtime's message.
        info.error = describe_driver(probe_driver(), build_cuda_version()).words +
                     "; runtime: " + cudaGetErrorString(err);
        cudaGetLastError();  // clear the sticky error
        return info;
    }
    info.device_count = count;
    if (count > 0) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
            info.name = prop.name;
            info.cc_major = prop.major;
            info.cc_minor = prop.minor;
        }
    } else {
        info.error = describe_driver(probe_driver(), build_cuda_version()).words;
    }
    return info;
}

std::string DeviceInfo::summary() const {
    std::string s = "CUDA " + detail::version_string(runtime_version) + ": compiled";
    if (device_count == 0) return s + ", no device (" + error + ")";
    return s + ", device 0: " + name + " (sm_" + std::to_string(cc_major) +
           std::to_string(cc_minor) + ")";
}

void require_device() {
    DeviceInfo info = device_info();
    if (info.device_count == 0) throw Error(ExitCode::NoDevice, "no CUDA device: " + info.error);
}

}  // namespace attnspec::gpu
