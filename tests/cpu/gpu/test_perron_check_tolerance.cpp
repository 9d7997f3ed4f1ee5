// The perron_tiled twin's gpu-check tolerances (gpu/src/infsa/relu_kernel_common.hpp:
// product_check_tolerance, frobenius_check_tolerance, rho_check_tolerance) on the CPU, with the
// device operator's kernel body (relu_kernel_kernels.hpp) on the CPU grid runner, on the check's
// quick shapes and inputs and one of three tiles: clean, every comparison agrees; under each
// planted fault (gpu-check's two and the runner-only index-math and barrier faults) the products
// and ||A+||_F disagree. The tolerances read only the CPU's enclosures and the inputs.
#include <random>

#include "../../../gpu/src/infsa/relu_kernel_common.hpp"
#include "../infsa/emulated_relu_op.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/infsa/perron.hpp"
#include "attnspec/infsa/relu_kernel.hpp"
#include "test_support.hpp"

using namespace attnspec;
namespace pl = attnspec::gpu::perron_logic;
namespace il = attnspec::gpu::infsa_logic;

namespace {

struct Shape {
    long N, d, tile;
};

}  // namespace

TEST_CASE("perron gpu-check tolerances: the emulated twin agrees clean, faults are caught",
          "[gpu-check][relu_kernel_logic]") {
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> u(-0.25, 1.0);  // as check_perron_tiled draws them
    for (const Shape s : {Shape{31, 16, 32}, Shape{32, 33, 32}, Shape{33, 16, 32},
                          Shape{31, 65, 32}, Shape{70, 8, 32}, Shape{129, 17, 32}}) {
        Eigen::MatrixXd Q(s.N, s.d), K(s.N, s.d);
        for (long j = 0; j < s.d; ++j)
            for (long i = 0; i < s.N; ++i) Q(i, j) = u(rng), K(i, j) = u(rng);
        Eigen::VectorXd x(s.N);
        for (long i = 0; i < s.N; ++i) x[i] = 0.1 + std::abs(u(rng));
        const Eigen::VectorXd nq = Q.rowwise().norm(), nk = K.rowwise().norm();
        const double delta = 2 * gamma_n(double(s.d) + 2);
        const ReluKernelOp cpu(Q, K, s.tile);
        const Interval fc = cpu.frobenius();
        const double ftol = pl::frobenius_check_tolerance(fc, delta, nq, nk, s.d);
        const PerronResult pc = perron(cpu);
        const double rtol = pl::rho_check_tolerance(pc.rho_enc, PerronOptions{}.rel_width);
        for (const int fault : {il::kFaultNone, il::kFaultOffByOneTile, il::kFaultDroppedTerm,
                                il::kFaultTokenStride, il::kFaultNoBarrier}) {
            INFO("N " << s.N << " d " << s.d << " tile " << s.tile << " fault " << fault);
            const test::EmulatedReluOp dev(Q, K, fault);
            bool products_agree = true;
            for (const bool transpose : {true, false}) {
                Eigen::VectorXd zc, lc, hc, zg, lg, hg;
                cpu.apply(x, transpose, zc, lc, hc);
                dev.apply(x, transpose, zg, lg, hg);
                const double tol = pl::product_check_tolerance(
                    x, transpose ? nk : nq, transpose ? nq : nk, delta, s.d, lc, hc);
                gpu::TwinCase c;
                gpu::compare_into(c, zc.data(), zg.data(), s.N, tol, true, "test");
                INFO("transpose " << transpose << " error " << c.max_abs_err << " tol " << tol);
                // clean, the a priori tolerance bounds the device's own width
                if (fault == il::kFaultNone) CHECK(tol >= (hg - lg).maxCoeff());
                products_agree = products_agree && c.agrees;
            }
            const double mf = 0.5 * (fc.lo + fc.hi), mg = 0.5 * (dev.frob.lo + dev.frob.hi);
            INFO("||A+||_F " << mf << " vs " << mg << " tol " << ftol);
            CHECK(products_agree == (fault == il::kFaultNone));
            CHECK((std::abs(mf - mg) <= ftol) == (fault == il::kFaultNone));
            const PerronResult pg = perron(dev);
            const double mr = 0.5 * (pc.rho_enc.lo + pc.rho_enc.hi);
            const double mrg = 0.5 * (pg.rho_enc.lo + pg.rho_enc.hi);
            INFO("rho " << mr << " vs " << mrg << " tol " << rtol);
            CHECK((pg.converged && std::abs(mr - mrg) <= rtol) == (fault == il::kFaultNone));
            if (fault == il::kFaultNone) CHECK(pg.rho_enc.radius() <= rtol);
        }
    }
}
