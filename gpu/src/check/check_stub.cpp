// gpu-check in a build without CUDA: no twin is compiled, the registry is empty and every entry
// throws NoDevice "not compiled" (exit 69). Compiled in both builds, empty with CUDA.
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
// The per-twin entries: the GPU tests call them directly and must link without CUDA too (they
// skip, exit 77, before the call; a call would say "not compiled", exit 69).
std::vector<TwinCase> check_linear_infsa(Context&, const GpuCheckOptions&) {
    require_device();
    return {};
}
std::vector<TwinCase> check_spec_attention(Context&, const GpuCheckOptions&) {
    require_device();
    return {};
}
std::vector<TwinCase> check_jacobian_spectrum(Context&, const GpuCheckOptions&) {
    require_device();
    return {};
}
std::vector<TwinCase> check_svd(Context&, const GpuCheckOptions&) {
    require_device();
    return {};
}
std::vector<TwinCase> check_neumann(Context&, const GpuCheckOptions&) {
    require_device();
    return {};
}
std::vector<TwinCase> check_perron_tiled(Context&, const GpuCheckOptions&) {
    require_device();
    return {};
}
#endif

}  // namespace attnspec::gpu
