// J~ J~^T in double-double from a head's factors (attention/jacobian.hpp, jacobian_gram_dd;
// proofs/spectral_enclosure.md §8 "Gram from the factors"): within its bound rho of a binary128
// Gram of J~ built row by row from the same stored factors (a planted perturbation of 3 rho must
// break the check), the same structure as jacobian_gram_outer, the same bits for any thread
// count, refusals, and the certificate on it through jacobian_spectrum.
#include <Eigen/Dense>
#include <cmath>
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
}  // namespace

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
    nan.X(0, 0) = std::nan("");
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
    "encloses sigma_min within 1e-6 and agrees with the rows' Gram",
    "[jacobian][certify][dd]") {
    // kappa(J) = 1.9e7: the engine's lower end collapses to 0 (within the double Gram's error)
    const Head h = test_head(16, 32, 8, 1.6, 1, LogitScale::one);
    LargeSvdOptions o;
    o.mode = LargeSvdMode::extremal;
    o.certify = CertifyMode::always;
    o.certify_method = CertifyMethod::double_double;
    const OperatorSpectrum s = jacobian_spectrum(h, o);
    INFO("sigma_min in [" << s.min.enclosure.lo << ", " << s.min.enclosure.hi << "], basis "
                          << s.min.basis);
    REQUIRE(s.min.basis.find("double-double cholesky") != std::string::npos);
    bool from_factors = false;
    for (const auto& n : s.notes)
        from_factors |= n.find("head's stored factors") != std::string::npos;
    CHECK(from_factors);
    // dense truth: sigma_min of J (128 x 768), accurate to ~u kappa relative
    const MatrixXd J = jacobian_weights(h);
    const double sigma = Eigen::JacobiSVD<MatrixXd>(J).singularValues().minCoeff();
    CHECK(s.min.enclosure.lo <= sigma * (1 + 1e-8));
    CHECK(s.min.enclosure.hi >= sigma * (1 - 1e-8));
    CHECK((s.min.enclosure.hi - s.min.enclosure.lo) / (2 * s.min.sigma) <= 1e-6);
    // the rows' Gram (no structure given): the same certificate within both widths
    const JacobianOperator op(h);
    const MatrixXd G = jacobian_gram_outer(h);
    LargeSvdOptions rows = o;
    rows.product_rel_error = s.product_rel_error;
    const OperatorSpectrum r = operator_spectrum(op, &G, rows);
    INFO("rows: [" << r.min.enclosure.lo << ", " << r.min.enclosure.hi << "], " << r.min.basis);
    REQUIRE(r.min.basis.find("double-double cholesky") != std::string::npos);
    CHECK(r.min.enclosure.lo <= s.min.enclosure.hi);
    CHECK(s.min.enclosure.lo <= r.min.enclosure.hi);
}
