// gpu-check end to end on a device: the registry lists the six twins in order, every planted
// fault makes every twin disagree (through the runner and through the CLI, exit 1), and the
// normal quick run agrees (exit 0) and writes the report. Skipped (77) without a device.
#include <algorithm>
#include <iterator>

#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/io/h5.hpp"
#include "gpu_skip.hpp"
#include "test_support.hpp"

using namespace attnspec;
using test::skip_without_device;

TEST_CASE("the registry runs the six twins in the order of kTwinNames", "[gpu]") {
    skip_without_device();
    const auto& t = gpu::twin_checks();
    REQUIRE(t.size() == std::size(gpu::kTwinNames));
    for (std::size_t i = 0; i < t.size(); ++i) CHECK(std::string(t[i].name) == gpu::kTwinNames[i]);
}

TEST_CASE("a planted fault makes every twin disagree", "[gpu]") {
    skip_without_device();
    for (gpu::PlantedFault f :
         {gpu::PlantedFault::off_by_one_tile, gpu::PlantedFault::dropped_term}) {
        INFO(gpu::to_string(f));
        gpu::GpuCheckOptions opt;
        opt.quick = true;
        const gpu::GpuCheckRun run = gpu::run_gpu_check(opt, gpu::MathMode::pedantic, f);
        CHECK(run.fault == f);
        CHECK(gpu::planted_fault() == gpu::PlantedFault::none);  // restored after the run
        for (const char* twin : gpu::kTwinNames) {
            INFO(twin);
            CHECK(std::any_of(run.cases.begin(), run.cases.end(),
                              [&](const gpu::TwinCase& c) { return c.twin == twin && !c.agrees; }));
        }
    }
}

TEST_CASE("the quick runner agrees without a planted fault", "[gpu]") {
    skip_without_device();
    gpu::GpuCheckOptions opt;
    opt.quick = true;
    const gpu::GpuCheckRun run =
        gpu::run_gpu_check(opt, gpu::MathMode::pedantic, gpu::PlantedFault::none);
    for (const gpu::TwinCase& c : run.cases) {
        INFO(c.twin << " " << c.case_name << " " << c.precision << ": rel " << c.max_rel_err
                    << " tol " << c.tolerance << " " << c.note);
        CHECK(c.agrees);
    }
}

// [gpu-cli]: runs the CLI in a child process (scripts/gpu-check.sh leaves these out of the
// compute-sanitizer runs).
TEST_CASE("gpu-check --plant-fault exits 1", "[gpu][gpu-cli]") {
    skip_without_device();
    for (const char* f : {"off-by-one-tile", "dropped-term"}) {
        const auto r =
            test::run_cli(std::string("gpu-check --quick --no-report --plant-fault ") + f);
        INFO(r.out + r.err);
        CHECK(r.code == 1);
    }
}

TEST_CASE("gpu-check --quick agrees and writes the gpu_check report", "[gpu][gpu-cli]") {
    skip_without_device();
    const std::string path = test::temp_dir() + "/gpu_check.h5";
    const auto r = test::run_cli("gpu-check --quick --out " + path);
    INFO(r.out + r.err);
    CHECK(r.code == 0);
    H5Reader h(path);
    CHECK(h.attr_string("/", "math_mode") == "pedantic");
    CHECK(!h.attr_string("/", "gpu_device").empty());
    CHECK(h.attr_double("/gpu_check", "n_disagree") == 0);
}
