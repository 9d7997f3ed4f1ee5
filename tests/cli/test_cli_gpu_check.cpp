// attnspec gpu-check without a device (CPU-only build: backend not built; CUDA build without a
// driver or device: no usable device), usage errors before anything loads, and lazy loading: the
// CLI does not link the CUDA libraries. On a machine with a usable device the no-device cases
// skip (tests/gpu/base/test_gpu_check.cpp covers the run there). `gpu-check --emulate` runs
// everywhere: clean, with each planted fault in each emulated twin, and its report.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "attnspec/gpu/base/backend.hpp"
#include "attnspec/gpu/base/driver_probe.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "test_support.hpp"

using attnspec::test::run_cli;

namespace {
bool device_usable() {
    return attnspec::gpu::describe_driver(attnspec::gpu::probe_driver(),
                                          attnspec::gpu::build_cuda_version())
        .usable;
}
}  // namespace

TEST_CASE("gpu-check exits 69 with one line saying why no GPU run is possible", "[cli][gpu]") {
    if (device_usable()) return;  // a device: the gpu suite runs gpu-check for real
    const std::string dir = attnspec::test::temp_dir();
    const auto r = run_cli("gpu-check --quick --out " + dir + "/g.h5");
    CHECK(r.code == 69);
    CHECK(r.out.empty());
    REQUIRE(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    if (attnspec::gpu::backend_built())
        CHECK(r.err.find("no usable CUDA device: ") != std::string::npos);
    else
        CHECK(r.err.find("GPU backend not built (ATTNSPEC_CUDA=OFF") != std::string::npos);
    std::FILE* f = std::fopen((dir + "/g.h5").c_str(), "rb");  // nothing written
    CHECK(f == nullptr);
    if (f) std::fclose(f);
    // --json changes nothing: still 69, nothing on stdout
    const auto j = run_cli("gpu-check --json --no-report");
    CHECK(j.code == 69);
    CHECK(j.out.empty());
}

TEST_CASE("gpu-check names a backend library it cannot load", "[cli][gpu]") {
    ::setenv("ATTNSPEC_GPU_BACKEND", "/nonexistent/libattnspec_gpu.so", 1);
    const auto r = run_cli("gpu-check --no-report");
    ::unsetenv("ATTNSPEC_GPU_BACKEND");
    CHECK(r.code == 69);
    if (attnspec::gpu::backend_built())
        CHECK(r.err.find("cannot load /nonexistent/libattnspec_gpu.so: ") != std::string::npos);
    else  // a CPU-only build never looks for a library
        CHECK(r.err.find("GPU backend not built") != std::string::npos);
}

TEST_CASE("gpu-check: a backend library that is there but does not load exits 72", "[cli][gpu]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::string lib = dir + "/libattnspec_gpu.so";
    std::ofstream(lib) << "not an ELF file\n";  // dlopen refuses it, as a missing libcublas would
    ::setenv("ATTNSPEC_GPU_BACKEND", lib.c_str(), 1);
    const auto r = run_cli("gpu-check --no-report");
    ::unsetenv("ATTNSPEC_GPU_BACKEND");
    INFO(r.err);
    if (attnspec::gpu::backend_built()) {
        CHECK(r.code == 72);  // a broken install, never "no device" (69)
        CHECK(r.err.find("GPU backend failed to load: " + lib + " is there, but dlopen fails: ") !=
              std::string::npos);
    } else {  // a CPU-only build never looks for a library
        CHECK(r.code == 69);
        CHECK(r.err.find("GPU backend not built") != std::string::npos);
    }
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("gpu-check refuses bad options with 64 before loading anything", "[cli][gpu]") {
    // the runner-only faults need --emulate
    for (const char* bad : {"--twin cholesky", "--math tf32", "--plant-fault off_by_one",
                            "--seed -1", "--out /tmp/x.h5 --no-report", "--no-such-option",
                            "--plant-fault index-math", "--plant-fault no-barrier"}) {
        INFO(bad);
        const auto r = run_cli(std::string("gpu-check ") + bad);
        CHECK(r.code == 64);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
    const auto h = run_cli("gpu-check --help");
    CHECK(h.code == 0);
    CHECK(h.out.find("--plant-fault") != std::string::npos);
    CHECK(h.out.find("self-test") != std::string::npos);
    CHECK(h.out.find("examples:") != std::string::npos);
}

TEST_CASE("the CLI does not link the CUDA libraries and info says why no device is usable",
          "[cli][gpu]") {
    // What ldd does: the dynamic loader lists the libraries the executable needs, without running
    // it (the variable is set for the CLI alone, not for the shell that starts it). The CUDA
    // runtime, cuBLAS and cuSOLVER are loaded only by gpu-check (dlopen).
    const char* relocated = std::getenv("ATTNSPEC_TEST_CLI");
    const std::string cli = relocated && *relocated ? relocated : ATTNSPEC_CLI_PATH;
    std::string libs;
    if (std::FILE* p = ::popen(("LD_TRACE_LOADED_OBJECTS=1 " + cli + " --version").c_str(), "r")) {
        char buf[512];
        while (std::fgets(buf, sizeof buf, p)) libs += buf;
        ::pclose(p);
    }
    INFO(libs);
    REQUIRE(libs.find("libc.so") != std::string::npos);  // the listing happened
    for (const char* lib : {"libcudart", "libcublas", "libcusolver", "libcuda.", "attnspec_gpu"})
        CHECK(libs.find(lib) == std::string::npos);
    const auto i = run_cli("info --json");
    REQUIRE(i.code == 0);
    for (const char* key : {"\"driver_found\"", "\"usable\"", "\"status\"", "\"summary\""})
        CHECK(i.out.find(key) != std::string::npos);
    if (!device_usable()) CHECK(i.out.find("\"usable\": false") != std::string::npos);
}

// gpu-check --emulate: the kernels on the CPU grid runner, no device and no backend, in both
// builds (host-only, attnspec::gpu_host).
TEST_CASE("gpu-check --emulate --quick agrees clean in every twin", "[cli][gpu][emulate]") {
    const auto r = run_cli("gpu-check --emulate --quick --json --no-report");
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(r.out.find("\"emulated\": true") != std::string::npos);
    CHECK(r.out.find("\"n_disagree\": 0,") != std::string::npos);
    for (const auto& e : attnspec::gpu::emulated_twin_checks())
        CHECK(r.out.find(std::string("\"twin\": \"") + e.name + "\"") != std::string::npos);
    CHECK(r.out.find("\"agrees\": false") == std::string::npos);
    // every twin is emulated: none is listed as not emulated
    CHECK(r.out.find("\"not_emulated\": []") != std::string::npos);
    CHECK(r.out.find("\"twin\": \"jacobian_spectrum\"") != std::string::npos);
    const auto t = run_cli(
        "gpu-check --emulate --quick --no-report --twin linear_infsa --twin jacobian_spectrum");
    CHECK(t.code == 0);
    CHECK(t.out.find("gpu-check emulated: kernels on the CPU grid runner (no device)") !=
          std::string::npos);
    CHECK(t.out.find("not emulated") == std::string::npos);
    CHECK(t.out.find("every twin agrees") != std::string::npos);
}

TEST_CASE("gpu-check --emulate exits 1 with each planted fault in each emulated twin",
          "[cli][gpu][emulate]") {
    for (const char* fault : {"off-by-one-tile", "dropped-term", "index-math", "no-barrier"}) {
        INFO(fault);
        // every emulated twin plants every fault, the runner-only ones too: all six run
        const auto r = run_cli(std::string("gpu-check --emulate --quick --json --no-report ") +
                               "--plant-fault " + fault);
        CHECK(r.code == 1);
        CHECK(r.out.find(std::string("\"planted_fault\": \"") + fault + "\"") != std::string::npos);
        CHECK(r.out.find("\"not_emulated\": []") != std::string::npos);
        // each emulated twin has a case that disagrees (the cases are listed twin by twin)
        for (const auto& e : attnspec::gpu::emulated_twin_checks()) {
            INFO(e.name);
            const std::string twin = std::string("\"twin\": \"") + e.name + "\"";
            bool caught = false;
            for (std::size_t at = r.out.find(twin); at != std::string::npos;
                 at = r.out.find(twin, at + 1)) {
                const std::size_t end = r.out.find("\"twin\": ", at + 1);  // the next case
                caught = caught ||
                         r.out.substr(at, end - at).find("\"agrees\": false") != std::string::npos;
            }
            CHECK(caught);
        }
    }
}

TEST_CASE("gpu-check --emulate writes its report", "[cli][gpu][emulate]") {
    const std::string dir = attnspec::test::temp_dir();
    const auto r =
        run_cli("gpu-check --emulate --quick --twin linear_infsa --twin jacobian_spectrum --out " +
                dir + "/g.h5");
    CHECK(r.code == 0);
    std::FILE* f = std::fopen((dir + "/g.h5").c_str(), "rb");
    CHECK(f != nullptr);
    if (f) std::fclose(f);
    std::system(("rm -rf " + dir).c_str());
}
