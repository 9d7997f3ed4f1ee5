// truncation_order near gamma rho(Â) = 1 and at extreme targets (issue 14): computed in floating
// point, bounded by kMaxTruncationOrder, refused (DataError, parameter "target") when it cannot be
// met, and never a hang or an overflowed int.
#include <chrono>
#include <cmath>
#include <limits>

#include "attnspec/infsa/neumann.hpp"
#include "attnspec/infsa/neumann_analysis.hpp"
#include "attnspec/infsa/perron.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::error_of;
using attnspec::test::seconds_since;

TEST_CASE("truncation order: 0.25 ones(4,4) with gamma just below 1/rho is refused, fast",
          "[infsa][resources]") {
    const Eigen::MatrixXd A = Eigen::MatrixXd::Constant(4, 4, 0.25);  // rho = ||A||_2 = 1
    const double gamma = 1 - 1e-8;
    const double s_hi = affinity_norms(A).norm2.hi;
    REQUIRE(gamma * s_hi < 1);  // convergent: the order exists but is ~3e9
    const auto t0 = std::chrono::steady_clock::now();
    const Error e = error_of([&] { truncation_order(gamma, s_hi, 1e-6); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(e.parameter() == "target");
    CHECK(std::string(e.what()).find("above the limit K <= 10000000") != std::string::npos);
    NeumannAnalysisOptions opt;  // the whole analysis refuses too, before its LU
    opt.gamma = gamma;
    opt.orders = {1};
    const Error a = error_of([&] { analyze_neumann(A, opt); });
    CHECK(a.parameter() == "target");
    CHECK(seconds_since(t0) < 5.0);
}

TEST_CASE("truncation order: targets that underflow are refused, not answered 2147483646",
          "[infsa][resources]") {
    for (double target : {5e-324, 1e-310, 0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                          std::numeric_limits<double>::infinity()}) {
        const Error e = error_of([&] { truncation_order(0.9, 0.5, target); });
        CHECK(e.code() == ExitCode::DataError);
        CHECK(e.parameter() == "target");
        NeumannAnalysisOptions opt;
        opt.target = target;
        CHECK(error_of([&] { check_neumann_options(opt); }).parameter() == "target");
    }
    // The smallest accepted target is met by a finite order whose bound really is below it.
    const int K = truncation_order(0.9, 0.5, kMinTruncationTarget);
    CHECK(K > 0);
    CHECK(truncation_bound(0.9, 0.5, K) <= kMinTruncationTarget);
    CHECK(truncation_bound(0.9, 0.5, K - 1) > kMinTruncationTarget);
}

TEST_CASE("truncation order: a large feasible order is the least one, found in O(1)",
          "[infsa][resources]") {
    const auto t0 = std::chrono::steady_clock::now();
    for (double q : {1 - 1e-3, 1 - 1e-5, 1 - 1e-6, 0.5, 1e-3}) {
        for (double target : {1e-3, 1e-6, 1e-12, 1e-200}) {
            INFO("q = " << q << ", target = " << target);
            // Orders beyond the cap are refused; every other one is returned (gamma = q,
            // ||A||_2 <= 1).
            const double K_real = std::log(target * (1 - q)) / std::log(q) - 1;
            if (K_real > 1.01 * kMaxTruncationOrder) {
                CHECK(error_of([&] { truncation_order(q, 1.0, target); }).parameter() == "target");
                continue;
            }
            if (K_real > 0.99 * kMaxTruncationOrder) continue;  // at the cap: either answer
            const int K = truncation_order(q, 1.0, target);
            INFO("K = " << K);
            REQUIRE(K >= 0);
            CHECK(K <= kMaxTruncationOrder);
            CHECK(truncation_bound(q, 1.0, K) <= target);
            if (K > 0) CHECK(truncation_bound(q, 1.0, K - 1) > target);
        }
    }
    CHECK(seconds_since(t0) < 2.0);
    // Just above the cap: refused with the order it would need.
    const double q = 1 - 2e-6;  // 1e-6 needs K ~ 1.4e7
    const Error e = error_of([&] { truncation_order(q, 1.0, 1e-6); });
    CHECK(e.parameter() == "target");
}

TEST_CASE("truncation bound stays an upper bound where q^(K+1) underflows", "[infsa][resources]") {
    // 0.5^2001 is below the smallest subnormal: the computed power is 0, the bound must not be.
    const double b = truncation_bound(0.9, 0.5, 2000);
    CHECK(b > 0);
    CHECK(b >= 2 * std::numeric_limits<double>::min() / (1 - 0.45));
}
