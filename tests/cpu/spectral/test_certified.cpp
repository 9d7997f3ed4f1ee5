// Certified sigma_min by verified positive definiteness (spectral/certified.hpp): bounds below and
// close to a long-double reference, a shift above lambda_min that must fail, a planted
// under-estimated rounding bound caught by the exact answer, graded rows (van der Sluis) that the
// normwise engine cannot resolve, and the engine hook.
#include <cmath>
#include <random>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/spectral/certified.hpp"
#include "attnspec/spectral/operator_spectrum.hpp"
#include "certify_test_support.hpp"
#include "test_support.hpp"

using namespace attnspec;
using test::left_vector_min;
using test::reference_sigma_min;

TEST_CASE("certify: constructed sigma_min is enclosed from below and closely", "[certify]") {
    // c = gamma_{n+1} ||W^-1 |L|||^2 + 2u ||W^-1|G|W^-1|| ~ 1e-14 here, times ~sum w^2 u^2 / lambda
    // ~ kappa^2 / n: relative loss in sigma ~1e-9 at kappa 1e3, ~1e-5 at 1e5 (proofs §6).
    Rng rng(7);
    for (double kap : {1e1, 1e3, 1e5}) {
        const Eigen::MatrixXd J = rng.with_spectrum(12, 30, geometric_spectrum(12, 1.0, kap));
        const long double ref = reference_sigma_min(J);
        const double rel = kap <= 1e3 ? 1e-6 : 1e-3;
        DenseOperator op(J);
        const CertifiedMin r =
            certified_sigma_min(op, static_cast<double>(ref), left_vector_min(J), {});
        INFO("kappa " << kap << " ref " << static_cast<double>(ref) << " lo " << r.sigma_lo
                      << " tau " << r.tau << " c " << r.slack << " attempts " << r.attempts);
        REQUIRE(r.certified);
        CHECK(static_cast<long double>(r.sigma_lo) <= ref);
        CHECK(r.sigma_lo >= static_cast<double>(ref) * (1 - rel));
        CHECK(r.lambda_lo == r.tau);
        CHECK(r.attempts >= 1);
    }
}

TEST_CASE("certify: a shift above lambda_min makes the Cholesky fail", "[certify]") {
    Rng rng(11);
    const Eigen::MatrixXd J = rng.with_spectrum(10, 25, geometric_spectrum(10, 1.0, 1e4));
    const double lam = static_cast<double>(reference_sigma_min(J) * reference_sigma_min(J));
    const CompensatedGram g = compensated_gram(J);
    // planted: tau 1% above lambda_min; even with no slack at all the factorization must fail
    const ShiftTest bad = rump_shift_test(g, 1.01 * lam, 0.0);
    CHECK_FALSE(bad.factored);
    CHECK_FALSE(bad.certified);
    // and 1% below with the proper slack: factored and certified
    const double c = rump_slack(g.G, g.w, g.scaled_error, 0.99 * lam, 1.0);
    const ShiftTest good = rump_shift_test(g, 0.99 * lam, 100 * c);
    CHECK(good.factored);
    CHECK(good.certified);
    CHECK(good.c_needed <= good.c_trial);
}

TEST_CASE("certify: a planted under-estimated rounding bound is caught by the exact answer",
          "[certify]") {
    // J = [B 0] with B integer n x (n-1): J J^T is exact in double and exactly singular, so the
    // true lambda_min is 0. With the rounding bound switched off (slack_scale = 0) a Cholesky of
    // G - tau I at a tau below the rounding level succeeds for some matrices and "certifies"
    // lambda_min >= tau > 0: the comparison with the exact answer must catch it. With the real
    // bound no matrix is ever certified.
    std::mt19937_64 gen(3);
    int planted_caught = 0, honest_claims = 0;
    for (int trial = 0; trial < 40; ++trial) {
        const Eigen::MatrixXd J = test::singular_integer_rows(gen, 9);
        REQUIRE(reference_sigma_min(J) < 1e-15L);  // long-double reference agrees: singular
        const CompensatedGram g = compensated_gram(J);
        for (double level : {1e-16, 1e-17, 1e-18}) {
            const double lam_est = level * g.G.diagonal().maxCoeff();
            PlainCertifyOptions planted;
            planted.slack_scale = 0;
            planted.max_attempts = 1;
            const CertifiedMin p = certify_lambda_min(g, lam_est, {}, planted);
            if (p.certified && p.lambda_lo > 0) ++planted_caught;
            if (certify_lambda_min(g, lam_est, {}, {}).certified) ++honest_claims;
        }
    }
    CHECK(planted_caught > 0);  // the planted bound claims lambda_min > 0 = exact: detected
    CHECK(honest_claims == 0);
}

TEST_CASE("certify: graded rows beyond the normwise limit are certified (van der Sluis)",
          "[certify]") {
    // J = D B, B Gaussian 16 x 48, D = diag(10^(-0.8 i)): kappa(J) ~ 1e13 > 1/sqrt(u), so J J^T
    // cannot resolve sigma_min normwise, but W^-1 J J^T W^-1 is well conditioned.
    Rng rng(5);
    const int n = 16, m = 48;
    Eigen::MatrixXd J(n, m);
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < m; ++k) J(i, k) = std::pow(10.0, -0.8 * i) * rng.normal();
    const long double ref = reference_sigma_min(J);
    DenseOperator op(J);
    const CertifiedMin r = certified_sigma_min(op, static_cast<double>(ref), left_vector_min(J));
    LargeSvdOptions never;
    never.certify.mode = CertifyMode::never;
    const OperatorSpectrum plain = operator_spectrum(op, nullptr, never);
    INFO("ref " << static_cast<double>(ref) << " lo " << r.sigma_lo << " c " << r.slack
                << " engine lo " << plain.min.enclosure.lo);
    REQUIRE(r.certified);
    CHECK(static_cast<long double>(r.sigma_lo) <= ref);
    CHECK(r.sigma_lo >= static_cast<double>(ref) * (1 - 1e-6));
    CHECK(plain.min.enclosure.lo < r.sigma_lo);  // the normwise engine's bound is weaker
}

TEST_CASE("certify: the engine hook, modes and refusals", "[certify]") {
    Rng rng(9);
    const Eigen::MatrixXd J = rng.with_spectrum(20, 50, geometric_spectrum(20, 1.0, 1e3));
    const long double ref = reference_sigma_min(J);
    DenseOperator op(J);
    LargeSvdOptions o;
    o.certify.mode = CertifyMode::always;
    o.certify.method = CertifyMethod::plain;
    const OperatorSpectrum s = operator_spectrum(op, nullptr, o);
    bool noted = false;
    for (const auto& n : s.notes) noted = noted || n.find("certify: certified") == 0;
    CHECK(noted);
    CHECK(static_cast<long double>(s.min.enclosure.lo) <= ref);
    o.certify.method = CertifyMethod::auto_select;  // auto: the double-double test first (§8)
    const OperatorSpectrum d = operator_spectrum(op, nullptr, o);
    bool dd_noted = false;
    for (const auto& n : d.notes)
        dd_noted = dd_noted || n.find("certify (double-double): certified") == 0;
    CHECK(dd_noted);
    CHECK(static_cast<long double>(d.min.enclosure.lo) <= ref);
    CHECK(d.min.enclosure.lo >= s.min.enclosure.lo);
    o.certify.mode = CertifyMode::auto_select;  // a tight refined enclosure: auto does not run
    const OperatorSpectrum a = operator_spectrum(op, nullptr, o);
    for (const auto& n : a.notes) CHECK(n.find("certify") == std::string::npos);
    CHECK(certify_mode_from_string("never") == CertifyMode::never);
    CHECK_THROWS_AS(certify_mode_from_string("sometimes"), Error);
    PlainCertifyOptions small;
    small.max_bytes = 1000;
    CHECK_THROWS_AS(certified_sigma_min(op, 1.0, {}, small), Error);
    const Eigen::MatrixXd tall = J.transpose();
    DenseOperator top(tall);
    CHECK_THROWS_AS(certified_sigma_min(top, 1.0, {}), Error);
}
