// The GPU backend, loaded only when a GPU path runs. In a CUDA build the CUDA part of
// attnspec::gpu is the shared library libattnspec_gpu.so (it alone needs the CUDA runtime,
// cuBLAS and cuSOLVER); the CLI does not link it: load_backend() dlopens it the first time
// `gpu-check` asks, so every other command starts without the CUDA libraries.
//
// The entry point is one C symbol, attnspec_gpu_backend(abi), returning a table of functions
// (nullptr when the library speaks another ABI). The table passes C++ types: a backend and a CLI
// are only paired from the same build (kBackendAbi and the version string are both checked).
// The functions never throw across the boundary: they return 0 or an ExitCode value with the
// message in *error.
//
// Host side: gpu/src/base/backend_loader.cpp (host-only, both builds). Library side:
// gpu/src/base/backend_entry_cuda.cpp.
#pragma once
#include <string>

#include "attnspec/gpu/base/device.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"

namespace attnspec::gpu {

inline constexpr int kBackendAbi = 1;
inline constexpr const char* kBackendLibrary = "libattnspec_gpu.so";
inline constexpr const char* kBackendEntry = "attnspec_gpu_backend";

struct Backend {
    int abi = 0;
    const char* version = "";  // ATTNSPEC_VERSION of the build that made the library
    int (*device_info)(DeviceInfo* out, std::string* error) = nullptr;
    int (*run_gpu_check)(const GpuCheckOptions& opt, MathMode mode, PlantedFault fault,
                         GpuCheckRun* out, std::string* error) = nullptr;
};

// The backend of this build, loaded once (thread-safe). Throws Error(NoDevice, exit 69) when no
// GPU run is possible because there is no backend:
//   "GPU backend not built (ATTNSPEC_CUDA=OFF)"                       (CPU-only build)
//   "cannot load libattnspec_gpu.so: <dlerror>"                       (the library is missing)
// and Error(BackendLoad, exit 72) when the library is there but unusable (a broken install,
// never "no device"):
//   "GPU backend failed to load: <path> is there, but dlopen fails: <dlerror>"  (a library it
//                                        needs, such as libcublas, missing; not an ELF file)
//   "libattnspec_gpu.so: no attnspec_gpu_backend entry (...)"         (not an attnspec backend)
//   "libattnspec_gpu.so: backend ABI/version ... (from another build)"
// The library is looked up by its name through the executable's RUNPATH ($ORIGIN/../lib once
// installed, the build's gpu/ directory in a build tree) and LD_LIBRARY_PATH; the environment
// variable ATTNSPEC_GPU_BACKEND, when set, is the path to load instead.
const Backend& load_backend();

// The loading steps for one path, whatever the build (tests plant missing or foreign libraries).
// Throws as load_backend(); the library stays loaded once found.
const Backend& load_backend_from(const std::string& path);

// Whether the CUDA part was built (ATTNSPEC_CUDA on); no loading.
bool backend_built();

// Runs a backend call: throws Error(code, message) when it returns non-zero.
void check_backend_call(int code, const std::string& error);

}  // namespace attnspec::gpu

// Defined by libattnspec_gpu.so: the table for `abi`, or nullptr when it speaks another ABI.
extern "C" const attnspec::gpu::Backend* attnspec_gpu_backend(int abi);
