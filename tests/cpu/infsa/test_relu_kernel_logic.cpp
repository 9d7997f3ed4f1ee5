// The perron_tiled CUDA twin's kernel body (gpu/src/infsa/relu_kernel_kernels.hpp: 64 x 64 tiles
// staged in shared memory, d in slices of 16) on the CPU grid runner, wrapped with the host
// enclosures of relu_kernel_common.hpp as the device operator wraps its kernel, against the CPU
// ReluKernelOp at sizes straddling 31/32/33, the 64-row and 64-column tiles (partial tiles) and
// the 16-wide d slices. Both operators' enclosures contain the exact A+ x, so they must intersect;
// a planted fault (gpu-check's two, the runner-only index-math and barrier ones) must make them
// disjoint (the certificate itself catches it), and the same for the Collatz–Wielandt enclosure
// of rho(A+).
#include <algorithm>
#include <random>

#include "../../../gpu/src/infsa/relu_kernel_common.hpp"
#include "../../../gpu/src/infsa/relu_kernel_kernels.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/infsa/perron.hpp"
#include "attnspec/infsa/relu_kernel.hpp"
#include "emulated_relu_op.hpp"
#include "test_support.hpp"

using namespace attnspec;
namespace pl = attnspec::gpu::perron_logic;
namespace il = attnspec::gpu::infsa_logic;

namespace {

// Q, K entries in [0.05, 1): every score positive, so every term of every sum counts.
Eigen::MatrixXd positive(long N, long d, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(0.05, 1.0);
    Eigen::MatrixXd M(N, d);
    for (long j = 0; j < d; ++j)
        for (long i = 0; i < N; ++i) M(i, j) = u(rng);
    return M;
}

struct Overlap {
    bool all_intersect = true;   // every entry's two enclosures intersect
    double worst_rel_width = 0;  // max (hi - lo) / z over both operators
};

// [a, b] and [c, d] intersect (false when any end is NaN).
bool meet(double a, double b, double c, double d) { return a <= d && c <= b; }

Overlap compare_products(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, long tile, int fault,
                         bool transpose, const Eigen::VectorXd& x, long* barriers = nullptr) {
    const ReluKernelOp cpu(Q, K, tile);
    const test::EmulatedReluOp emu(Q, K, fault);
    Eigen::VectorXd zc, lc, hc, ze, le, he;
    cpu.apply(x, transpose, zc, lc, hc);
    emu.apply(x, transpose, ze, le, he);
    if (barriers) *barriers = emu.grid.counters().barriers;
    CHECK(emu.grid.counters().divergent_barriers == 0);
    Overlap o;
    for (Eigen::Index i = 0; i < zc.size(); ++i) {
        if (!meet(lc[i], hc[i], le[i], he[i])) o.all_intersect = false;
        o.worst_rel_width = std::max({o.worst_rel_width, (hc[i] - lc[i]) / zc[i],
                                      (he[i] - le[i]) / std::max(ze[i], 1e-300)});
    }
    const Interval fc = cpu.frobenius(), fe = emu.frob;
    if (!meet(fc.lo, fc.hi, fe.lo, fe.hi)) o.all_intersect = false;
    return o;
}

}  // namespace

TEST_CASE("tiles visited and the off-by-one fault", "[gpu-logic][infsa]") {
    CHECK(pl::tiles_visited(31, 32, il::kFaultNone) == 1);
    CHECK(pl::tiles_visited(32, 32, il::kFaultNone) == 1);
    CHECK(pl::tiles_visited(33, 32, il::kFaultNone) == 2);
    CHECK(pl::tiles_visited(33, 32, il::kFaultOffByOneTile) == 1);
    CHECK(pl::column_tiles(65, il::kFaultNone) == 2);
    CHECK(pl::column_tiles(65, il::kFaultOffByOneTile) == 1);
}

TEST_CASE("perron tile kernel: staging, barriers and the runner-only faults",
          "[gpu-logic][infsa]") {
    // The staged element and its row-major misreading (inside the operand).
    const double M[6] = {0, 1, 2, 3, 4, 5};  // 3 x 2 column-major
    CHECK(pl::staged(M, 3, 2, 2, 1, il::kFaultNone) == 5);
    CHECK(pl::staged(M, 3, 2, 0, 1, il::kFaultTokenStride) == 1);  // 0 * 2 + 1, not M(0, 1) = 3
    CHECK(pl::staged(M, 3, 2, 1, 0, il::kFaultTokenStride) == 2);  // not M(1, 0) = 1
    CHECK(pl::staged(M, 3, 2, 3, 0, il::kFaultNone) == 0);         // row >= N: padding
    CHECK(pl::staged(M, 3, 2, 0, 2, il::kFaultNone) == 0);         // l >= d: padding
    // Barriers: 2 per d slice per column tile per block; the barrier fault leaves out half.
    std::mt19937_64 rng(5);
    const Eigen::MatrixXd Q = positive(65, 17, rng), K = positive(65, 17, rng);
    const Eigen::VectorXd x = Eigen::VectorXd::Ones(65);
    long clean = 0, faulty = 0;
    CHECK(compare_products(Q, K, 32, il::kFaultNone, false, x, &clean).all_intersect);
    CHECK(clean == 2 * 2 * 2 * 2);  // blocks x tiles x slices x 2
    CHECK(!compare_products(Q, K, 32, il::kFaultNoBarrier, false, x, &faulty).all_intersect);
    CHECK(faulty == clean / 2);
}

TEST_CASE(
    "emulated tiled ReLU products share an enclosure with the CPU operator, planted faults "
    "do not",
    "[gpu-logic][infsa]") {
    std::mt19937_64 rng(2024);
    for (long N : {31L, 32L, 33L, 63L, 64L, 65L, 129L})
        for (long d : {8L, 16L, 33L})
            for (long tile : {16L, 64L})
                for (bool transpose : {true, false}) {
                    INFO("N=" << N << " d=" << d << " tile=" << tile << " transpose=" << transpose);
                    const Eigen::MatrixXd Q = positive(N, d, rng), K = positive(N, d, rng);
                    const Eigen::VectorXd x = Eigen::VectorXd::Random(N).cwiseAbs().array() + 0.1;
                    const Overlap ok = compare_products(Q, K, tile, il::kFaultNone, transpose, x);
                    CHECK(ok.all_intersect);
                    // Not vacuous: the enclosures are a few thousand ulps wide at most.
                    CHECK(ok.worst_rel_width <= 1e-11);
                    for (int fault : {il::kFaultOffByOneTile, il::kFaultDroppedTerm,
                                      il::kFaultTokenStride, il::kFaultNoBarrier}) {
                        INFO("planted fault " << fault);
                        CHECK(!compare_products(Q, K, tile, fault, transpose, x).all_intersect);
                    }
                }
    // Wide: d > N.
    const Eigen::MatrixXd Q = positive(31, 65, rng), K = positive(31, 65, rng);
    const Eigen::VectorXd x = Eigen::VectorXd::Ones(31);
    CHECK(compare_products(Q, K, 16, il::kFaultNone, true, x).all_intersect);
    for (int fault : {il::kFaultDroppedTerm, il::kFaultTokenStride, il::kFaultNoBarrier})
        CHECK(!compare_products(Q, K, 16, fault, true, x).all_intersect);
}

TEST_CASE(
    "emulated operator gives a Collatz-Wielandt enclosure of rho(A+) that meets the CPU "
    "one, planted faults one that misses it",
    "[gpu-logic][infsa]") {
    std::mt19937_64 rng(77);
    for (long N : {33L, 64L}) {
        const Eigen::MatrixXd Q = positive(N, 16, rng), K = positive(N, 16, rng);
        const PerronResult cpu = perron(ReluKernelOp(Q, K, 16));
        const PerronResult emu = perron(test::EmulatedReluOp(Q, K, il::kFaultNone));
        INFO("N=" << N << " cpu [" << cpu.rho_enc.lo << ", " << cpu.rho_enc.hi << "] emu ["
                  << emu.rho_enc.lo << ", " << emu.rho_enc.hi << "]");
        REQUIRE(cpu.converged);
        CHECK(emu.converged);
        CHECK(meet(cpu.rho_enc.lo, cpu.rho_enc.hi, emu.rho_enc.lo, emu.rho_enc.hi));
        CHECK((emu.vec - cpu.vec).norm() <= 1e-8);
        for (int fault : {il::kFaultOffByOneTile, il::kFaultDroppedTerm, il::kFaultTokenStride,
                          il::kFaultNoBarrier}) {
            const PerronResult bad = perron(test::EmulatedReluOp(Q, K, fault));
            INFO("planted fault " << fault << " [" << bad.rho_enc.lo << ", " << bad.rho_enc.hi
                                  << "]");
            CHECK(!meet(cpu.rho_enc.lo, cpu.rho_enc.hi, bad.rho_enc.lo, bad.rho_enc.hi));
        }
    }
}
