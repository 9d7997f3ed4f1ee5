// svd() on matrices near DBL_MAX and in the subnormal range (issue 14): scaled by a power of two
// and back, so sigma and its enclosure are those of the ordinary-range matrix times 2^e.
#include <cmath>
#include <limits>

#include "attnspec/base/random.hpp"
#include "attnspec/spectral/cond_analysis.hpp"
#include "attnspec/spectral/svd.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::error_of;

namespace {
// Small integers: every power-of-two multiple in the double range (subnormals included) is exact.
Eigen::MatrixXd integer_matrix(Eigen::Index m, Eigen::Index n, std::uint64_t seed) {
    return Rng(seed).gaussian(m, n, 20.0).array().round().matrix();
}
Eigen::MatrixXd times_pow2(const Eigen::MatrixXd& M, int e) {
    return M.unaryExpr([e](double x) { return std::ldexp(x, e); });
}
}  // namespace

TEST_CASE("svd near DBL_MAX: sigma and enclosure are the scaled ones, kappa finite",
          "[spectral][resources]") {
    Eigen::MatrixXd G = Rng(7).gaussian(6, 4);
    G = times_pow2(G, -std::ilogb(G.cwiseAbs().maxCoeff()));  // largest |entry| in [1, 2)
    const Eigen::MatrixXd M = times_pow2(G, 1020);            // entries up to ~1.8e307 * 2
    REQUIRE(M.allFinite());
    const SvdResult ref = svd(G), big = svd(M);
    for (Eigen::Index i = 0; i < ref.sigma.size(); ++i) {
        CHECK(big.sigma[i] == std::ldexp(ref.sigma[i], 1020));
        CHECK(big.lo[i] == std::ldexp(ref.lo[i], 1020));
        CHECK(big.hi[i] == std::ldexp(ref.hi[i], 1020));
        CHECK(std::isfinite(big.hi[i]));
    }
    const CondAnalysis a = cond_analysis(M);
    CHECK(std::isfinite(a.strict.value));
    CHECK(a.strict.value == cond_analysis(G).strict.value);
}

TEST_CASE("svd whose sigma_max exceeds DBL_MAX is refused, not inf and NaN",
          "[spectral][resources]") {
    const Eigen::MatrixXd M = Eigen::MatrixXd::Constant(4, 4, 1e308);  // sigma_max = 4e308
    const Error e = error_of([&] { cond_analysis(M); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(std::string(e.what()).find("above the largest double") != std::string::npos);
}

TEST_CASE("svd in the subnormal range: enclosures contain the scaled exact values",
          "[spectral][resources]") {
    const Eigen::MatrixXd G = integer_matrix(5, 3, 11);
    for (int e : {-1020, -1060}) {  // ~1e-307 (normal) and ~1e-319 (subnormal)
        const Eigen::MatrixXd M = times_pow2(G, e);
        REQUIRE(times_pow2(M, -e) == G);  // the test matrix is exact
        const SvdResult ref = svd(G), tiny = svd(M);
        for (Eigen::Index i = 0; i < ref.sigma.size(); ++i) {
            INFO("e = " << e << ", i = " << i);
            CHECK(std::ldexp(tiny.lo[i], -e) <= ref.lo[i]);
            CHECK(std::ldexp(tiny.hi[i], -e) >= ref.hi[i]);
            CHECK(std::ldexp(tiny.sigma[i], -e) == Approx(ref.sigma[i]).epsilon(1e-3));
        }
        CHECK(cond_analysis(M).strict.value == Approx(cond_analysis(G).strict.value).epsilon(1e-3));
    }
}

TEST_CASE("svd of entries spanning more than the double range is refused",
          "[spectral][resources]") {
    Eigen::MatrixXd M = Eigen::MatrixXd::Identity(3, 3);
    M(0, 0) = 1e300;
    M(1, 1) = 3e-300;  // 3e-600 after scaling: not representable
    const Error e = error_of([&] { svd(M); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(std::string(e.what()).find("cannot be scaled exactly") != std::string::npos);
}
