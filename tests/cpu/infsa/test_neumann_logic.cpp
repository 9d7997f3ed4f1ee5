// CPU-side logic of the Neumann twin (gpu/src/infsa/neumann_logic.hpp and _common.cpp):
// forming I - gamma Â over the device grid (with the planted dropped term), the residual and
// backward error of a solve, and the heads a batch covers (with the planted off-by-one).
#include <vector>

#include "../../../gpu/src/infsa/neumann_logic.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/gpu/infsa/neumann_cuda.hpp"
#include "test_support.hpp"

using namespace attnspec;
namespace nl = attnspec::gpu::neumann_logic;

namespace {

Eigen::MatrixXd stochastic(long n, std::uint64_t seed) {
    return gpu::row_stochastic_affinity(n, seed);
}

// The device grid of form_m as a CPU loop over every thread index.
Eigen::MatrixXd form_all(const Eigen::MatrixXd& A, double gamma, long dropped) {
    const long n = A.rows();
    Eigen::MatrixXd M = Eigen::MatrixXd::Constant(n, n, -7.0);
    for (long t = 0; t < n * n; ++t) nl::form_m(A.data(), M.data(), gamma, n, t, dropped);
    return M;
}

}  // namespace

TEST_CASE("neumann_cusolver logic: form_m is I - gamma A, the planted fault drops one 1",
          "[neumann_cusolver][gpu_logic]") {
    for (long n : {1L, 31L, 32L, 33L}) {
        const Eigen::MatrixXd A = stochastic(n, 3 + std::uint64_t(n));
        const double g = 0.9;
        Eigen::MatrixXd ref = -g * A;
        ref.diagonal().array() += 1.0;
        const Eigen::MatrixXd M = form_all(A, g, nl::dropped_diagonal(n, false));
        CHECK(M == ref);  // the same two roundings on both sides: bitwise
        const long d = nl::dropped_diagonal(n, true);
        REQUIRE(d == n / 2);
        const Eigen::MatrixXd F = form_all(A, g, d);
        Eigen::MatrixXd diff = (F - ref).cwiseAbs();
        CHECK(diff(d, d) == 1.0);
        diff(d, d) = 0;
        CHECK(diff.maxCoeff() == 0);
    }
    CHECK(nl::dropped_diagonal(10, false) == -1);
}

TEST_CASE(
    "neumann_cusolver logic: backward error of an LU solve is at rounding level, of the "
    "planted-fault solve is not",
    "[neumann_cusolver][gpu_logic]") {
    const long n = 64, d = 8;
    const double g = 0.9;
    const Eigen::MatrixXd A = stochastic(n, 11);
    const Eigen::MatrixXd B = g * (A * Rng(12).gaussian(n, d));
    const Eigen::MatrixXd M = form_all(A, g, -1);
    const Eigen::MatrixXd X = M.partialPivLu().solve(B);
    const double be = gpu::solve_backward_error(A, g, X, B);
    // Partial-pivoting LU, growth <= 2 (M diagonally dominant by rows): backward error
    // <= 2 gamma_3n + gamma_{n+1} (the twin's gpu-check bound) ~ 6.4e-14; measured ~1e-17.
    const double bound = 2 * gamma_n(3.0 * n) + gamma_n(n + 1.0);
    CHECK(be <= bound);
    const Eigen::MatrixXd Xf =
        form_all(A, g, nl::dropped_diagonal(n, true)).partialPivLu().solve(B);
    CHECK(gpu::solve_backward_error(A, g, Xf, B) > 1e6 * bound);
    // ||I - gamma A||_F through the same element function as the device: one rounding per entry
    // and a sum of n^2 squares -> gamma_{n^2 + 2} relative.
    CHECK(std::abs(gpu::identity_minus_gamma_norm(A, g) - M.norm()) <=
          gamma_n(double(n) * n + 2) * M.norm());
    CHECK(nl::backward_error(0, 0, 0, 0) == 0);
    CHECK(nl::residual_entry(3.0, 2.0, 0.5) == 1.5);
    CHECK_THROWS_AS(gpu::solve_backward_error(A, g, X.topRows(3), B), Error);
}

TEST_CASE("neumann_cusolver logic: heads processed, with the planted off-by-one",
          "[neumann_cusolver][gpu_logic]") {
    CHECK(nl::heads_processed(12, false) == 12);
    CHECK(nl::heads_processed(12, true) == 11);
    CHECK(nl::heads_processed(0, true) == 0);
    CHECK(std::string(gpu::to_string(gpu::IrsLowest::fp16)) == "fp16");
}
