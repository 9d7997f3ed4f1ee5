// Dense spectral engine: closed-form spectra with exact truth, every backend, enclosures that
// contain the exact singular values, planted wrong sigma that must flip the verdict.
#include <cmath>
#include <limits>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/interval_ops.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/spectral/svd.hpp"
#include "test_matrices.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::hadamard;
using attnspec::test::kU;

namespace {

const SvdMethod kMethods[] = {SvdMethod::jacobi, SvdMethod::bdc, SvdMethod::gesdd,
                              SvdMethod::gejsv};

// Exact truth as an interval: sqrt(c) * d with d a power of two (exact products).
struct Truth {
    std::vector<Interval> sigma;  // descending
};

// Block-diagonal Sylvester Hadamard blocks of sizes from the binary digits of n (31 = 16+8+4+2+1,
// 33 = 32+1) times diag(2^-e_j), zero-padded to rows x cols: exact entries and exact singular
// values sqrt(block size) * 2^-e_j. Dense inside each block, so the SVD has real work to do.
Eigen::MatrixXd graded_hadamard(int rows, int cols, int max_exp, Truth& t) {
    const bool wide = rows < cols;
    const int m = wide ? cols : rows, n = wide ? rows : cols;  // tall shape m >= n
    Eigen::MatrixXd M = Eigen::MatrixXd::Zero(m, n);
    std::vector<Interval> truth;
    int j0 = 0;
    for (int b = 1 << 10; b >= 1; b >>= 1) {
        if (!(n & b)) continue;
        const Eigen::MatrixXd H = hadamard(b);
        const Interval rb = iv::sqrt(Interval::point(static_cast<double>(b)));
        for (int c = 0; c < b; ++c) {
            const int j = j0 + c;
            const double d = std::ldexp(1.0, -(j * max_exp) / std::max(1, n - 1));
            M.block(j0, j, b, 1) = H.col(c) * d;
            truth.push_back({rb.lo * d, rb.hi * d});
        }
        j0 += b;
    }
    std::sort(truth.begin(), truth.end(), [](Interval a, Interval b) { return a.lo > b.lo; });
    t.sigma = truth;
    return wide ? Eigen::MatrixXd(M.transpose()) : M;
}

bool encloses(Interval enc, Interval truth) { return enc.lo <= truth.lo && truth.hi <= enc.hi; }

}  // namespace

TEST_CASE("diagonal matrices: exact singular values in every backend's enclosure", "[spectral]") {
    Eigen::VectorXd d(5);
    d << -3.0, 0.5, 2.0, -1e-6, 7.0;
    const Eigen::MatrixXd M = d.asDiagonal();
    const double exact[5] = {7.0, 3.0, 2.0, 0.5, 1e-6};
    for (SvdMethod meth : kMethods) {
        const SvdResult s = svd(M, meth);
        for (int i = 0; i < 5; ++i) {
            INFO(to_string(meth) << " i=" << i << " [" << s.lo[i] << ", " << s.hi[i] << "] basis "
                                 << s.basis[i]);
            CHECK(s.enclosure(i).contains(exact[i]));
        }
    }
}

TEST_CASE("graded Hadamard 31/32/33, tall and wide, kappa up to 2^40 ~ 1.1e12", "[spectral]") {
    const int shapes[][2] = {{31, 31}, {32, 32}, {33, 33}, {32, 31}, {33, 32}, {31, 32}, {32, 33}};
    for (int max_exp : {0, 20, 40}) {
        for (auto& sh : shapes) {
            Truth t;
            const Eigen::MatrixXd M = graded_hadamard(sh[0], sh[1], max_exp, t);
            for (SvdMethod meth : kMethods) {
                const SvdResult s = svd(M, meth);
                REQUIRE(s.sigma.size() == static_cast<Eigen::Index>(t.sigma.size()));
                for (size_t i = 0; i < t.sigma.size(); ++i) {
                    INFO(sh[0] << "x" << sh[1] << " 2^-" << max_exp << " " << to_string(meth)
                               << " i=" << i << " enc [" << s.lo[i] << ", " << s.hi[i]
                               << "] truth [" << t.sigma[i].lo << ", " << t.sigma[i].hi << "]");
                    CHECK(encloses(s.enclosure(i), t.sigma[i]));
                }
                const Kappa k = kappa(s, M.rows(), M.cols(), KappaConvention::strict);
                const Interval kt = iv::div(t.sigma.front(), t.sigma.back());
                CHECK(k.enclosure.lo <= kt.lo);
                CHECK(kt.hi <= k.enclosure.hi);
            }
        }
    }
}

TEST_CASE("Temple turns absolute residuals into (u kappa)^2 relative accuracy of sigma_min",
          "[spectral]") {
    Truth t;
    const Eigen::MatrixXd M = graded_hadamard(33, 32, 40, t);  // kappa = 2^40
    const SvdResult s = svd(M, SvdMethod::gejsv);
    const Eigen::Index r = s.sigma.size() - 1;
    // Temple: |sigma - theta| <= rho^2/gap + theta_err. The triplet's residual is absolute,
    // rho ~ u sigma_max, so radius/sigma ~ (u kappa)^2 sigma/gap = 1.5e-8/1.45 here; measured
    // 2.1e-9; allow 4 (u kappa)^2. The Weyl radius alone is u sigma_max ~ u kappa relative.
    const double ukappa = kU * std::ldexp(1.0, 40);
    const Tolerance rel{"temple_sigma_min_rel_radius", 4 * ukappa * ukappa,
                        "Temple rho^2/gap with rho ~ u sigma_max: (u kappa)^2/1.45 expected, "
                        "2.1e-9 measured, ~7x headroom"};
    INFO("basis " << s.basis[r] << " radius/sigma = " << s.radius[r] / s.sigma[r]);
    CHECK(s.basis[r] == "temple");
    CHECK(s.radius[r] / s.sigma[r] <= rel.value);
    // The Weyl radius alone is absolute: ~u * sigma_max, i.e. ~2^40 u relative for sigma_min.
    CHECK(s.weyl_radius[r] / s.sigma[r] > 1e3 * rel.value);
    for (SvdMethod meth : kMethods) {
        const SvdResult o = svd(M, meth);
        INFO(to_string(meth) << " radius/sigma_min = " << o.radius[r] / o.sigma[r]);
        CHECK(o.radius[r] / o.sigma[r] <= rel.value);
    }
}

TEST_CASE("orthogonal matrices: clustered sigma = 1, Weyl enclosure", "[spectral]") {
    for (int n : {16, 64}) {
        const Eigen::MatrixXd Q = hadamard(n) / std::sqrt(static_cast<double>(n));
        // H/sqrt(n) is exact for n = 4^k: entries +-2^-k.
        for (SvdMethod meth : kMethods) {
            const SvdResult s = svd(Q, meth);
            for (Eigen::Index i = 0; i < n; ++i) CHECK(s.enclosure(i).contains(1.0));
            const Kappa k = kappa(s, n, n, KappaConvention::strict);
            CHECK(k.enclosure.contains(1.0));
        }
    }
}

TEST_CASE("rank-deficient: kappa_strict = inf, kappa_nz from the last nonzero sigma",
          "[spectral]") {
    Truth t;
    Eigen::MatrixXd M = graded_hadamard(32, 32, 10, t);
    M.col(31).setZero();
    M.col(30).setZero();  // exact sigma 0, 0
    for (SvdMethod meth : kMethods) {
        const SvdResult s = svd(M, meth);
        const Kappa ks = kappa(s, 32, 32, KappaConvention::strict);
        const Kappa kn = kappa(s, 32, 32, KappaConvention::nz);
        CHECK(std::isinf(ks.value));
        CHECK(std::isinf(ks.enclosure.hi));
        CHECK(kn.rank == 30);
        const Interval kt = iv::div(t.sigma[0], t.sigma[29]);
        CHECK(kn.enclosure.lo <= kt.lo);
        CHECK(kt.hi <= kn.enclosure.hi);
        CHECK(s.enclosure(31).contains(0.0));
        CHECK(s.enclosure(30).contains(0.0));
    }
}

TEST_CASE("planted wrong sigma flips the verdict", "[spectral][check]") {
    Truth t;
    const Eigen::MatrixXd M = graded_hadamard(33, 33, 40, t);
    const SvdResult s = svd(M, SvdMethod::gejsv);
    const Eigen::Index r = s.sigma.size() - 1;
    const Interval te = t.sigma.back();  // exact value, enclosed (sqrt of a block size)
    const double truth = 0.5 * (te.lo + te.hi);
    auto ok = compare("sigma_min", "computed", s.sigma[r], s.enclosure(r), Relation::eq, "exact",
                      truth, te);
    CHECK(ok.verdict == Verdict::holds);
    // plant: exact value off by 1e-12 relative -> the enclosures prove it wrong
    const double wrong = truth * (1 + 1e-12);
    auto bad = compare("sigma_min", "computed", s.sigma[r], s.enclosure(r), Relation::eq, "planted",
                       wrong, Interval::point(wrong));
    CHECK(bad.verdict == Verdict::violated);
    // le: kappa <= planted bound below the true kappa -> violated; above -> holds
    const Kappa k = kappa(s, 33, 33, KappaConvention::strict);
    CHECK(compare("k", "kappa", k.value, k.enclosure, Relation::le, "b", 0.999 * k.value,
                  Interval::point(0.999 * k.value))
              .verdict == Verdict::violated);
    CHECK(compare("k", "kappa", k.value, k.enclosure, Relation::le, "b", 1.001 * k.value,
                  Interval::point(1.001 * k.value))
              .verdict == Verdict::holds);
}

TEST_CASE("kappa relative error vs dgejsv <= 1e-8 for kappa <= 1e6 (random, 31..100)",
          "[spectral]") {
    // Perturbation: kappa error ~ u kappa (absolute sigma_min accuracy) = 1.1e-10 at kappa 1e6;
    // measured worst ~1e-11; target from the issue 1e-8.
    const Tolerance tol{"kappa_rel_vs_gejsv", 1e-8, "issue target; u*kappa = 1.1e-10 expected"};
    Rng rng(20261129);
    double worst = 0;
    for (int n : {31, 32, 33, 100}) {
        for (double kap : {1e2, 1e6}) {
            const Eigen::MatrixXd M = rng.with_spectrum(n + 7, n, geometric_spectrum(n, 1.0, kap));
            const Kappa ref =
                kappa(svd(M, SvdMethod::gejsv), M.rows(), M.cols(), KappaConvention::strict);
            for (SvdMethod meth : {SvdMethod::jacobi, SvdMethod::bdc, SvdMethod::gesdd}) {
                const Kappa k = kappa(svd(M, meth), M.rows(), M.cols(), KappaConvention::strict);
                const double e = std::fabs(k.value - ref.value) / std::max(k.value, ref.value);
                worst = std::max(worst, e);
                CHECK(e <= tol.value);
                // enclosures of the two computations must intersect
                CHECK(std::max(k.enclosure.lo, ref.enclosure.lo) <=
                      std::min(k.enclosure.hi, ref.enclosure.hi));
            }
        }
    }
    WARN("worst kappa relative error vs dgejsv: " << worst);
}

TEST_CASE("values-only path carries no enclosure (inconclusive, never holds)", "[spectral]") {
    Rng rng(7);
    const Eigen::MatrixXd M = rng.gaussian(40, 30);
    SvdOptions o;
    o.values_only = true;
    o.method = SvdMethod::gesdd;
    const SvdResult v = svd(M, o);
    const SvdResult f = svd(M, SvdMethod::gesdd);
    CHECK(v.U.size() == 0);
    for (int i = 0; i < 30; ++i)
        CHECK(std::fabs(v.sigma[i] - f.sigma[i]) <= f.radius[i] + 64 * kU * f.sigma[0]);
    CHECK(
        compare("c", "s", v.sigma[0], v.enclosure(0), Relation::le, "b", 1e9, Interval::point(1e9))
            .verdict == Verdict::inconclusive);
}

TEST_CASE("bad input: empty, NaN, bad rtol, unknown names", "[spectral]") {
    Eigen::MatrixXd E(0, 3);
    CHECK_THROWS_AS(svd(E), Error);
    Eigen::MatrixXd N = Eigen::MatrixXd::Ones(3, 3);
    N(1, 1) = std::numeric_limits<double>::quiet_NaN();
    try {
        svd(N);
        FAIL("no throw");
    } catch (const Error& e) {
        CHECK(e.code() == ExitCode::DataError);
    }
    const SvdResult s = svd(Eigen::MatrixXd::Identity(3, 3));
    CHECK_THROWS_AS(kappa(s, 3, 3, KappaConvention::nz, 1.5), Error);
    CHECK_THROWS_AS(svd_method_from_string("qr"), Error);
    CHECK_THROWS_AS(kappa_convention_from_string("loose"), Error);
}

TEST_CASE("kappa_from_extremes: the SVD path and the extremes path agree bit for bit",
          "[spectral]") {
    // diag(4, 2, 1e-20): numerically rank 2 at the default rtol; strict kappa = inf, nz = 2.
    Eigen::MatrixXd M = Eigen::MatrixXd::Zero(4, 3);
    M(0, 0) = 4, M(1, 1) = 2, M(2, 2) = 1e-20;
    const SvdResult s = svd(M);
    CHECK(numerical_rank(s.sigma, 4 * std::numeric_limits<double>::epsilon()) == 2);
    CHECK(numerical_rank(Eigen::Vector3d(0, 0, 0), 0.1) == 0);
    CHECK(numerical_rank(Eigen::Vector3d(3, 2, 1), 0.0) == 3);
    CHECK(kappa_divisor_index(KappaConvention::strict, 2, 3) == 2);
    CHECK(kappa_divisor_index(KappaConvention::nz, 2, 3) == 1);
    CHECK(kappa_divisor_index(KappaConvention::nz, 0, 3) == 0);
    for (KappaConvention c : {KappaConvention::strict, KappaConvention::nz}) {
        const Kappa k = kappa(s, 4, 3, c);
        KappaInputs in;
        in.rtol = 4 * std::numeric_limits<double>::epsilon();
        in.full_rank = 3;
        in.rank = numerical_rank(s.sigma, in.rtol);
        const Eigen::Index j = kappa_divisor_index(c, in.rank, 3);
        in.sigma_max = s.sigma[0], in.max_enclosure = s.enclosure(0);
        in.sigma_min = s.sigma[j], in.min_enclosure = s.enclosure(j);
        const Kappa e = kappa_from_extremes(in, c, s.method);
        CHECK(e.value == k.value);
        CHECK(e.enclosure.lo == k.enclosure.lo);
        CHECK(e.enclosure.hi == k.enclosure.hi);
        CHECK(e.rank == k.rank);
        CHECK(e.rtol == k.rtol);
        CHECK(e.sigma_min == k.sigma_min);
        CHECK(e.method == k.method);
    }
    CHECK(std::isinf(kappa(s, 4, 3, KappaConvention::strict).value));
    CHECK_THAT(kappa(s, 4, 3, KappaConvention::nz).value, Catch::Matchers::WithinRel(2.0, 8 * kU));
    // sigma_max = 0: kappa = inf with the enclosure [inf, inf], enclosures not consulted.
    KappaInputs zero;
    zero.full_rank = 2;
    const Kappa z = kappa_from_extremes(zero, KappaConvention::nz, "test");
    CHECK(std::isinf(z.value));
    CHECK(std::isinf(z.enclosure.lo));
}

TEST_CASE("interval ops round outward and bound thm3.4-style expressions", "[interval]") {
    const Interval a{1.0, 1.0}, third = iv::div(a, Interval::point(3.0));
    CHECK(third.lo < third.hi);  // 1/3 is not a double: the enclosure has width
    const Interval back = iv::mul(third, Interval::point(3.0));
    CHECK(back.contains(1.0));
    const Interval s = iv::add(Interval::point(0.1), Interval::point(0.2));
    CHECK(s.lo <= 0.3);
    CHECK(s.hi >= 0.3);
    CHECK(iv::pow(Interval{-2.0, 3.0}, 2).lo == 0.0);
    CHECK(iv::pow(Interval{-2.0, 3.0}, 2).hi >= 9.0);
    CHECK(iv::pow(Interval{-2.0, 3.0}, 3).lo <= -8.0);
    CHECK(std::isinf(iv::div(a, Interval{-1.0, 1.0}).hi));
    CHECK(iv::div(a, Interval{0.0, 2.0}).lo <= 0.5);
    CHECK(std::isinf(iv::div(a, Interval{0.0, 2.0}).hi));
    CHECK(iv::sqrt(Interval::point(2.0)).contains(std::sqrt(2.0)));
    // kX^3 kL kV (kQ + kK) + kX kS with exact integer inputs: the exact value is an integer.
    const Interval kX{2, 2}, kL{3, 3}, kV{5, 5}, kQ{7, 7}, kK{11, 11}, kS{13, 13};
    const Interval rhs = iv::pow(kX, 3) * kL * kV * (kQ + kK) + kX * kS;
    CHECK(rhs.contains(8.0 * 3 * 5 * 18 + 26));
    CHECK(iv::max(Interval{1, 2}, Interval{0, 3}).hi == 3.0);
    CHECK(iv::is_nan(iv::mul(iv::nan(), a)));
}
