// gpu/base/backend.hpp, library side (CUDA build, in libattnspec_gpu.so): the C entry point and
// its table. No exception crosses the boundary: each call maps one to its exit code and message.
#include <exception>
#include <new>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/backend.hpp"
#include "attnspec/version.hpp"

namespace attnspec::gpu {
namespace {

template <class F>
int guarded(std::string* error, F&& f) {
    try {
        f();
        return 0;
    } catch (const Error& e) {
        *error = e.what();
        return static_cast<int>(e.code());
    } catch (const std::bad_alloc&) {
        *error = "out of memory (host allocation failed in the GPU backend)";
        return static_cast<int>(ExitCode::OutOfMemory);
    } catch (const std::exception& e) {
        *error = std::string("internal error in the GPU backend: ") + e.what();
        return static_cast<int>(ExitCode::Internal);
    }
}

int backend_device_info(DeviceInfo* out, std::string* error) {
    return guarded(error, [&] { *out = device_info(); });
}

int backend_run_gpu_check(const GpuCheckOptions& opt, MathMode mode, PlantedFault fault,
                          GpuCheckRun* out, std::string* error) {
    return guarded(error, [&] { *out = run_gpu_check(opt, mode, fault); });
}

}  // namespace
}  // namespace attnspec::gpu

extern "C" const attnspec::gpu::Backend* attnspec_gpu_backend(int abi) {
    static const attnspec::gpu::Backend table = [] {
        attnspec::gpu::Backend b;
        b.abi = attnspec::gpu::kBackendAbi;
        b.version = ATTNSPEC_VERSION;
        b.device_info = attnspec::gpu::backend_device_info;
        b.run_gpu_check = attnspec::gpu::backend_run_gpu_check;
        return b;
    }();
    return abi == attnspec::gpu::kBackendAbi ? &table : nullptr;
}
