// check_jacobian_spectrum (gpu_check.hpp): the cases of jacobian_spectrum_check_common.cpp with
// the twin on the device (gpu::jacobian_spectrum).
#include <vector>

#include "attnspec/gpu/attention/jacobian_spectrum_cuda.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "jacobian_spectrum_check.hpp"

namespace attnspec::gpu {

std::vector<TwinCase> check_jacobian_spectrum(Context& ctx, const GpuCheckOptions& opt) {
    JacobianSpectrumTwin twin;
    twin.note = "device, " + ctx.math_mode_description();
    twin.run = [&ctx](const Head& h) { return jacobian_spectrum(ctx, h); };
    return jacobian_spectrum_cases(opt, twin);
}

}  // namespace attnspec::gpu
