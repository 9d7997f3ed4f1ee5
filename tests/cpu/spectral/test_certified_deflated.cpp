// Deflated certificate for sigma_min (spectral/certified.hpp, proofs/spectral_enclosure.md §7): a
// planted cluster of tiny singular values beyond the plain shift test is enclosed around a
// long-double reference; a beta above lambda_{k+1} makes the Cholesky fail; a planted
// under-estimated residual bound is caught by the exact answer; an ill-conditioned attention
// head through the engine hook.
#include <cmath>

#include "attnspec/attention/attention.hpp"
#include "attnspec/attention/jacobian.hpp"
#include "attnspec/attention/jacobian_spectrum.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/spectral/certified.hpp"
#include "certify_test_support.hpp"
#include "test_support.hpp"

using namespace attnspec;

namespace {
using test::reference_sigma_min;

double gamma_k(double k) { return k * kUnitRoundoff / (1 - k * kUnitRoundoff); }

// 40 x 60, sigma_max 1: four singular values 1e-8 (1 + 1e-6 i) (a cluster: no Temple gap), the
// rest geometric in [0.1, 1]. kappa = 1e8: lambda_min / lambda_max = 1e-16, below the plain
// test's slack (~n u).
Eigen::MatrixXd clustered(Rng& rng) {
    Eigen::VectorXd s(40);
    for (int i = 0; i < 36; ++i) s[i] = std::pow(10.0, -i / 35.0);
    for (int i = 0; i < 4; ++i) s[36 + i] = 1e-8 * (1 + 1e-6 * (3 - i));
    return rng.with_spectrum(40, 60, s);
}

// Options with rigorous dense-product bounds: |fl(J x) - J x| <= gamma_m |J||x|, so
// ||fl(J x) - J x|| <= gamma_m ||J||_F ||x||; the same for fl(J J^T) (Eigen GEMM).
DeflatedOptions dense_options(const Eigen::MatrixXd& J, double sigma_max_hi) {
    DeflatedOptions o;
    const double g = gamma_k(static_cast<double>(J.cols()) + 2), f = J.norm() * 1.000001;
    o.sigma_max_hi = sigma_max_hi;
    o.product_rel_error = g * f / sigma_max_hi;
    o.gram_error = g * f * f;
    return o;
}
}  // namespace

TEST_CASE("deflated: a cluster of tiny singular values beyond the plain test is enclosed",
          "[certify][deflated]") {
    Rng rng(21);
    const Eigen::MatrixXd J = clustered(rng);
    const long double ref = reference_sigma_min(J);
    const Eigen::MatrixXd G = J * J.transpose();
    DenseOperator op(J);
    const DeflatedOptions o = dense_options(J, 1.0 + 1e-12);
    const DeflatedMin r = certify_deflated(op, G, o);
    INFO("ref " << static_cast<double>(ref) << " [" << r.sigma_lo << ", " << r.sigma_hi << "] k "
                << r.k << " beta " << r.beta << " residual " << r.residual << " shift " << r.shift
                << " block error " << r.block_error << (r.notes.empty() ? "" : r.notes.back()));
    REQUIRE(r.certified);
    CHECK(r.k == 4);  // the cluster; the next eigenvalue (0.01) is above vu = 1e-3
    CHECK(static_cast<long double>(r.sigma_lo) <= ref);
    CHECK(static_cast<long double>(r.sigma_hi) >= ref);
    // width: the products' A2 error (pe sigma_max sqrt(k) = 2.6e-14 against sigma 1e-8) bounds
    // it at ~3e-6 relative below; 1e-5 leaves 3x headroom. The quadratic term is ~1e-20 relative.
    CHECK(r.sigma_lo >= static_cast<double>(ref) * (1 - 1e-5));
    CHECK(r.sigma_hi <= static_cast<double>(ref) * (1 + 1e-5));
    CHECK(r.shift < 1e-6 * r.lambda_lo);
    // the plain shift test cannot certify this J: lambda_min is below its slack
    const CertifiedMin plain =
        certified_sigma_min(op, static_cast<double>(ref), Eigen::VectorXd(), {});
    CHECK_FALSE(plain.certified);
}

TEST_CASE("deflated: block inverse iteration gives the same certificate as dsyevr",
          "[certify][deflated]") {
    // the large-n path (the engine's factor of G~ + tau I) forced at n = 40 with a block of 8
    Rng rng(21);
    const Eigen::MatrixXd J = clustered(rng);
    const long double ref = reference_sigma_min(J);
    const Eigen::MatrixXd G = J * J.transpose();
    DenseOperator op(J);
    DeflatedOptions o = dense_options(J, 1.0 + 1e-12);
    const DeflatedMin direct = certify_deflated(op, G, o);
    const Eigen::MatrixXd shifted = G + 1e-12 * Eigen::MatrixXd::Identity(40, 40);
    const Eigen::LLT<Eigen::MatrixXd> llt(shifted);
    REQUIRE(llt.info() == Eigen::Success);
    int solves = 0;
    o.shifted_solve = [&](Eigen::MatrixXd& X) {
        X = llt.solve(X);
        ++solves;
    };
    o.dsyevr_upto = 0;
    o.block_size = 8;
    const DeflatedMin iter = certify_deflated(op, G, o);
    INFO("iterative [" << iter.sigma_lo << ", " << iter.sigma_hi << "] k " << iter.k << " direct ["
                       << direct.sigma_lo << ", " << direct.sigma_hi << "]");
    CHECK(solves == 3);  // 4 of 8 Ritz values below vu: no doubling
    REQUIRE(iter.certified);
    CHECK(iter.k == direct.k);
    CHECK(static_cast<long double>(iter.sigma_lo) <= ref);
    CHECK(static_cast<long double>(iter.sigma_hi) >= ref);
    CHECK(iter.sigma_lo >= static_cast<double>(ref) * (1 - 1e-5));
}

TEST_CASE("deflated: a beta above lambda_{k+1} makes the Cholesky fail", "[certify][deflated]") {
    Rng rng(21);
    const Eigen::MatrixXd J = clustered(rng);
    const Eigen::MatrixXd G = J * J.transpose();
    DenseOperator op(J);
    DeflatedOptions o = dense_options(J, 1.0 + 1e-12);
    o.beta_override = 0.0102;  // lambda_{k+1} = sigma_36^2 = 0.01: 2% above it
    const DeflatedMin bad = certify_deflated(op, G, o);
    INFO("k " << bad.k << " beta " << bad.beta << " theta " << bad.theta_1 << " " << bad.theta_k
              << " " << bad.theta_next << " c " << bad.slack << " lo " << bad.sigma_lo);
    CHECK_FALSE(bad.certified);
    CHECK(bad.attempts == 1);  // a forced beta is tried once
    o.beta_override = 0.0098;  // 2% below: certified
    const DeflatedMin good = certify_deflated(op, G, o);
    CHECK(good.certified);
}

TEST_CASE("deflated: a planted under-estimated residual bound is caught by the exact answer",
          "[certify][deflated]") {
    // G~ = J J^T + P with ||P|| ~ 1e-7 (declared honestly as gram_error): the dsyevr vectors miss
    // the cluster by an angle ~ ||P|| / 0.01, so the Ritz block's lambda_1 lies far above the
    // true 1e-16. The residual term 2e^2/(g + sqrt(g^2 + 4e^2)) is what pulls the bound below it:
    // switched off (residual_scale = 0) the method "certifies" a sigma_min above the exact one.
    Rng rng(21);
    const Eigen::MatrixXd J = clustered(rng);
    const long double ref = reference_sigma_min(J);
    Eigen::MatrixXd P(40, 40);
    for (int i = 0; i < 40; ++i)
        for (int j = 0; j <= i; ++j) P(i, j) = P(j, i) = 1e-9 * rng.normal();
    const Eigen::MatrixXd G = J * J.transpose() + P;
    DenseOperator op(J);
    DeflatedOptions o = dense_options(J, 1.0 + 1e-12);
    o.gram_error += P.norm() * 1.001;  // ||P||_2 <= ||P||_F
    const DeflatedMin honest = certify_deflated(op, G, o);
    INFO("ref " << static_cast<double>(ref) << " honest lo " << honest.sigma_lo << " shift "
                << honest.shift);
    CHECK(static_cast<long double>(honest.sigma_lo) <= ref);  // 0 when not certified
    o.residual_scale = 0;
    const DeflatedMin planted = certify_deflated(op, G, o);
    INFO("planted lo " << planted.sigma_lo);
    REQUIRE(planted.certified);
    CHECK(static_cast<long double>(planted.sigma_lo) > ref);  // the exact answer catches it
}

TEST_CASE("deflated: an ill-conditioned attention head through the engine hook",
          "[certify][deflated]") {
    // Gaussian tokens, s = 1, weights scaled up to saturate the softmax: kappa(J) = 1.2e8, beyond
    // the plain test at this n (n = 128); the engine's own lower end is 0 (a 62-fold cluster).
    // Reference: long-double SVD of the dense closed-form J, whose own rounding (~sqrt(n) u |J| in
    // practice) is far inside the worst-case A2 pad of the enclosure.
    RandomSpec rs;
    rs.N = 16, rs.D = 32, rs.d = 8, rs.seed = 1, rs.weight_scale = 1.7;
    rs.token_dist = "gaussian", rs.scale = LogitScale::one;
    const Head h = random_head(rs);
    const long double ref = reference_sigma_min(jacobian_weights(h));
    LargeSvdOptions o;
    o.mode = LargeSvdMode::extremal;
    o.certify.mode = CertifyMode::always;
    o.certify.method = CertifyMethod::deflated;  // auto takes the double-double test here (§8)
    const OperatorSpectrum s = jacobian_spectrum(h, o);
    bool deflated = false;
    for (const auto& n : s.notes)
        deflated = deflated || n.find("certify (deflated): certified") == 0;
    INFO("ref " << static_cast<double>(ref) << " enclosure [" << s.min.enclosure.lo << ", "
                << s.min.enclosure.hi << "] " << s.min.basis << " kappa " << s.strict.value);
    CHECK(deflated);
    CHECK(s.min.enclosure.lo > 0);
    CHECK(static_cast<long double>(s.min.enclosure.lo) <= ref);
    CHECK(static_cast<long double>(s.min.enclosure.hi) >= ref);
    CHECK(std::isfinite(s.strict.enclosure.hi));
    // width: the block error sqrt(k) pe sigma_max (pe = 120 u here) is 1.2e-5 of sigma_min; 4e-5
    // leaves 3x headroom
    CHECK(s.min.enclosure.lo >= static_cast<double>(ref) * (1 - 4e-5));
    CHECK(s.min.sigma <= s.min.enclosure.hi);
}

TEST_CASE("deflated: bad options and memory are refused", "[certify][deflated]") {
    Rng rng(21);
    const Eigen::MatrixXd J = clustered(rng);
    const Eigen::MatrixXd G = J * J.transpose();
    DenseOperator op(J);
    DeflatedOptions o = dense_options(J, 1.0);
    o.max_bytes = 1000;
    CHECK_THROWS_AS(certify_deflated(op, G, o), Error);
    o = dense_options(J, 1.0);
    o.product_rel_error = 0;
    CHECK_THROWS_AS(certify_deflated(op, G, o), Error);
    o = dense_options(J, 1.0);
    const Eigen::MatrixXd small = G.topLeftCorner(10, 10);
    CHECK_THROWS_AS(certify_deflated(op, small, o), Error);
    o.vu_rel = 1e-20;  // nothing below vu: no certificate, a note
    const DeflatedMin none = certify_deflated(op, G, o);
    CHECK_FALSE(none.certified);
    CHECK(none.k == 0);
}
