// gpu-check in a build without CUDA: no twin is compiled. Compiled in both builds, empty with
// CUDA.
#include "attnspec/gpu/base/device.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"

namespace attnspec::gpu {

#if !ATTNSPEC_HAVE_CUDA
// No twin is compiled: an empty registry, and a runner that says so (exit 69).
const std::vector<TwinCheck>& twin_checks() {
    static const std::vector<TwinCheck> none;
    return none;
}
GpuCheckRun run_gpu_check(const GpuCheckOptions&, MathMode, PlantedFault) {
    require_device();
    return {};
}
#endif

}  // namespace attnspec::gpu
