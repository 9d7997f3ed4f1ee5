// gpu::closure_times / neumann_kernels / closure_times_mixed on the device (exit 77 without
// one): check_neumann agrees, and catches the planted dropped term and off-by-one head.
#include "attnspec/base/rounding.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/gpu/infsa/neumann_cuda.hpp"
#include "gpu_skip.hpp"
#include "test_support.hpp"

using namespace attnspec;

TEST_CASE("gpu check_neumann: the quick cases agree with the CPU", "[gpu][neumann_cusolver]") {
    test::skip_without_device();
    gpu::Context ctx;
    gpu::GpuCheckOptions opt;
    opt.quick = true;
    opt.timings = false;
    for (const auto& c : gpu::check_neumann(ctx, opt)) {
        INFO(c.case_name << " rel " << c.max_rel_err << " tol " << c.tolerance << " " << c.note);
        CHECK(c.agrees);
    }
}

TEST_CASE("gpu check_neumann: planted dropped term and off-by-one head are caught",
          "[gpu][neumann_cusolver]") {
    test::skip_without_device();
    gpu::Context ctx;
    gpu::GpuCheckOptions opt;
    opt.quick = true;
    opt.timings = false;
    for (auto f : {gpu::PlantedFault::dropped_term, gpu::PlantedFault::off_by_one_tile}) {
        gpu::ScopedPlantedFault fault(f);
        long caught = 0;
        for (const auto& c : gpu::check_neumann(ctx, opt)) caught += c.agrees ? 0 : 1;
        INFO(gpu::to_string(f));
        CHECK(caught >= 4);  // every fp64 LU case (dropped term: the IRS ones too)
    }
}

TEST_CASE("gpu neumann: refuses gamma rho >= 1 before touching the device",
          "[gpu][neumann_cusolver]") {
    test::skip_without_device();
    gpu::Context ctx;
    const Eigen::MatrixXd A = Eigen::MatrixXd::Constant(8, 8, 1.0 / 8);  // rho = 1
    const Eigen::MatrixXd V = Eigen::MatrixXd::Ones(8, 2);
    const Error e = test::error_of([&] { gpu::closure_times(ctx, {A}, 1.5, {V}); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(e.parameter() == "gamma");
    int it = 0;
    gpu::NeumannSolveStats st;
    const Eigen::MatrixXd X =
        gpu::closure_times_mixed(ctx, A, 0.5, V, &it, gpu::IrsLowest::fp32, &st);
    CHECK(X.rows() == 8);
    // fp64 backward error: the LU bound 2 gamma_3n + gamma_{n+1} at n = 8 (about 6e-15)
    CHECK(st.backward_error <= 2 * gamma_n(24.0) + gamma_n(9.0));
}
