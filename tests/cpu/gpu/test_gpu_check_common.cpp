// The device-free parts of gpu-check (gpu/src/check/gpu_check_common.cpp): compare_into, planted
// faults and math modes by name, twin selection, and the /gpu_check report section written from a
// planted run and read back (gpu/check/gpu_check_io.hpp); the emulated registry and run
// (gpu_check_emulate.cpp).
#include <cmath>
#include <limits>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/gpu/check/gpu_check_io.hpp"
#include "attnspec/io/report_writer.hpp"
#include "test_support.hpp"

using namespace attnspec;
using gpu::TwinCase;

TEST_CASE("compare_into measures the relative error against the larger side's scale",
          "[gpu-check]") {
    const double cpu[] = {1.0, -4.0, 2.0};
    const double gpu_ok[] = {1.0, -4.0 + 4e-12, 2.0};  // rel = 4e-12 / 4 = 1e-12
    TwinCase c;
    gpu::compare_into(c, cpu, gpu_ok, 3, 2e-12, false, "bound: test");
    CHECK(c.max_abs_err == Approx(4e-12).epsilon(1e-3));
    CHECK(c.max_rel_err == Approx(1e-12).epsilon(1e-3));
    CHECK(c.agrees);
    CHECK(c.tolerance == 2e-12);
    CHECK_FALSE(c.tolerance_on_abs);
    CHECK(c.tolerance_reason == "bound: test");
    // planted: an error ten times the tolerance disagrees
    const double gpu_bad[] = {1.0, -4.0 + 8e-11, 2.0};
    gpu::compare_into(c, cpu, gpu_bad, 3, 2e-12, false, "bound: test");
    CHECK_FALSE(c.agrees);
}

TEST_CASE("compare_into on the absolute error ignores the scale", "[gpu-check]") {
    const double cpu[] = {1e6, 0.0};
    const double gpu_v[] = {1e6, 1e-3};  // rel 1e-9 (fine), abs 1e-3
    TwinCase c;
    gpu::compare_into(c, cpu, gpu_v, 2, 1e-6, false, "rel");
    CHECK(c.agrees);
    gpu::compare_into(c, cpu, gpu_v, 2, 1e-6, true, "abs");
    CHECK(c.tolerance_on_abs);
    CHECK(c.max_abs_err == Approx(1e-3));
    CHECK_FALSE(c.agrees);
}

TEST_CASE("compare_into never agrees with a NaN or an infinity on either side", "[gpu-check]") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    const double clean[] = {1.0, 2.0};
    for (const double bad : {nan, inf, -inf}) {
        const double dirty[] = {1.0, bad};
        TwinCase c;
        gpu::compare_into(c, clean, dirty, 2, 1e300, false, "huge");  // any tolerance
        CHECK_FALSE(c.agrees);
        CHECK(std::isinf(c.max_rel_err));
        gpu::compare_into(c, dirty, clean, 2, 1e300, true, "huge");
        CHECK_FALSE(c.agrees);
        CHECK(std::isinf(c.max_abs_err));
    }
    // both sides zero: relative error 0, agrees
    const double zero[] = {0.0, 0.0};
    TwinCase z;
    gpu::compare_into(z, zero, zero, 2, 0.0, false, "exact");
    CHECK(z.agrees);
    CHECK(z.max_rel_err == 0.0);
}

TEST_CASE("planted faults and math modes parse by name, unknown names are usage errors",
          "[gpu-check]") {
    using gpu::PlantedFault;
    for (PlantedFault f :
         {PlantedFault::none, PlantedFault::off_by_one_tile, PlantedFault::dropped_term,
          PlantedFault::index_math, PlantedFault::no_barrier}) {
        CHECK(gpu::planted_fault_from_string(gpu::to_string(f)) == f);
        CHECK(gpu::runner_only(f) ==
              (f == PlantedFault::index_math || f == PlantedFault::no_barrier));
    }
    CHECK(gpu::planted_fault_from_string("off-by-one-tile") == PlantedFault::off_by_one_tile);
    const Error e = test::error_of([] { gpu::planted_fault_from_string("off_by_one"); });
    CHECK(e.code() == ExitCode::Usage);
    CHECK(std::string(e.what()).find("off_by_one") != std::string::npos);
    CHECK(gpu::math_mode_from_string("pedantic") == gpu::MathMode::pedantic);
    CHECK(gpu::math_mode_from_string("fast") == gpu::MathMode::fast);
    CHECK(test::error_of([] { gpu::math_mode_from_string("tf32"); }).code() == ExitCode::Usage);

    CHECK(gpu::planted_fault() == PlantedFault::none);
    {
        const gpu::ScopedPlantedFault outer(PlantedFault::dropped_term);
        CHECK(gpu::planted_fault() == PlantedFault::dropped_term);
        {
            const gpu::ScopedPlantedFault inner(PlantedFault::off_by_one_tile);
            CHECK(gpu::planted_fault() == PlantedFault::off_by_one_tile);
        }
        CHECK(gpu::planted_fault() == PlantedFault::dropped_term);
    }
    CHECK(gpu::planted_fault() == PlantedFault::none);
}

TEST_CASE("select_twins keeps registry order, drops repeats and names unknown twins",
          "[gpu-check]") {
    const auto all = gpu::select_twins({});
    REQUIRE(all.size() == 6);
    CHECK(all.front() == "linear_infsa");
    CHECK(all.back() == "perron_tiled");
    const auto two = gpu::select_twins({"perron_tiled", "svd", "svd"});
    CHECK(two == std::vector<std::string>{"svd", "perron_tiled"});
    const Error e = test::error_of([] { gpu::select_twins({"svd", "cholesky"}); });
    CHECK(e.code() == ExitCode::Usage);
    CHECK(std::string(e.what()).find("'cholesky'") != std::string::npos);
    CHECK(std::string(e.what()).find("jacobian_spectrum") != std::string::npos);
}

TEST_CASE("the gpu_check section reads back one row per case with the GPU provenance",
          "[gpu-check][report]") {
    gpu::GpuCheckRun run;
    run.device.name = "Planted GPU";
    run.device.cc_major = 9;
    run.device.runtime_version = 13000;
    run.device.driver_version = 13010;
    run.device.cublas_version = 130100;
    run.math_mode_description = "cuBLAS CUBLAS_PEDANTIC_MATH";
    run.fault = gpu::PlantedFault::dropped_term;
    run.options.seed = 7;
    TwinCase a;
    a.twin = "svd", a.case_name = "n=33", a.precision = "fp64", a.shape = {33, 33};
    const double cpu[] = {3.0, 1.0}, gpu_v[] = {3.0, 1.0 + 3e-15};
    gpu::compare_into(a, cpu, gpu_v, 2, 1e-13, false, "bound: test");
    TwinCase b = a;
    b.case_name = "n=32";
    b.agrees = false;
    b.note = "planted";
    run.cases = {a, b};
    CHECK(run.n_disagree() == 1);

    const std::string path = test::temp_dir() + "/g.h5";
    {
        ReportWriter w(path, Provenance{"attnspec gpu-check", 7, gpu_check_provenance(run)});
        write_gpu_check_section(w.root(), run);
        w.commit();
    }
    H5Reader r(path);
    CHECK(r.attr_string("/", "gpu_device") == "Planted GPU");
    CHECK(r.attr_string("/", "cuda_runtime") == "13.0");
    CHECK(r.attr_string("/", "cuda_driver") == "13.1");
    CHECK(r.attr_string("/", "cublas_version") == "13.1.0");
    CHECK(r.attr_string("/", "cusolver_version") == "unknown");
    CHECK(r.attr_string("/", "math_mode") == "pedantic");
    CHECK(r.attr_string("/gpu_check", "planted_fault") == "dropped-term");
    CHECK(r.attr_double("/gpu_check", "n_cases") == 2);
    CHECK(r.attr_double("/gpu_check", "n_disagree") == 1);
    CHECK(r.strings("/gpu_check/case") == std::vector<std::string>{"n=33", "n=32"});
    CHECK(r.strings("/gpu_check/shape") == std::vector<std::string>{"33x33", "33x33"});
    CHECK(r.vector("/gpu_check/agrees") == std::vector<double>{1, 0});
    CHECK(r.vector("/gpu_check/max_abs_err")[0] == Approx(3e-15).epsilon(0.1));
    CHECK(r.strings("/gpu_check/note")[1] == "planted");
}

TEST_CASE("every twin is emulated, in registry order, and an emulated run is not timed",
          "[gpu-check][emulate]") {
    // the emulated registry is the whole registry, in kTwinNames order (a new twin must bring
    // its emulated check)
    std::vector<std::string> names;
    for (const auto& e : gpu::emulated_twin_checks()) names.emplace_back(e.name);
    CHECK(names ==
          std::vector<std::string>(std::begin(gpu::kTwinNames), std::end(gpu::kTwinNames)));
    // an emulated run of a selection runs exactly those twins, and lists none as not emulated
    gpu::GpuCheckOptions opt;
    opt.twins = {"jacobian_spectrum", names.front()};
    opt.quick = true;
    const gpu::GpuCheckRun run =
        gpu::run_gpu_check_emulated(opt, gpu::MathMode::pedantic, gpu::PlantedFault::none);
    CHECK(run.emulated);
    CHECK(run.not_emulated.empty());
    CHECK(run.n_disagree() == 0);
    REQUIRE(!run.cases.empty());
    CHECK(run.cases.front().twin == names.front());  // registry order, not the selection's
    CHECK(run.cases.back().twin == "jacobian_spectrum");
    for (const TwinCase& c : run.cases)
        CHECK((c.twin == names.front() || c.twin == "jacobian_spectrum"));
    CHECK(run.cases.front().gpu_seconds == -1);  // an emulation is not timed
    const std::string path = test::temp_dir() + "/e.h5";
    {
        ReportWriter w(path, Provenance{"attnspec gpu-check", 1, gpu_check_provenance(run)});
        write_gpu_check_section(w.root(), run);
        w.commit();
    }
    H5Reader r(path);
    CHECK(r.attr_double("/gpu_check", "emulated") == 1);
    CHECK(r.attr_string("/gpu_check", "not_emulated").empty());
}
