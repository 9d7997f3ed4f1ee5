// The infsa CUDA twins on a device (label gpu; exit 77 "SKIP: no CUDA device" without one):
// gpu-check's cases for linear_infsa and perron_tiled agree with the CPU reference within their
// bounds, each planted fault makes some case disagree, the Linear-InfSA result is bitwise
// reproducible, the tiled Perron product is reproducible on partial tiles with enclosures that
// meet the CPU operator's, and bad input is refused as the CPU routine refuses it.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/device.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/gpu/infsa/linear_infsa_cuda.hpp"
#include "attnspec/gpu/infsa/relu_kernel_cuda.hpp"
#include "attnspec/infsa/relu_kernel.hpp"
#include "gpu_skip.hpp"
#include "test_support.hpp"

using namespace attnspec;

namespace {

#if ATTNSPEC_HAVE_CUDA
using CheckFn = std::vector<gpu::TwinCase> (*)(gpu::Context&, const gpu::GpuCheckOptions&);

long disagreeing(CheckFn fn, gpu::PlantedFault fault) {
    gpu::Context ctx;
    gpu::GpuCheckOptions opt;
    opt.quick = true;
    opt.timings = false;
    const gpu::ScopedPlantedFault planted(fault);
    long bad = 0;
    for (const gpu::TwinCase& c : fn(ctx, opt)) {
        if (!c.agrees) ++bad;
        if (fault == gpu::PlantedFault::none) {
            INFO(c.twin << " " << c.case_name << " " << c.precision << ": error "
                        << (c.tolerance_on_abs ? c.max_abs_err : c.max_rel_err) << " tolerance "
                        << c.tolerance << " (" << c.tolerance_reason << ")");
            CHECK(c.agrees);
        }
    }
    return bad;
}
#endif

}  // namespace

TEST_CASE("gpu-check linear_infsa: every case agrees, planted faults are caught", "[gpu]") {
    test::skip_without_device();
#if ATTNSPEC_HAVE_CUDA
    CHECK(disagreeing(gpu::check_linear_infsa, gpu::PlantedFault::none) == 0);
    CHECK(disagreeing(gpu::check_linear_infsa, gpu::PlantedFault::off_by_one_tile) > 0);
    CHECK(disagreeing(gpu::check_linear_infsa, gpu::PlantedFault::dropped_term) > 0);
#endif
}

TEST_CASE("gpu-check perron_tiled: every case agrees, planted faults are caught", "[gpu]") {
    test::skip_without_device();
#if ATTNSPEC_HAVE_CUDA
    CHECK(disagreeing(gpu::check_perron_tiled, gpu::PlantedFault::none) == 0);
    CHECK(disagreeing(gpu::check_perron_tiled, gpu::PlantedFault::off_by_one_tile) > 0);
    CHECK(disagreeing(gpu::check_perron_tiled, gpu::PlantedFault::dropped_term) > 0);
#endif
}

// Narrow on purpose: scripts/gpu-check.sh runs compute-sanitizer memcheck and racecheck on it, so
// that the shared-memory tiles of the Perron kernel are race-checked at a size whose last tiles are
// partial (N = 100 against 64-row tiles, d = 40 against 16-wide slices).
TEST_CASE("perron_tiled twin: partial tiles reproducible, enclosures meet the CPU's", "[gpu]") {
    test::skip_without_device();
    gpu::Context ctx;
    const Eigen::Index N = 100, d = 40;
    std::mt19937_64 rng(11);
    std::normal_distribution<double> g(0.0, 1.0);
    Eigen::MatrixXd Q(N, d), K(N, d);
    for (Eigen::Index i = 0; i < Q.size(); ++i) Q.data()[i] = g(rng);
    for (Eigen::Index i = 0; i < K.size(); ++i) K.data()[i] = g(rng);
    Eigen::VectorXd x(N);
    for (Eigen::Index i = 0; i < N; ++i) x[i] = 0.5 + std::abs(g(rng));
    const gpu::ReluKernelOp dev(ctx, Q, K);
    const ReluKernelOp cpu(Q, K);
    for (const bool transpose : {false, true}) {
        INFO("transpose " << transpose);
        Eigen::VectorXd z1, lo1, hi1, z2, lo2, hi2, zc, loc, hic;
        dev.apply(x, transpose, z1, lo1, hi1);
        dev.apply(x, transpose, z2, lo2, hi2);
        cpu.apply(x, transpose, zc, loc, hic);
        CHECK(z1 == z2);
        CHECK(lo1 == lo2);
        CHECK(hi1 == hi2);
        for (Eigen::Index i = 0; i < N; ++i) {
            INFO("row " << i << ": device [" << lo1[i] << ", " << hi1[i] << "], cpu [" << loc[i]
                        << ", " << hic[i] << "]");
            CHECK(lo1[i] <= hic[i]);  // both enclose the exact (A+ x)_i
            CHECK(loc[i] <= hi1[i]);
        }
    }
}

TEST_CASE("Linear-InfSA twin: bitwise reproducible, bad input refused", "[gpu]") {
    test::skip_without_device();
    gpu::Context ctx;
    const long H = 3, N = 1000, d = 64;
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<float> u(-0.25f, 1.0f);
    std::vector<float> X(std::size_t(3 * H * N * d));
    for (float& x : X) x = u(rng);
    const float* Q = X.data();
    const float* K = Q + H * N * d;
    const float* V = K + H * N * d;
    std::vector<float> P1(std::size_t(H * d)), P2(std::size_t(H * d));
    gpu::linear_infsa_heads_f32(ctx, Q, K, V, H, N, d, {}, P1.data());
    gpu::linear_infsa_heads_f32(ctx, Q, K, V, H, N, d, {}, P2.data());
    CHECK(P1 == P2);
    const Eigen::MatrixXd A = Eigen::MatrixXd::Ones(5, 4), B = Eigen::MatrixXd::Ones(5, 3);
    CHECK_THROWS_AS(gpu::linear_infsa(ctx, A, B, A), Error);
    LinearInfsaOptions bad;
    bad.gamma = 1.5;
    CHECK_THROWS_AS(gpu::linear_infsa(ctx, A, A, A, bad), Error);
    CHECK_THROWS_AS(gpu::ReluKernelOp(ctx, A, A, 0), Error);
}
