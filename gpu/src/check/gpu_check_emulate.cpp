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
        {"linear_infsa", check_linear_infsa_emulated, true},
        {"spec_attention", check_spec_attention_emulated, true},
        {"jacobian_spectrum", check_jacobian_spectrum_emulated, false},
        {"svd", check_svd_emulated, false},
        {"neumann", check_neumann_emulated, false},
        {"perron_tiled", check_perron_tiled_emulated, true}};
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
    if (runner_only(fault)) {  // planted only where the kernels have them: say so, never "agrees"
        std::string with, without;
        for (const EmulatedCheck& e : table) {
            const bool selected = std::find(names.begin(), names.end(), e.name) != names.end();
            if (e.runner_faults) with += (with.empty() ? "" : ", ") + std::string(e.name);
            if (selected && !e.runner_faults)
                without += (without.empty() ? "" : ", ") + std::string(e.name);
        }
        if (!without.empty())
            throw Error(ExitCode::Usage, "--plant-fault " + std::string(to_string(fault)) +
                                             " is planted only in the kernels of " + with +
                                             "; not in " + without + ": select twins with --twin");
    }
    run_selected(run, table, names, [&run](const EmulatedCheck& e) { return e.run(run.options); });
    return run;
}

}  // namespace attnspec::gpu
