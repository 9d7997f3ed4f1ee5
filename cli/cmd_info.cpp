// attnspec info: build flags and library versions, the BLAS kernels that run, CUDA status.
#include <iostream>

#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/gpu/base/device.hpp"
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
               "Prints the tool version, git commit, compiler, the versions of Eigen, Spectra,\n"
               "HDF5 and BLAS it was built with, the BLAS kernels that run (blas_core), why\n"
               "(blas_core_reason: detected by OpenBLAS, chosen by attnspec from the CPU's\n"
               "features, forced, or set by the user), the CPU features that decided, the BLAS\n"
               "threads, and CUDA status: 'not compiled', 'compiled, no device' or the device\n"
               "name. The GPU code is device discovery only: no computation runs on a GPU yet\n"
               "(CUDA twins of the fast paths are planned).\n\n"
               "The kernels: where OpenBLAS loads a weaker core than the CPU runs (its generic\n"
               "Prescott kernels on a CPU it does not recognise), attnspec sets\n"
               "OPENBLAS_CORETYPE to the best core of that OpenBLAS for the CPU's features and\n"
               "restarts itself once (README, 'BLAS kernels'). Override:\n"
               "  ATTNSPEC_BLAS_CORE=off        keep OpenBLAS's own choice\n"
               "  ATTNSPEC_BLAS_CORE=Haswell    force a core (auto is the default)\n"
               "  OPENBLAS_CORETYPE=SkylakeX    passed to OpenBLAS as is; attnspec keeps it\n\n"
               "examples:\n  attnspec info --json\n  ATTNSPEC_BLAS_CORE=off attnspec info\n",
               desc, vm))
        return 0;
    const auto versions = build_versions();
    const auto dev = gpu::device_info();
    if (common.json) {
        JsonWriter j(std::cout);
        j.begin_object();
        json_header(j, "info");
        for (const auto& [k, v] : versions) j.kv(k, v);
        print_blas(blas_info(), &j);
        j.key("cuda").begin_object();
        j.kv("compiled", dev.compiled);
        j.kv("device_count", dev.device_count);
        j.kv("device", dev.name);
        j.kv("summary", dev.summary());
        j.kv("runtime_version", dev.runtime_version);
        j.kv("cublas_version", dev.cublas_version);
        j.kv("cusolver_version", dev.cusolver_version);
        j.end_object();
        j.end_object();
        j.finish();
    } else {
        for (const auto& [k, v] : versions) std::cout << k << ": " << v << "\n";
        print_blas(blas_info(), nullptr);
        std::cout << "cuda: " << dev.summary() << "\n";
        if (dev.compiled)
            std::cout << "cublas_version: " << dev.cublas_version
                      << "\ncusolver_version: " << dev.cusolver_version << "\n";
    }
    return 0;
}

}  // namespace attnspec::cli
