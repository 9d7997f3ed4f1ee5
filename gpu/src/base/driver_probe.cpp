// gpu/base/driver_probe.hpp: the driver probe through dlopen("libcuda.so.1") (host-only: no CUDA
// header; the few driver API prototypes are declared here) and its description in words.
#include "attnspec/gpu/base/driver_probe.hpp"

#include <dlfcn.h>

namespace attnspec::gpu {

namespace {
// Driver API prototypes (cuda.h): CUresult is an int enum, CUdevice an int.
using CuInit = int (*)(unsigned);
using CuDriverGetVersion = int (*)(int*);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetName = int (*)(char*, int, int);
using CuDeviceGetAttribute = int (*)(int*, int, int);
constexpr int kCuSuccess = 0;
constexpr int kCuErrorNoDevice = 100;
constexpr int kCuErrorInsufficientDriver = 35;
constexpr int kAttrCcMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrCcMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR

template <class F>
F sym(void* lib, const char* name) {
    return reinterpret_cast<F>(dlsym(lib, name));
}
}  // namespace

std::string cuda_version_text(int v) {
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

int build_cuda_version() {
#if defined(ATTNSPEC_CUDA_BUILD_VERSION)
    return ATTNSPEC_CUDA_BUILD_VERSION;
#else
    return 0;
#endif
}

DriverProbe probe_driver() {
    DriverProbe p;
    // Kept loaded for the life of the process (the CUDA runtime loads it again anyway).
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* e = dlerror();
        p.load_error = e ? e : "unknown dlopen error";
        return p;
    }
    p.library_found = true;
    const auto init = sym<CuInit>(lib, "cuInit");
    const auto version = sym<CuDriverGetVersion>(lib, "cuDriverGetVersion");
    const auto count = sym<CuDeviceGetCount>(lib, "cuDeviceGetCount");
    const auto get = sym<CuDeviceGet>(lib, "cuDeviceGet");
    const auto name = sym<CuDeviceGetName>(lib, "cuDeviceGetName");
    const auto attr = sym<CuDeviceGetAttribute>(lib, "cuDeviceGetAttribute");
    if (!init || !version || !count || !get || !name || !attr) {
        p.load_error = "libcuda.so.1 lacks a driver API entry (cuInit, cuDeviceGetCount, ...)";
        p.library_found = false;
        return p;
    }
    version(&p.driver_version);  // works before cuInit
    p.init_result = init(0);
    if (p.init_result != kCuSuccess) return p;
    if (count(&p.device_count) != kCuSuccess) p.device_count = 0;
    int dev = 0;
    if (p.device_count > 0 && get(&dev, 0) == kCuSuccess) {
        char buf[256] = {};
        if (name(buf, static_cast<int>(sizeof buf) - 1, dev) == kCuSuccess) p.device_name = buf;
        attr(&p.cc_major, kAttrCcMajor, dev);
        attr(&p.cc_minor, kAttrCcMinor, dev);
    }
    return p;
}

DriverStatus describe_driver(const DriverProbe& p, int needed_version) {
    if (!p.library_found) {
        const bool absent = p.load_error.empty() ||
                            p.load_error.find("No such file") != std::string::npos ||
                            p.load_error.find("cannot open shared object") != std::string::npos;
        return {false, absent ? "no NVIDIA driver (libcuda.so.1 not found)"
                              : "NVIDIA driver library unusable (" + p.load_error + ")"};
    }
    const std::string supports = "driver supports CUDA " + cuda_version_text(p.driver_version);
    // CUDA minor-version compatibility: a driver of the same major version runs the build.
    if (needed_version > 0 && p.driver_version > 0 &&
        p.driver_version / 1000 < needed_version / 1000)
        return {false, supports + ", this build needs " + cuda_version_text(needed_version)};
    if (p.init_result == kCuErrorInsufficientDriver)
        return {false, supports + ", too old for this system's GPU (cuInit: insufficient driver)"};
    if (p.init_result == kCuErrorNoDevice || (p.init_result == kCuSuccess && p.device_count == 0))
        return {false, "driver present, no device"};
    if (p.init_result != kCuSuccess)
        return {false,
                "driver present, cuInit failed (CUresult " + std::to_string(p.init_result) + ")"};
    return {needed_version > 0, "device 0: " + p.device_name + " (sm_" +
                                    std::to_string(p.cc_major) + std::to_string(p.cc_minor) +
                                    "), " + supports};
}

std::string cuda_summary(const DriverProbe& p, int needed_version) {
    const std::string words = describe_driver(p, needed_version).words;
    if (needed_version == 0) return "CUDA: not compiled (built with ATTNSPEC_CUDA=OFF); " + words;
    return "CUDA " + cuda_version_text(needed_version) + " build: " + words;
}

}  // namespace attnspec::gpu
