// attnspec info: build flags and library versions, CUDA status.
#include <iostream>

#include "attnspec/gpu/base/device.hpp"
#include "cli.hpp"
#include "commands.hpp"

namespace attnspec::cli {

int run_info(const Invocation& inv) {
    po::options_description desc("info options");
    CommonOptions common;  // --json only
    add_common_options(desc, common, "", kJson);
    po::variables_map vm;
    if (!parse(inv, "info", "[--json]",
               "Prints the tool version, git commit, compiler, the versions of Eigen, Spectra,\n"
               "HDF5 and BLAS it was built with, and CUDA status: 'not compiled', 'compiled, no\n"
               "device' or the device name. The GPU code is device discovery only: no\n"
               "computation runs on a GPU yet (CUDA twins of the fast paths are planned).\n\n"
               "example:\n  attnspec info --json\n",
               desc, vm))
        return 0;
    const auto versions = build_versions();
    const auto dev = gpu::device_info();
    if (common.json) {
        JsonWriter j(std::cout);
        j.begin_object();
        json_header(j, "info");
        for (const auto& [k, v] : versions) j.kv(k, v);
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
        std::cout << "cuda: " << dev.summary() << "\n";
        if (dev.compiled)
            std::cout << "cublas_version: " << dev.cublas_version
                      << "\ncusolver_version: " << dev.cusolver_version << "\n";
    }
    return 0;
}

}  // namespace attnspec::cli
