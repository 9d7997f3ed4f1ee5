// Device discovery for the CUDA twins: whether CUDA was compiled in, which device (if any) is
// present, and the runtime / cuBLAS / cuSOLVER versions for report provenance.
// CUDA: gpu/src/base/device_cuda.cu. CPU-only builds: gpu/src/base/base_stub.cpp (compiled =
// false).
#pragma once
#include <string>

namespace attnspec::gpu {

struct DeviceInfo {
    bool compiled = false;  // built with nvcc (ATTNSPEC_CUDA on)
    int device_count = 0;   // 0 when compiled but no usable device / driver
    std::string name;       // device 0 name, empty when none
    int cc_major = 0, cc_minor = 0;
    int runtime_version = 0;  // cudaRuntimeGetVersion, e.g. 13000
    int driver_version = 0;   // 0 when no driver is present
    int cublas_version = 0;   // cublasGetProperty (major*10000+minor*100+patch), 0 if unknown
    int cusolver_version = 0;
    std::string error;  // why no device is usable (driver message), empty otherwise

    // "CUDA: not compiled", "CUDA 13.0: compiled, no device (...)" or "CUDA 13.0: NVIDIA H200
    // (sm_90)".
    std::string summary() const;
};

// Never throws; cheap (queries the runtime once). Cost: one cudaGetDeviceCount call.
DeviceInfo device_info();

// Throws attnspec::Error(ExitCode::NoDevice) when CUDA is not compiled or no device is present.
void require_device();

}  // namespace attnspec::gpu
