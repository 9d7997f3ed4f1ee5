// Why a CUDA device is (not) usable, in words, without loading the CUDA runtime, cuBLAS or
// cuSOLVER: probe_driver() dlopens libcuda.so.1 and asks the driver API (cuInit,
// cuDriverGetVersion, cuDeviceGetCount, and the name and compute capability of device 0).
// describe_driver() turns a probe result into words; it is a pure function, so the CPU suite
// tests every wording with planted probe results (tests/cpu/base/test_gpu_driver_probe.cpp).
// Host-only (g++): gpu/src/base/driver_probe.cpp, linked into the CLI in every build.
#pragma once
#include <string>

namespace attnspec::gpu {

struct DriverProbe {
    bool library_found = false;  // dlopen("libcuda.so.1") succeeded
    std::string load_error;      // dlerror() when it did not
    int init_result = -1;        // CUresult of cuInit(0): 0 success, 100 no device, ...
    int driver_version = 0;      // cuDriverGetVersion, e.g. 13000 for CUDA 13.0; 0 unknown
    int device_count = 0;        // cuDeviceGetCount after a successful cuInit
    std::string device_name;     // device 0
    int cc_major = 0, cc_minor = 0;
};

// Never throws. Cost: one dlopen; where a driver exists, cuInit (driver start-up, ~0.1 s).
DriverProbe probe_driver();

// The CUDA version this build was compiled against (major*1000 + minor*10, e.g. 13000), 0 when
// CUDA is not compiled (ATTNSPEC_CUDA=OFF).
int build_cuda_version();

struct DriverStatus {
    bool usable = false;  // a device that this build can run on
    std::string words;    // e.g. "no NVIDIA driver (libcuda.so.1 not found)"
};
// From a probe and the CUDA version a build needs (build_cuda_version(); 0: not compiled, then
// only the driver is described):
//   "no NVIDIA driver (libcuda.so.1 not found)"
//   "driver supports CUDA 12.4, this build needs 13.0"
//   "driver present, no device"
//   "driver present, cuInit failed (CUresult 999)"
//   "device 0: NVIDIA H200 (sm_90), driver supports CUDA 13.0"
DriverStatus describe_driver(const DriverProbe& p, int needed_version);

// The one line `info` and every report's provenance attribute "cuda" show:
//   "CUDA: not compiled (built with ATTNSPEC_CUDA=OFF); <describe_driver words>"
//   "CUDA 13.0 build: <describe_driver words>"
std::string cuda_summary(const DriverProbe& p, int needed_version);

// "13.0" from 13000.
std::string cuda_version_text(int v);

}  // namespace attnspec::gpu
