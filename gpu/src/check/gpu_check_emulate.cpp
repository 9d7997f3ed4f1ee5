// `gpu-check --emulate` (gpu/check/gpu_check.hpp: run_gpu_check_emulated): the twins whose kernel
// bodies are written once against the thread-context interface run them on the CPU grid runner
// (attnspec/gpu/base/cpu_grid.hpp) with the device check's cases and a-priori tolerances.
// Host-only, in attnspec::gpu_host (both builds): no device, no CUDA library.
#include <algorithm>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"

namespace attnspec::gpu {

const std::vector<EmulatedCheck>& emulated_twin_checks() {
    static const std::vector<EmulatedCheck> table = {
        {"linear_infsa", check_linear_infsa_emulated},
        {"spec_attention", check_spec_attention_emulated},
        {"jacobian_spectrum", check_jacobian_spectrum_emulated},
        {"svd", check_svd_emulated},
        {"neumann", check_neumann_emulated},
        {"perron_tiled", check_perron_tiled_emulated}};
    return table;
}

GpuCheckRun run_gpu_check_emulated(const GpuCheckOptions& opt, MathMode mode, PlantedFault fault) {
    const std::vector<std::string> names = select_twins(opt.twins);
    GpuCheckRun run;
    run.emulated = true;
    run.device.name = "CPU grid runner (emulated, no device)";
    run.math_mode = mode;
    run.math_mode_description =
        "emulated: kernel bodies on the CPU grid runner, cuBLAS GEMMs on the CPU BLAS, host "
        "IEEE arithmetic (no device, no cuBLAS, no cuSOLVER)";
    run.fault = fault;
    run.options = opt;
    run.options.timings = false;  // host times of an emulation say nothing about a device
    const std::vector<EmulatedCheck>& table = emulated_twin_checks();
    const auto emulated = [&table](const std::string& n) {
        return std::any_of(table.begin(), table.end(),
                           [&n](const EmulatedCheck& e) { return n == e.name; });
    };
    std::string known;
    for (const EmulatedCheck& e : table) known += (known.empty() ? "" : ", ") + std::string(e.name);
    if (std::none_of(names.begin(), names.end(), emulated))
        throw Error(ExitCode::Usage,
                    "--emulate: no selected twin is emulated (emulated: " + known + ")");
    for (const std::string& n : names)
        if (!emulated(n)) run.not_emulated.push_back(n);
    run_selected(run, table, names, [&run](const EmulatedCheck& e) { return e.run(run.options); });
    return run;
}

}  // namespace attnspec::gpu
