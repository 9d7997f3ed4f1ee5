// attnspec gpu-check: every CUDA twin against its CPU reference. The run happens in the GPU
// backend (libattnspec_gpu.so, loaded here and only here: gpu/base/backend.hpp), or, with
// --emulate, with the kernels on the CPU grid runner (gpu_host, no backend, no device); the table
// goes to stdout and to the /gpu_check report section (gpu/check/gpu_check_io.hpp).
#include <cstdio>
#include <iostream>
#include <optional>

#include "attnspec/base/format.hpp"
#include "attnspec/gpu/base/backend.hpp"
#include "attnspec/gpu/check/gpu_check_io.hpp"
#include "cli.hpp"
#include "commands.hpp"

namespace attnspec::cli {
namespace {

const char* kSynopsis =
    "[--emulate] [--twin NAME]... [--quick] [--math pedantic|fast] [--plant-fault F] [--seed S] "
    "[--json] [--out F.h5 | --no-report]";
const char* kHelp =
    "examples:\n"
    "  attnspec gpu-check --quick                  CI-sized cases\n"
    "  attnspec gpu-check --emulate --quick        no device: kernels on the CPU grid runner\n";

void print_text(const gpu::GpuCheckRun& run, const std::string& report) {
    if (run.emulated)
        std::printf(
            "gpu-check emulated: kernels on the CPU grid runner (no device), planted "
            "fault: %s\n",
            gpu::to_string(run.fault));
    else
        std::printf("gpu-check on %s (sm_%d%d), %s math, planted fault: %s\n",
                    run.device.name.c_str(), run.device.cc_major, run.device.cc_minor,
                    gpu::to_string(run.math_mode), gpu::to_string(run.fault));
    std::printf("%-18s %-28s %-17s %-10s %-10s %-13s %-9s %-9s %-5s %s\n", "twin", "case",
                "precision", "max_abs", "max_rel", "tolerance", "gpu_s", "cpu_s", "agree",
                "tolerance reason / note");
    for (const gpu::TwinCase& c : run.cases) {
        const std::string tol =
            format_cell(c.tolerance, 3) + (c.tolerance_on_abs ? " (abs)" : " (rel)");
        std::string tail = c.tolerance_reason;
        if (!c.note.empty()) tail += (tail.empty() ? "" : "; ") + c.note;
        std::printf("%-18s %-28s %-17s %-10s %-10s %-13s %-9s %-9s %-5s %s\n", c.twin.c_str(),
                    c.case_name.c_str(), c.precision.c_str(), format_cell(c.max_abs_err, 3).c_str(),
                    format_cell(c.max_rel_err, 3).c_str(), tol.c_str(),
                    c.gpu_seconds < 0 ? "-" : format_cell(c.gpu_seconds, 3).c_str(),
                    c.cpu_seconds < 0 ? "-" : format_cell(c.cpu_seconds, 3).c_str(),
                    c.agrees ? "yes" : "NO", tail.c_str());
    }
    for (const std::string& twin : run.not_emulated)
        std::printf("%-18s %-28s %-17s %-10s %-10s %-13s %-9s %-9s %-5s %s\n", twin.c_str(),
                    "(not emulated)", "-", "-", "-", "-", "-", "-", "-",
                    "not emulated: not run, neither agrees nor disagrees");
    if (!run.not_emulated.empty())
        std::printf("%zu twin(s) not emulated (not run)\n", run.not_emulated.size());
    std::printf("%zu cases, %ld disagree: %s\nreport: %s\n", run.cases.size(), run.n_disagree(),
                run.n_disagree() != 0      ? "a twin disagrees with its CPU reference"
                : run.not_emulated.empty() ? "every twin agrees with its CPU reference"
                                           : "every emulated twin agrees with its CPU reference",
                report.empty() ? "none (--no-report)" : report.c_str());
}

}  // namespace

int run_gpu_check(const Invocation& inv) {
    po::options_description desc("gpu-check options");
    CommonOptions common;
    common.seed = 1;
    gpu::GpuCheckOptions opt;
    std::string math = "pedantic", fault = "none";
    bool emulate = false;
    desc.add_options()("emulate", po::bool_switch(&emulate),
                       "no device: run the kernels on the CPU grid runner, cuBLAS/cuSOLVER on "
                       "the CPU BLAS/LAPACK")("twin", po::value(&opt.twins)->composing(),
                                              "run only this twin (repeatable; default: all six)")(
        "quick", po::bool_switch(&opt.quick), "the smallest case set (CI-sized)")(
        "math", po::value(&math), "pedantic (default) or fast")(
        "plant-fault", po::value(&fault),
        "self-test (exit 1): off-by-one-tile, dropped-term; with --emulate also index-math, "
        "no-barrier");
    add_common_options(desc, common, "gpu_check.h5");
    po::variables_map vm;
    if (!parse(inv, "gpu-check", kSynopsis, kHelp, desc, vm)) return 0;
    opt.seed = common.seed;
    opt.twins = gpu::select_twins(opt.twins);  // usage errors before the backend loads
    const gpu::MathMode mode = gpu::math_mode_from_string(math);
    const gpu::PlantedFault planted = gpu::planted_fault_from_string(fault);
    if (gpu::runner_only(planted) && !emulate)
        throw Error(ExitCode::Usage, "--plant-fault " + fault +
                                         " needs --emulate (a runner-only fault: the CPU grid "
                                         "runner shows it deterministically, a device may not)");
    const std::string target = report_target(common, "gpu_check.h5");  // 64 / 73, nothing loaded

    gpu::GpuCheckRun run;
    if (emulate) {  // host-only: no backend, no device, both builds
        run = gpu::run_gpu_check_emulated(opt, mode, planted);
    } else {
        const gpu::Backend& backend = gpu::load_backend();  // 69 not built or missing, 72 unusable
        std::string error;
        gpu::DeviceInfo dev;
        gpu::check_backend_call(backend.device_info(&dev, &error), error);
        if (dev.device_count == 0)
            throw Error(ExitCode::NoDevice, "no usable CUDA device: " + dev.error);
        gpu::check_backend_call(backend.run_gpu_check(opt, mode, planted, &run, &error), error);
    }
    std::optional<ReportWriter> rep;
    if (!target.empty()) {
        Provenance prov = provenance(inv, common.seed);
        for (auto& kv : gpu_check_provenance(run)) prov.extra.push_back(kv);
        rep.emplace(target, prov);
        write_gpu_check_section(rep->root(), run);
        rep->commit();
    }
    if (common.json) {
        JsonWriter j(std::cout);
        j.begin_object();
        json_header(j, "gpu-check");
        gpu_check_json(j, run);
        rep ? j.kv("report", rep->target()) : j.key("report").null();
        j.end_object();
        j.finish();
    } else {
        print_text(run, rep ? rep->target() : "");
    }
    return run.n_disagree() == 0 ? 0 : static_cast<int>(ExitCode::Violated);
}

}  // namespace attnspec::cli
