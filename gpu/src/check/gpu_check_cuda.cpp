// The gpu-check registry and runner (CUDA build, in libattnspec_gpu.so): twin_checks() in the
// fixed order of kTwinNames, run_gpu_check() over a pedantic (or fast) Context.
#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"

namespace attnspec::gpu {

const std::vector<TwinCheck>& twin_checks() {
    static const std::vector<TwinCheck> table = {{"linear_infsa", check_linear_infsa},
                                                 {"spec_attention", check_spec_attention},
                                                 {"jacobian_spectrum", check_jacobian_spectrum},
                                                 {"svd", check_svd},
                                                 {"neumann", check_neumann},
                                                 {"perron_tiled", check_perron_tiled}};
    return table;
}

GpuCheckRun run_gpu_check(const GpuCheckOptions& opt, MathMode mode, PlantedFault fault) {
    const std::vector<std::string> names = select_twins(opt.twins);
    GpuCheckRun run;
    run.device = device_info();
    if (run.device.device_count == 0)
        throw Error(ExitCode::NoDevice, "no usable CUDA device: " + run.device.error);
    Context ctx(0, mode);
    run.math_mode = mode;
    run.math_mode_description = ctx.math_mode_description();
    run.fault = fault;
    run.options = opt;
    run_selected(run, twin_checks(), names, [&](const TwinCheck& t) { return t.run(ctx, opt); });
    return run;
}

}  // namespace attnspec::gpu
