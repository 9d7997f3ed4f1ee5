// attnspec info: build flags and library versions, the BLAS kernels that run, CUDA status.
#include <iostream>

#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/gpu/base/driver_probe.hpp"
#include "cli.hpp"
#include "commands.hpp"

namespace attnspec::cli {

namespace {
// The BLAS kernels that run and why (issue 13), as text lines or JSON keys of an open object.
void print_blas(const BlasInfo& b, JsonWriter* j) {
    const std::pair<const char*, std::string> rows[] = {
        {"blas_core", b.core.empty() ? "unknown" : b.core},
        {"blas_core_reason", b.reason},
        {"blas_core_openblas_alone", b.detected.empty() ? "unknown" : b.detected},
        {"blas_core_best_for_cpu", b.best.empty() ? "unknown" : b.best},
        {"cpu", b.cpu},
        {"blas_threads", std::to_string(b.threads)},
        {"blas_override", blas_override_help()}};
    for (const auto& [k, v] : rows) {
        if (j && std::string(k) == "blas_threads")
            j->kv(k, b.threads);
        else if (j)
            j->kv(k, v);
        else
            std::cout << k << ": " << v << "\n";
    }
}
}  // namespace

int run_info(const Invocation& inv) {
    po::options_description desc("info options");
    CommonOptions common;  // --json only
    add_common_options(desc, common, "", kJson);
    po::variables_map vm;
    if (!parse(inv, "info", "[--json]",
               "examples:\n  attnspec info --json\n  ATTNSPEC_BLAS_CORE=off attnspec info\n", desc,
               vm))
        return 0;
    const auto versions = build_versions();
    const gpu::DriverProbe probe = gpu::probe_driver();
    const int needed = gpu::build_cuda_version();
    const gpu::DriverStatus status = gpu::describe_driver(probe, needed);
    const std::string summary = gpu::cuda_summary(probe, needed);
    if (common.json) {
        JsonWriter j(std::cout);
        j.begin_object();
        json_header(j, "info");
        for (const auto& [k, v] : versions) j.kv(k, v);
        print_blas(blas_info(), &j);
        j.key("cuda").begin_object();
        j.kv("compiled", needed > 0);
        j.kv("build_cuda_version", needed);
        j.kv("driver_found", probe.library_found);
        j.kv("driver_version", probe.driver_version);
        j.kv("device_count", probe.device_count);
        j.kv("device", probe.device_name);
        j.kv("usable", status.usable);
        j.kv("status", status.words);
        j.kv("summary", summary);
        j.end_object();
        j.end_object();
        j.finish();
    } else {
        for (const auto& [k, v] : versions) std::cout << k << ": " << v << "\n";
        print_blas(blas_info(), nullptr);
        std::cout << "cuda: " << summary << "\n";
    }
    return 0;
}

}  // namespace attnspec::cli
