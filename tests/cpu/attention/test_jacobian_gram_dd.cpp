// J~ J~^T in double-double from a head's factors (attention/jacobian.hpp, jacobian_gram_dd;
// proofs/spectral_enclosure.md §8 "Gram from the factors"): within its bound rho of a binary128
// Gram of J~ built row by row from the same stored factors (a planted perturbation of 3 rho must
// break the check), the same structure as jacobian_gram_outer, the same bits for any thread
// count, refusals, and the certificate on it through jacobian_spectrum.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attnspec/attention/attention.hpp"
#include "attnspec/attention/jacobian.hpp"
#include "attnspec/attention/jacobian_spectrum.hpp"
#include "attnspec/base/errors.hpp"
#include "test_support.hpp"

using namespace attnspec;
using Eigen::Index;
using Eigen::MatrixXd;

namespace {
using Quad = __float128;
Quad abs_quad(Quad x) { return x < 0 ? -x : x; }

// J~ J~^T in binary128: the rows [s X_i (x) Z_c(i), s Q_i (x) Y_c(i), (S X)_i (x) e_c] with
// Z_c = P^c K, Y_c = P^c X, S X formed in binary128 from the stored (double) factors.
std::vector<Quad> quad_gram(const JacobianFactors& f) {
    const Index N = f.X.rows(), D = f.X.cols(), d = f.Q.cols(), n = N * d;
    const Index m = D * d + d * D + D * d;
    std::vector<Quad> rows(static_cast<std::size_t>(n * m), 0);
    auto mat = [](const MatrixXd& A, const MatrixXd& B) {  // A B in binary128
        std::vector<Quad> C(static_cast<std::size_t>(A.rows() * B.cols()), 0);
        for (Index i = 0; i < A.rows(); ++i)
            for (Index j = 0; j < B.cols(); ++j) {
                Quad acc = 0;
                for (Index k = 0; k < A.cols(); ++k) acc += Quad(A(i, k)) * Quad(B(k, j));
                C[static_cast<std::size_t>(i * B.cols() + j)] = acc;
            }
        return C;
    };
    const std::vector<Quad> SX = mat(f.S, f.X);
    const Quad s = f.s;
    for (Index c = 0; c < d; ++c) {
        const MatrixXd& P = f.P[static_cast<std::size_t>(c)];
        const std::vector<Quad> Z = mat(P, f.K), Y = mat(P, f.X);
        for (Index i = 0; i < N; ++i) {
            Quad* row = rows.data() + static_cast<std::size_t>((c * N + i) * m);
            for (Index a = 0; a < D; ++a)
                for (Index b = 0; b < d; ++b) {
                    row[a * d + b] = s * Quad(f.X(i, a)) * Z[static_cast<std::size_t>(i * d + b)];
                    row[D * d + b * D + a] =
                        s * Quad(f.Q(i, b)) * Y[static_cast<std::size_t>(i * D + a)];
                }
            for (Index a = 0; a < D; ++a)
                row[2 * D * d + a * d + c] = SX[static_cast<std::size_t>(i * D + a)];
        }
    }
    std::vector<Quad> G(static_cast<std::size_t>(n * n), 0);
    for (Index i = 0; i < n; ++i)
        for (Index j = 0; j <= i; ++j) {
            Quad acc = 0;
            for (Index k = 0; k < m; ++k)
                acc += rows[static_cast<std::size_t>(i * m + k)] *
                       rows[static_cast<std::size_t>(j * m + k)];
            G[static_cast<std::size_t>(i * n + j)] = G[static_cast<std::size_t>(j * n + i)] = acc;
        }
    return G;
}

// ||G~ - G||_2 with the difference formed in binary128 (then rounded: it is tiny).
double error_norm(const DdGram& g, const std::vector<Quad>& G) {
    const Index n = g.n;
    MatrixXd E(n, n);
    for (Index i = 0; i < n; ++i)
        for (Index j = 0; j <= i; ++j) {
            const auto at = static_cast<std::size_t>(i * n + j);
            const Quad e = (Quad(g.hi[at]) + Quad(g.lo[at])) - G[at];
            E(i, j) = E(j, i) = static_cast<double>(e);
        }
    return Eigen::JacobiSVD<MatrixXd>(E).singularValues()(0);
}

Head test_head(Index N, Index D, Index d, double w, std::uint64_t seed, LogitScale sc) {
    RandomSpec rs;
    rs.N = N, rs.D = D, rs.d = d, rs.seed = seed, rs.weight_scale = w, rs.scale = sc;
    return random_head(rs);
}

using LMat = Eigen::Matrix<long double, Eigen::Dynamic, Eigen::Dynamic>;

// The weight Jacobian from factors in long double (64-bit significand: ~5e-20 relative), rows
// (c, i) in the column order [W_Q (a, b), W_K (a, b), W_V (a, c')]: the same formulas as J~.
LMat jacobian_from(const LMat& X, const LMat& Q, const LMat& K, const LMat& S,
                   const std::vector<LMat>& P, long double s) {
    const Index N = X.rows(), D = X.cols(), d = Q.cols();
    LMat J = LMat::Zero(N * d, 3 * D * d);
    const LMat SX = S * X;
    for (Index c = 0; c < d; ++c) {
        const LMat Z = P[static_cast<std::size_t>(c)] * K, Y = P[static_cast<std::size_t>(c)] * X;
        for (Index i = 0; i < N; ++i)
            for (Index a = 0; a < D; ++a) {
                for (Index b = 0; b < d; ++b) {
                    J(c * N + i, a * d + b) = s * X(i, a) * Z(i, b);
                    J(c * N + i, D * d + a * d + b) = s * Q(i, b) * Y(i, a);
                }
                J(c * N + i, 2 * D * d + a * d + c) = SX(i, a);
            }
    }
    return J;
}

// The exact J (to long double accuracy) of the head's effective weights and biases.
LMat exact_jacobian(const Head& h) {
    const Head e = h.effective();
    const Forward<long double> f = attention_forward<long double>(
        e.X.cast<long double>(), e.W_Q.cast<long double>(), e.W_K.cast<long double>(),
        e.W_V.cast<long double>(), static_cast<long double>(e.s), e.b_Q, e.b_K, e.b_V);
    std::vector<LMat> P;
    for (Index c = 0; c < f.V.cols(); ++c) {
        LMat Pc = f.S;
        for (Index i = 0; i < Pc.rows(); ++i)
            for (Index k = 0; k < Pc.cols(); ++k) Pc(i, k) *= f.V(k, c) - f.A(i, c);
        P.push_back(Pc);
    }
    return jacobian_from(e.X.cast<long double>(), f.Q, f.K, f.S, P, e.s);
}

LMat factors_jacobian(const JacobianFactors& f) {
    std::vector<LMat> P;
    for (const MatrixXd& Pc : f.P) P.emplace_back(Pc.cast<long double>());
    return jacobian_from(f.X.cast<long double>(), f.Q.cast<long double>(), f.K.cast<long double>(),
                         f.S.cast<long double>(), P, f.s);
}

double norm2(const LMat& A) {
    return Eigen::JacobiSVD<MatrixXd>(A.cast<double>()).singularValues()(0);
}
}  // namespace

TEST_CASE(
    "the C library's expl is within 2 ulp on [-745, 0] (assumption A-exp of the factors' "
    "bound)",
    "[jacobian][certify][dd]") {
    // reference: exp in binary128, 2^k e^r with r = x - k ln 2 (ln 2 as a double-double pair,
    // ~1e-33) and 40 terms of the series (|r| <= 0.35: truncation ~1e-50)
    const Quad ln2 = Quad(0x1.62e42fefa39efp-1) + Quad(0x1.abc9e3b39803fp-56);
    auto exp_quad = [&](double x) {
        const int k = static_cast<int>(std::lround(x / 0.6931471805599453));
        const Quad r = Quad(x) - Quad(k) * ln2;
        Quad term = 1, sum = 1;
        for (int j = 1; j <= 40; ++j) term = term * r / Quad(j), sum += term;
        const int k1 = k / 2;
        return sum * Quad(std::ldexp(1.0, k1)) * Quad(std::ldexp(1.0, k - k1));
    };
    double worst = 0;  // in ulps of long double at the exact value
    for (int k = 0; k <= 40000; ++k) {
        const double x = -745.0 * k / 40000.0 - (k % 7) * 1e-9;
        const Quad ref = exp_quad(x);
        const long double got = std::exp(static_cast<long double>(x));
        const auto refl = static_cast<long double>(ref);
        const long double ulp = std::nextafter(refl, 2 * refl + 1) - refl;
        worst = std::max(
            worst, static_cast<double>(static_cast<long double>(abs_quad(Quad(got) - ref)) / ulp));
    }
    INFO("largest error of expl: " << worst << " ulp (long double, "
                                   << std::numeric_limits<long double>::digits
                                   << "-bit significand)");
    CHECK(worst <= 2.0);
    // the same check catches a planted 3-ulp error
    const long double one = std::exp(-1.0L);
    long double off = one;
    for (int k = 0; k < 3; ++k) off = std::nextafter(off, 1.0L);
    const long double ulp1 = std::nextafter(one, 1.0L) - one;
    CHECK_FALSE(static_cast<long double>(abs_quad(Quad(off) - exp_quad(-1.0))) / ulp1 <= 2.0L);
}

TEST_CASE(
    "dd factors: ||J~ - J||_2 within the proved bound against a long-double J, and a planted "
    "3x error is caught",
    "[jacobian][certify][dd]") {
    auto biased = test_head(12, 20, 4, 1.2, 5, LogitScale::one);
    biased.b_Q = Eigen::VectorXd::LinSpaced(4, -0.5, 0.7);
    biased.b_K = Eigen::VectorXd::LinSpaced(4, 0.3, -0.2);
    biased.b_V = Eigen::VectorXd::LinSpaced(4, 1.0, -1.0);
    for (const Head& h : {test_head(16, 32, 8, 1.6, 1, LogitScale::one),
                          test_head(10, 24, 6, 1.0, 3, LogitScale::inv_sqrt_d), biased}) {
        const JacobianFactors f = jacobian_factors(h);
        const LMat J = exact_jacobian(h), Jt = factors_jacobian(f);
        const LMat dJ = Jt - J;
        const double err = norm2(dJ), sigma_max = norm2(J);
        INFO("||J~ - J|| = " << err << ", bound " << f.error << " (Q " << f.error_q << ", K "
                             << f.error_k << ", V " << f.error_v << "), sigma_max " << sigma_max
                             << ": bound / sigma_max = " << f.error / sigma_max);
        CHECK(err > 0);
        CHECK(err <= f.error);
        // a useful bound: a few dozen u of sigma_max (A2's normwise p is 4 sqrt(n + m) u)
        CHECK(f.error <= 64 * 1.12e-16 * sigma_max);
        // planted: J~ moved by 3 bounds along its top singular direction breaks the check
        Eigen::JacobiSVD<MatrixXd> svd(J.cast<double>(), Eigen::ComputeThinU | Eigen::ComputeThinV);
        const LMat planted =
            dJ + (3 * f.error * svd.matrixU().col(0) * svd.matrixV().col(0).transpose())
                     .cast<long double>();
        CHECK_FALSE(norm2(planted) <= f.error);
    }
}

TEST_CASE("jacobian_gram_dd: within rho of a binary128 Gram of J~, and a planted 3 rho is caught",
          "[jacobian][certify][dd]") {
    for (const auto& [h, what] :
         {std::pair{test_head(6, 5, 3, 1.0, 3, LogitScale::inv_sqrt_d), "(6, 5, 3) 1/sqrt(d)"},
          std::pair{test_head(5, 9, 4, 1.7, 8, LogitScale::one), "(5, 9, 4) s = 1, w 1.7"}}) {
        INFO(what);
        const DdGram g = jacobian_gram_dd(h, 1);
        const std::vector<Quad> G = quad_gram(jacobian_factors(h));
        const double err = error_norm(g, G);
        double gmax = 0;
        for (const Quad x : G) gmax = std::max(gmax, std::abs(static_cast<double>(x)));
        INFO("||G~ - G|| = " << err << ", rho = " << g.rho << ", max |G| = " << gmax);
        CHECK(err <= g.rho);
        CHECK(g.rho <= 1e-26 * gmax);  // double-double: far below u |G| (1.1e-16)
        // the check can fail: one off-diagonal entry moved by 3 rho (its low part: the high one
        // would round the change away), norm >= 3 rho - err >= 2 rho
        DdGram bad = g;
        const std::size_t at = static_cast<std::size_t>((g.n - 1) * g.n + 1);
        bad.lo[at] += 3 * g.rho;
        CHECK(error_norm(bad, G) > g.rho);
    }
}

TEST_CASE(
    "jacobian_gram_dd: the structure of jacobian_gram_outer, the same bits for any thread "
    "count",
    "[jacobian][certify][dd]") {
    const Head h = test_head(12, 20, 5, 1.2, 5, LogitScale::inv_sqrt_d);
    const DdGram g1 = jacobian_gram_dd(h, 1), g2 = jacobian_gram_dd(h, 2);
    CHECK(g1.hi == g2.hi);
    CHECK(g1.lo == g2.lo);
    CHECK(g1.rho == g2.rho);
    const MatrixXd G = jacobian_gram_outer(h);
    const Index n = g1.n;
    REQUIRE(n == G.rows());
    double worst = 0;
    for (Index i = 0; i < n; ++i)
        for (Index j = 0; j <= i; ++j)
            worst = std::max(worst, std::abs(g1.hi[static_cast<std::size_t>(i * n + j)] - G(i, j)));
    INFO("max |G~ - G_outer| = " << worst << ", max |G| = " << G.cwiseAbs().maxCoeff());
    CHECK(worst <= 1e-12 * G.cwiseAbs().maxCoeff());  // the double Gram's own rounding
}

TEST_CASE("jacobian_gram_dd: refusals", "[jacobian][certify][dd]") {
    const Head h = test_head(6, 5, 3, 1.0, 1, LogitScale::one);
    CHECK(test::error_of([&] { jacobian_gram_dd(h, 1, 100.0); }).code() ==
          ExitCode::DataError);  // above max_bytes
    Head nan = h;
    nan.X.modify([](Eigen::MatrixXd& X) { X(0, 0) = std::nan(""); });
    CHECK(test::error_of([&] { jacobian_gram_dd(nan, 1); }).code() == ExitCode::DataError);
    DdGram g = jacobian_gram_dd(h, 1);
    g.lo.pop_back();
    CHECK(test::error_of([&] { certify_gram_dd(g, 1.0, {}); }).code() ==
          ExitCode::DataError);  // malformed pairs
    g = jacobian_gram_dd(h, 1);
    g.rho = std::nan("");
    CHECK(test::error_of([&] { certify_gram_dd(g, 1.0, {}); }).code() == ExitCode::DataError);
}

TEST_CASE(
    "jacobian_spectrum --certify always: the double-double certificate on the factors' Gram "
    "encloses the long-double sigma_min with both ends proved, and agrees with the rows' Gram",
    "[jacobian][certify][dd]") {
    // kappa(J) = 1.9e7: the engine's lower end collapses to 0 (within the double Gram's error)
    const Head h = test_head(16, 32, 8, 1.6, 1, LogitScale::one);
    LargeSvdOptions o;
    o.mode = LargeSvdMode::extremal;
    o.certify.mode = CertifyMode::always;
    o.certify.method = CertifyMethod::double_double;
    const OperatorSpectrum s = jacobian_spectrum(h, o);
    INFO("sigma_min in [" << s.min.enclosure.lo << ", " << s.min.enclosure.hi << "], basis "
                          << s.min.basis);
    REQUIRE(s.min.basis.find("lower end: double-double") != std::string::npos);
    bool from_factors = false;
    for (const auto& n : s.notes)
        from_factors |= n.find("head's factors in double-double") != std::string::npos;
    CHECK(from_factors);
    // truth: sigma_min of the exact J (128 x 768) by one-sided Jacobi in long double, accurate to
    // ~kappa 5e-20 = 1e-12 relative; both ends are proved, so no slack
    CHECK(s.min.basis.find("both ends: double-double") != std::string::npos);
    const LMat J = exact_jacobian(h);
    const long double sigma = Eigen::JacobiSVD<LMat>(J).singularValues().minCoeff();
    INFO("long-double sigma_min " << static_cast<double>(sigma));
    CHECK(s.min.enclosure.lo <= sigma * (1 + 2e-12L));
    CHECK(s.min.enclosure.hi >= sigma * (1 - 2e-12L));
    CHECK(s.min.enclosure.lo <= s.min.sigma);
    CHECK(s.min.sigma <= s.min.enclosure.hi);
    // the width: the shift's 4e-8 and the factors' error ~ 10 u kappa (A2's was ~ 2e-6 here)
    CHECK((s.min.enclosure.hi - s.min.enclosure.lo) / (2 * s.min.sigma) <= 2e-7);
    // the rows' Gram (no structure given): the same certificate within both widths
    const JacobianOperator op(h);
    const MatrixXd G = jacobian_gram_outer(h);
    LargeSvdOptions rows = o;
    rows.product_rel_error = s.product_rel_error;
    const OperatorSpectrum r = operator_spectrum(op, &G, rows);
    INFO("rows: [" << r.min.enclosure.lo << ", " << r.min.enclosure.hi << "], " << r.min.basis);
    REQUIRE(r.min.basis.find("lower end: double-double") != std::string::npos);
    CHECK(r.min.enclosure.lo <= s.min.enclosure.hi);
    CHECK(s.min.enclosure.lo <= r.min.enclosure.hi);
}
