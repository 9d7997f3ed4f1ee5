// gpu::svd / svd_batched / kappa against attnspec::svd on the device (exit 77 without one), and
// check_svd catching the planted off-by-one batch.
#include <vector>

#include "attnspec/base/random.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/gpu/spectral/svd_cuda.hpp"
#include "gpu_skip.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::kU;

namespace {
// Weyl: both SVDs backward stable, |sigma_gpu - sigma_cpu| <= 2 c sqrt(r) u sigma_max, c = 32
// (check_svd's constant, assumed; the first device run measures it).
double weyl(long m, long n) { return 2 * 32 * std::sqrt(double(std::min(m, n))) * kU; }
}  // namespace

TEST_CASE(
    "gpu svd: singular values and enclosures agree with the CPU across 31/32/33, tall "
    "and wide",
    "[gpu][svd_cusolver]") {
    test::skip_without_device();
    gpu::Context ctx;
    const std::vector<std::pair<long, long>> shapes{
        {31, 31}, {32, 32}, {33, 33}, {70, 33}, {33, 70}};
    for (auto [m, n] : shapes) {
        const Eigen::MatrixXd M =
            Rng(40 + std::uint64_t(m * n))
                .with_spectrum(m, n, geometric_spectrum(std::min(m, n), 3.0, 1e5));
        const SvdResult cpu = svd(M, SvdOptions{});
        const SvdResult g = gpu::svd(ctx, M, SvdOptions{});
        CHECK(g.method == "cusolver-gesvdj");
        CHECK((g.sigma - cpu.sigma).cwiseAbs().maxCoeff() <= weyl(m, n) * cpu.sigma[0]);
        for (long i = 0; i < cpu.sigma.size(); ++i) {  // both rigorous: they intersect
            CHECK(g.lo[i] <= cpu.hi[i]);
            CHECK(cpu.lo[i] <= g.hi[i]);
        }
        const Kappa kg = gpu::kappa(ctx, M), kc = kappa(M);
        CHECK(kg.enclosure.lo <= kc.enclosure.hi);
        CHECK(kc.enclosure.lo <= kg.enclosure.hi);
    }
}

TEST_CASE("gpu svd_batched: the three paths agree with the CPU per matrix", "[gpu][svd_cusolver]") {
    test::skip_without_device();
    gpu::Context ctx;
    SvdOptions values;
    values.values_only = true;
    for (auto [m, n] :
         std::vector<std::pair<long, long>>{{32, 32}, {384, 32}, {32, 384}, {33, 33}}) {
        std::vector<Eigen::MatrixXd> Ms;
        Ms.reserve(9);
        for (int b = 0; b < 9; ++b) Ms.push_back(Rng(90 + std::uint64_t(b)).gaussian(m, n));
        const auto g = gpu::svd_batched(ctx, Ms, values);
        REQUIRE(g.size() == Ms.size());
        for (std::size_t b = 0; b < Ms.size(); ++b) {
            const Eigen::VectorXd c = svd(Ms[b], values).sigma;
            CHECK((g[b].sigma - c).cwiseAbs().maxCoeff() <= weyl(m, n) * c[0]);
        }
    }
    // vectors through the batched kernel (32 x 32): the host enclosures hold
    std::vector<Eigen::MatrixXd> Ms{Rng(1).gaussian(32, 32), Rng(2).gaussian(32, 32)};
    const auto g = gpu::svd_batched(ctx, Ms, SvdOptions{});
    for (std::size_t b = 0; b < Ms.size(); ++b) {
        const SvdResult c = svd(Ms[b], SvdOptions{});
        for (long i = 0; i < 32; ++i) {
            CHECK(g[b].lo[i] <= c.hi[i]);
            CHECK(c.lo[i] <= g[b].hi[i]);
        }
    }
}

TEST_CASE("gpu check_svd: all quick cases agree, the planted off-by-one batch is caught",
          "[gpu][svd_cusolver]") {
    test::skip_without_device();
    gpu::Context ctx;
    gpu::GpuCheckOptions opt;
    opt.quick = true;
    opt.timings = false;
    for (const auto& c : gpu::check_svd(ctx, opt)) {
        INFO(c.case_name << " rel " << c.max_rel_err << " tol " << c.tolerance << " " << c.note);
        CHECK(c.agrees);
    }
    gpu::ScopedPlantedFault fault(gpu::PlantedFault::off_by_one_tile);
    long caught = 0;
    for (const auto& c : gpu::check_svd(ctx, opt)) caught += c.agrees ? 0 : 1;
    CHECK(caught >= 4);  // the four batched-kernel cases
}
