// Double-double certificate (spectral/certified.hpp §8, base/dd_accumulate.hpp): the accumulation
// lemma against a binary128 reference (and a planted plain-double sum that breaks it), sigma_min
// bounded below and within 1e-6 of a long-double reference at kappa up to 1e8 where the double
// test of §6 fails, a shift above lambda_min that must fail, a planted zero rounding bound caught
// on an exactly singular Gram, and the same bits for any thread count.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "attnspec/base/dd_accumulate.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/spectral/certified.hpp"
#include "certify_test_support.hpp"
#include "test_support.hpp"

using namespace attnspec;
using test::left_vector_min;
using test::reference_sigma_min;

namespace {
using Quad = __float128;

double qabs(Quad x) { return static_cast<double>(x < 0 ? -x : x); }

// A double-double number hi + lo with |lo| <= u |hi|, hi of magnitude 2^(+-spread).
void random_dd(std::mt19937_64& gen, int spread, double& hi, double& lo) {
    std::uniform_real_distribution<double> unit(-1, 1);
    std::uniform_int_distribution<int> ex(-spread, spread);
    hi = std::ldexp(unit(gen), ex(gen));
    lo = hi * unit(gen) * kUnitRoundoff;
    dd::two_sum(hi, lo, hi, lo);
}
}  // namespace

TEST_CASE("dd accumulation: error within the lemma's bound, a plain sum is not", "[certify][dd]") {
    std::mt19937_64 gen(17);
    int plain_outside = 0;
    for (std::size_t K : {0, 1, 7, 8, 9, 100, 1001, 20000}) {
        for (int spread : {0, 20}) {
            for (bool with_lo : {true, false}) {
                std::vector<double> xh(K), xl(K), yh(K), yl(K);
                for (std::size_t k = 0; k < K; ++k) {
                    random_dd(gen, spread, xh[k], xl[k]);
                    random_dd(gen, spread, yh[k], yl[k]);
                    if (!with_lo) xl[k] = yl[k] = 0;
                }
                double s0 = 0, t0 = 0;
                random_dd(gen, spread, s0, t0);
                s0 *= static_cast<double>(K);
                t0 *= static_cast<double>(K);
                dd::Acc a{s0, t0};
                dd::sub_dot(xh.data(), with_lo ? xl.data() : nullptr, yh.data(),
                            with_lo ? yl.data() : nullptr, K, a);
                dd::sub_prod(xh.empty() ? 1.0 : xh[0], 0.0, 0.5, 0.0, a);  // one chained term
                Quad exact = static_cast<Quad>(s0) + static_cast<Quad>(t0);
                double P = 0, plain = s0 + t0;
                for (std::size_t k = 0; k < K; ++k) {
                    exact -=
                        (static_cast<Quad>(xh[k]) + xl[k]) * (static_cast<Quad>(yh[k]) + yl[k]);
                    P += std::abs(xh[k] * yh[k]);
                    plain -= xh[k] * yh[k];
                }
                const double extra = xh.empty() ? 1.0 : xh[0];
                exact -= static_cast<Quad>(extra) * 0.5;
                plain -= extra * 0.5;
                P += std::abs(extra * 0.5);
                const double H = dd::tree_height(K, 1, 1);
                const double bound = dd::error_constant(H) * (std::abs(s0) + P) +
                                     gamma_n(H) * std::abs(t0) + 4.0 * (K + 3) * 4.9e-324;
                // binary128's own rounding: <= (K + 3) 2^-112 sum of |terms|
                const double ref_err = (K + 3) * std::ldexp(1.0, -112) * (std::abs(s0) + 2 * P);
                const double err = qabs(static_cast<Quad>(a.hi) + static_cast<Quad>(a.lo) - exact);
                INFO("K " << K << " spread " << spread << " lo " << with_lo << " err " << err
                          << " bound " << bound << " scale " << std::abs(s0) + P);
                CHECK(err <= bound + ref_err);
                CHECK(bound <= 1e-22 * (std::abs(s0) + P));  // the bound is not vacuous
                if (qabs(static_cast<Quad>(plain) - exact) > bound + ref_err) ++plain_outside;
            }
        }
    }
    CHECK(plain_outside > 10);  // planted: plain double accumulation violates the same check
}

TEST_CASE("certify (double-double): sigma_min enclosed from below within 1e-6 up to kappa 1e8",
          "[certify][dd]") {
    Rng rng(7);
    for (double kap : {1e3, 1e6, 1e8}) {
        const Eigen::MatrixXd J = rng.with_spectrum(24, 60, geometric_spectrum(24, 1.0, kap));
        const long double ref = reference_sigma_min(J);
        const Quad refq = test::reference_sigma_min_quad(J);  // to check Temple's enclosure
        DenseOperator op(J);
        const DdCertifiedMin r =
            certified_sigma_min_dd(op, static_cast<double>(ref), left_vector_min(J), {});
        INFO("kappa " << kap << " ref " << static_cast<double>(ref) << " lo " << r.sigma_lo
                      << " hi " << r.sigma_hi << " bound " << r.bound << " rho " << r.rho
                      << " attempts " << r.attempts);
        INFO(r.notes.front());
        REQUIRE(r.certified);
        CHECK(static_cast<Quad>(r.sigma_lo) <= refq);
        CHECK(r.sigma_lo >= static_cast<double>(ref) * (1 - 1e-6));
        // the estimate's vector is the double SVD's: the first factorization, with it, proves
        // lambda_2's bound and Temple's enclosure is two-sided and ~1e-13 wide
        CHECK(r.bound == "temple");
        CHECK(r.attempts == 1);
        CHECK(static_cast<Quad>(r.sigma_hi) >= refq);
        CHECK(r.sigma_hi - r.sigma_lo <= 1e-12 * r.sigma_hi);
        CHECK(r.rho < 1e-12 * r.lambda_lo);
        // the double-precision test of §6 cannot do this at kappa 1e8 (slack ~ n u ||G|| >> lambda)
        if (kap >= 1e8) {
            const CertifiedMin p =
                certified_sigma_min(op, static_cast<double>(ref), left_vector_min(J), {});
            CHECK((!p.certified || p.sigma_lo < 0.5 * r.sigma_lo));
        }
    }
}

TEST_CASE("certify (double-double): a shift above lambda_min fails to factor", "[certify][dd]") {
    Rng rng(11);
    const Eigen::MatrixXd J = rng.with_spectrum(16, 40, geometric_spectrum(16, 1.0, 1e7));
    const long double ref = reference_sigma_min(J);
    const double lam = static_cast<double>(ref * ref);
    DdCertifyOptions o;
    o.first_margin = -1e-6;  // planted: tau = lambda (1 + 1e-6) > lambda_min
    o.max_attempts = 1;
    o.temple = false;  // the factorization alone (Temple's bound has its own cases below)
    const DdCertifiedMin bad = certify_lambda_min_dd(J.transpose(), lam, {}, o);
    CHECK_FALSE(bad.certified);
    CHECK(bad.failed_column >= 0);
    o.first_margin = 1e-6;  // and below: certified, within that margin
    const DdCertifiedMin good = certify_lambda_min_dd(J.transpose(), lam, {}, o);
    REQUIRE(good.certified);
    CHECK(static_cast<long double>(good.lambda_lo) <= ref * ref);
    CHECK(good.lambda_lo >= lam * (1 - 2e-6));
}

TEST_CASE(
    "certify (double-double): a shift just above lambda_min fails at the last pivot, and its "
    "inertia "
    "and Temple's bound enclose the exact lambda_min in one factorization",
    "[certify][dd]") {
    // J with exactly known singular values (exact_spectrum_rows); lambda_est = lambda_min
    // (1 + 1e-5) and no vector: the factorization of G - tau I fails at its last pivot, which
    // proves lambda_2 >= tau - rho, and Temple's bound at the double-double inverse-iteration
    // vector encloses lambda_min = min sigma^2 (exact) on both sides, with no slack
    std::mt19937_64 gen(5);
    std::uniform_int_distribution<int> mant(0, 15);
    for (int E : {10, 20, 27}) {  // kappa ~ 2^E: 1e3, 1e6, 1.3e8
        Eigen::VectorXd sigma(16);
        for (int k = 0; k < 16; ++k)
            sigma[k] =
                std::ldexp(16 + mant(gen), -(static_cast<int>(std::lround(k * E / 15.0)) + 4));
        const double smin = sigma.minCoeff(), lam = smin * smin;  // exact
        const Eigen::MatrixXd J = test::exact_spectrum_rows(gen, sigma);
        std::vector<std::string> notices;
        DdCertifyOptions o;
        o.notice = [&notices](const std::string& s) { notices.push_back(s); };
        const DdCertifiedMin r = certify_lambda_min_dd(J.transpose(), lam * (1 + 1e-5), {}, o);
        INFO("E " << E << " lambda " << lam << " [" << r.lambda_lo << ", " << r.lambda_hi << "]");
        std::string notes;
        for (const auto& n : r.notes) notes += n + "\n";
        INFO(notes);
        REQUIRE(r.certified);
        CHECK(r.bound == "temple");
        CHECK(r.attempts == 1);
        CHECK(notices.empty());
        CHECK(r.lambda_lo <= lam);
        CHECK(r.lambda_hi >= lam);
        // ~2 (R + rho): 6e-13 relative at kappa 1.3e8 (u^2 kappa^2 scale); the Rump step's margin
        // alone is 4e-8
        CHECK(r.lambda_hi - r.lambda_lo <= 1e-10 * lam);
        CHECK(r.sigma_lo <= smin);
        CHECK(r.sigma_hi >= smin);
    }
}

TEST_CASE(
    "certify (double-double): Temple's bound holds with lambda_2's true value and a planted "
    "beta above lambda_2 breaks it",
    "[certify][dd]") {
    // x = v_1 + v_2 / 8 (exact singular vectors of exact_spectrum_rows), G~ = J J^T summed in
    // binary128 and split into pairs (entrywise error < 2e-31, so rho = 1e-29 is a bound). With
    // beta = lambda_2 (the hypothesis) Temple's bound is exact for a two-component x: the
    // enclosure must contain lambda_1. With beta = 2 lambda_2 (planted: not a lower bound of
    // lambda_2) its lower end rises ~2% above lambda_1: caught.
    std::mt19937_64 gen(29);
    const Eigen::VectorXd sigma = test::halving_spectrum(16);  // lambda_2 = 4 lambda_1
    Eigen::MatrixXd U;
    const Eigen::MatrixXd J = test::exact_spectrum_rows(gen, sigma, &U);
    DdGram g;
    g.n = 16;
    g.hi.assign(256, 0.0), g.lo.assign(256, 0.0);
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j) {
            Quad acc = 0;
            for (int k = 0; k < 64; ++k) acc += static_cast<Quad>(J(i, k)) * J(j, k);
            g.hi[static_cast<std::size_t>(i * 16 + j)] = static_cast<double>(acc);
            g.lo[static_cast<std::size_t>(i * 16 + j)] =
                static_cast<double>(acc - static_cast<Quad>(static_cast<double>(acc)));
        }
    g.rho = 1e-29;
    const double l1 = sigma[15] * sigma[15], l2 = sigma[14] * sigma[14];
    const Eigen::VectorXd x = U.col(15) + U.col(14) / 8;  // exact
    const std::vector<double> xh(x.data(), x.data() + 16), xl(16, 0.0);
    const TempleEnclosure honest = temple_enclosure(g, xh, xl, l2);
    INFO("lambda_1 " << l1 << " honest [" << honest.lambda_lo << ", " << honest.lambda_hi << "] mu "
                     << honest.mu << " residual " << honest.residual);
    REQUIRE(honest.applies);
    CHECK(honest.lambda_lo <= l1);
    CHECK(honest.lambda_hi >= l1);
    // exact for two components, up to the residual's 1 + 1e-8 safety factor (kSafety)
    CHECK(honest.lambda_lo >= l1 * (1 - 1e-8));
    const TempleEnclosure planted = temple_enclosure(g, xh, xl, 2 * l2);
    INFO("planted [" << planted.lambda_lo << ", " << planted.lambda_hi << "]");
    REQUIRE(planted.applies);
    CHECK(planted.lambda_lo > l1 * 1.01);  // a lower bound above lambda_min: the violation shows
    CHECK(test::error_of([&] { temple_enclosure(g, xh, std::vector<double>(15), l2); }).code() ==
          ExitCode::DataError);
}

TEST_CASE(
    "certify (double-double): with the estimate's vector, one factorization above lambda_min "
    "and Temple's bound, or the coarse shifts when the vector is lambda_2's",
    "[certify][dd]") {
    // Exact spectrum sigma_k = 2^-k (lambda_2 = 4 lambda_1). (i) w = v_1 + 0.3 v_2 (Rayleigh
    // quotient 1.25 lambda_1): G - tau I + c w w^T at tau just above it is positive definite,
    // which bounds lambda_2, and Temple's bound at the Sherman-Morrison inverse-iteration vector
    // encloses the exact lambda_1 in one factorization. (ii) w = v_2: tau is above lambda_2, the
    // rank-one lift cannot cover two eigenvalues and the factorization fails before its last
    // pivot; the plain shifts then start at the coarse margin 0.5 (fails: 2 lambda_1), 0.9
    // certifies, and inverse iteration and one more factorization finish.
    std::mt19937_64 gen(31);
    const Eigen::VectorXd sigma = test::halving_spectrum(16);
    Eigen::MatrixXd U;
    const Eigen::MatrixXd J = test::exact_spectrum_rows(gen, sigma, &U);
    const double lam = sigma[15] * sigma[15];  // exact
    const Eigen::VectorXd near = U.col(15) + 0.3 * U.col(14);
    const DdCertifiedMin a = certify_lambda_min_dd(J.transpose(), 0, near, {});
    INFO("(i) " << a.notes.front());
    REQUIRE(a.certified);
    CHECK(a.bound == "temple");
    CHECK(a.attempts == 1);
    CHECK(a.lambda_lo <= lam);
    CHECK(a.lambda_hi >= lam);
    CHECK(a.lambda_hi - a.lambda_lo <= 1e-9 * a.lambda_hi);  // where its iteration stops
    const DdCertifiedMin b = certify_lambda_min_dd(J.transpose(), 0, U.col(14), {});
    std::string notes;
    for (const auto& n : b.notes) notes += n + "\n";
    INFO("(ii) " << notes);
    REQUIRE(b.certified);
    CHECK(notes.find("from the margin 0.5") != std::string::npos);
    CHECK(b.attempts <= 5);
    CHECK(b.lambda_lo <= lam);
    CHECK((std::isnan(b.lambda_hi) || b.lambda_hi >= lam));
    CHECK(b.lambda_lo >= lam * (1 - 1e-6));
}

TEST_CASE(
    "certify (double-double): without Temple's bound, a failure at the last pivot refines the "
    "shift by inverse iteration with that factor",
    "[certify][dd]") {
    // lambda_est = lambda_min (1 + 1e-5), no vector: G - tau I has one negative eigenvalue and
    // its factorization fails at the last pivot; the indefinite factor's inverse iteration finds
    // lambda_min's vector, and the second factorization certifies just below its Rayleigh quotient
    // (the ladder of coarse shifts would take three or more)
    Rng rng(23);
    const Eigen::MatrixXd J = rng.with_spectrum(30, 70, geometric_spectrum(30, 1.0, 1e6));
    const long double ref = reference_sigma_min(J);
    const double lam = static_cast<double>(ref * ref);
    std::vector<std::string> notices;  // one announcement of the second factorization
    DdCertifyOptions o;
    o.temple = false;
    o.notice = [&notices](const std::string& s) { notices.push_back(s); };
    const DdCertifiedMin r = certify_lambda_min_dd(J.transpose(), lam * (1 + 1e-5), {}, o);
    INFO(r.notes.front());
    INFO(r.notes.back());
    REQUIRE(r.certified);
    REQUIRE(notices.size() == 1);
    CHECK(notices[0].find("factorization 1 failed at its last pivot") != std::string::npos);
    CHECK(notices[0].find("one more, about") != std::string::npos);
    CHECK(r.notes.front().find("pivot 29 ") != std::string::npos);
    bool last_pivot = false;
    for (const auto& n : r.notes)
        last_pivot |= n.find("only the last pivot failed") != std::string::npos;
    CHECK(last_pivot);
    CHECK(r.attempts == 2);
    CHECK(static_cast<long double>(r.lambda_lo) <= ref * ref);
    CHECK(r.lambda_lo >= lam * (1 - 1e-6));
}

TEST_CASE("certify (double-double): an estimate far above lambda_min is refined and certified",
          "[certify][dd]") {
    // lambda_est 3x lambda_min and no vector: the shift is lowered until a factorization
    // succeeds, inverse iteration with that factor refines the estimate, and the last attempt
    // certifies just below it
    Rng rng(19);
    const Eigen::MatrixXd J = rng.with_spectrum(40, 90, geometric_spectrum(40, 1.0, 1e6));
    const long double ref = reference_sigma_min(J);
    const double lam = static_cast<double>(ref * ref);
    const DdCertifiedMin r = certify_lambda_min_dd(J.transpose(), 3 * lam, {}, {});
    INFO(r.notes.back());
    REQUIRE(r.certified);
    CHECK(r.attempts >= 3);
    CHECK(r.u.size() == 40);
    CHECK(static_cast<long double>(r.lambda_lo) <= ref * ref);
    CHECK(r.lambda_lo >= lam * (1 - 1e-6));
}

TEST_CASE("certify (double-double): a planted zero rounding bound is caught on a singular Gram",
          "[certify][dd]") {
    // J = [B 0], B integer n x (n-1): J J^T is exactly singular (lambda_min = 0). Without the
    // rounding bound (bound_scale = 0) a factorization of G - tau I at tau below the double-double
    // rounding level sometimes succeeds and "certifies" lambda_min >= tau > 0; with it, never.
    std::mt19937_64 gen(3);
    int planted_claims = 0, honest_claims = 0, honest_temple = 0, planted_temple = 0;
    for (int trial = 0; trial < 30; ++trial) {
        const Eigen::MatrixXd J = test::singular_integer_rows(gen, 9);
        const double gmax = (J * J.transpose()).diagonal().maxCoeff();
        for (double level : {1e-29, 1e-30, 1e-31, 1e-32}) {
            DdCertifyOptions planted;
            planted.bound_scale = 0;
            planted.max_attempts = 1;
            const Eigen::MatrixXd Rt = J.transpose();
            const DdCertifiedMin p = certify_lambda_min_dd(Rt, level * gmax, {}, planted);
            if (p.certified) ++planted_claims;
            if (p.certified && p.bound == "temple") ++planted_temple;
            DdCertifyOptions honest;
            honest.max_attempts = 1;
            const DdCertifiedMin h = certify_lambda_min_dd(Rt, level * gmax, {}, honest);
            if (h.certified) ++honest_claims;
            for (const auto& n : h.notes)  // Temple's bound was tried (a last-pivot failure)
                if (n.find("Temple at") != std::string::npos) ++honest_temple;
        }
    }
    CHECK(planted_claims > 0);  // lambda_min >= tau > 0 claimed on a singular Gram: caught
    CHECK(honest_claims == 0);
    CHECK(honest_temple > 0);   // and Temple's bound, tried on these, never claimed either
    CHECK(planted_temple > 0);  // Temple's bound without its rounding parts claims too: caught
}

TEST_CASE("certify (double-double): the same bits for any thread count", "[certify][dd]") {
    Rng rng(13);
    const Eigen::MatrixXd J = rng.with_spectrum(150, 300, geometric_spectrum(150, 1.0, 1e6));
    DdCertifyOptions one, two;
    one.threads = 1, two.threads = 2;
    const Eigen::VectorXd u = left_vector_min(J);
    const double s = static_cast<double>(reference_sigma_min(J));
    const DdCertifiedMin a = certify_lambda_min_dd(J.transpose(), s * s, u, one);
    const DdCertifiedMin b = certify_lambda_min_dd(J.transpose(), s * s, u, two);
    REQUIRE(a.certified);
    CHECK(a.lambda_lo == b.lambda_lo);
    CHECK(a.rho == b.rho);
    CHECK(a.lambda_est == b.lambda_est);
}

TEST_CASE("certify (double-double): refusals", "[certify][dd]") {
    Rng rng(2);
    const Eigen::MatrixXd J = rng.with_spectrum(8, 20, geometric_spectrum(8, 1.0, 10));
    const Eigen::MatrixXd Jt = J.transpose();  // DenseOperator keeps a reference: a named matrix
    DenseOperator op(J), tall(Jt);
    CHECK(test::error_of([&] { certified_sigma_min_dd(tall, 1.0, {}, {}); }).code() ==
          ExitCode::DataError);
    DdCertifyOptions small;
    small.max_bytes = 1000;
    CHECK(test::error_of([&] { certified_sigma_min_dd(op, 1.0, {}, small); }).code() ==
          ExitCode::DataError);
    Eigen::MatrixXd bad = J.transpose();
    bad(3, 2) = std::nan("");
    CHECK(test::error_of([&] { certify_lambda_min_dd(bad, 1.0, {}, {}); }).code() ==
          ExitCode::DataError);
}

TEST_CASE("dd accumulation: the scalar, AVX2 and AVX-512 kernels give the same bits",
          "[certify][dd]") {
    std::mt19937_64 gen(23);
    for (std::size_t K : {3, 8, 77, 1000, 4099}) {
        std::vector<double> xh(K), xl(K), yh(K), yl(K);
        for (std::size_t k = 0; k < K; ++k) {
            random_dd(gen, 30, xh[k], xl[k]);
            random_dd(gen, 30, yh[k], yl[k]);
        }
        std::vector<dd::Acc> out;
        for (dd::Kernel k : {dd::Kernel::avx512, dd::Kernel::avx2, dd::Kernel::scalar}) {
            dd::cap_kernel(k);
            dd::Acc a{0.25, 1e-18};
            dd::sub_dot_blocked(xh.data(), xl.data(), yh.data(), yl.data(), K, a);
            out.push_back(a);
        }
        CHECK(std::string(dd::kernel_name()) == "scalar");
        dd::cap_kernel(dd::Kernel::avx512);
        for (const dd::Acc& a : out) {
            CHECK(a.hi == out.back().hi);
            CHECK(a.lo == out.back().lo);
        }
    }
}

TEST_CASE("dd accumulation: rows sharing one pass over y give each row's own bits",
          "[certify][dd]") {
    std::mt19937_64 gen(29);
    for (dd::Kernel kern : {dd::Kernel::avx512, dd::Kernel::scalar}) {
        dd::cap_kernel(kern);
        for (std::size_t K : {0, 1, 7, 8, 9, 77, 1000, 4099}) {
            for (int rows = 1; rows <= dd::kMaxRows; ++rows) {
                std::vector<std::vector<double>> xh(rows, std::vector<double>(K)),
                    xl(rows, std::vector<double>(K));
                std::vector<double> yh(K), yl(K);
                for (std::size_t k = 0; k < K; ++k) {
                    random_dd(gen, 30, yh[k], yl[k]);
                    for (int r = 0; r < rows; ++r) random_dd(gen, 30, xh[r][k], xl[r][k]);
                }
                for (bool y_lo : {true, false}) {
                    const double* ph[dd::kMaxRows] = {};
                    const double* pl[dd::kMaxRows] = {};
                    std::vector<dd::Acc> each(rows), shared(rows);
                    for (int r = 0; r < rows; ++r) {
                        ph[r] = xh[r].data();
                        pl[r] = r == 1 ? nullptr : xl[r].data();  // a row without low parts
                        each[r] = shared[r] = dd::Acc{0.5 + r, 1e-17 * r};
                        dd::sub_dot_blocked(ph[r], pl[r], yh.data(), y_lo ? yl.data() : nullptr, K,
                                            each[r]);
                    }
                    dd::sub_dot_blocked_rows(ph, pl, rows, yh.data(), y_lo ? yl.data() : nullptr, K,
                                             shared.data());
                    for (int r = 0; r < rows; ++r) {
                        INFO("kernel " << static_cast<int>(kern) << ", K " << K << ", rows " << rows
                                       << ", row " << r << ", y_lo " << y_lo);
                        CHECK(shared[r].hi == each[r].hi);
                        CHECK(shared[r].lo == each[r].lo);
                    }
                }
                // planted: the largest term of the last row moved by one ulp changes that row's
                // result and no other row's (the comparison above can see a one-ulp difference)
                if (K == 0) continue;
                std::size_t kmax = 0;
                for (std::size_t k = 1; k < K; ++k)
                    if (std::abs(xh[rows - 1][k] * yh[k]) > std::abs(xh[rows - 1][kmax] * yh[kmax]))
                        kmax = k;
                const double* ph[dd::kMaxRows] = {};
                const double* pl[dd::kMaxRows] = {};
                for (int r = 0; r < rows; ++r) ph[r] = xh[r].data(), pl[r] = xl[r].data();
                std::vector<dd::Acc> before(rows), after(rows);
                dd::sub_dot_blocked_rows(ph, pl, rows, yh.data(), yl.data(), K, before.data());
                xh[rows - 1][kmax] = std::nextafter(xh[rows - 1][kmax], 2 * xh[rows - 1][kmax]);
                dd::sub_dot_blocked_rows(ph, pl, rows, yh.data(), yl.data(), K, after.data());
                for (int r = 0; r + 1 < rows; ++r) {
                    CHECK(after[r].hi == before[r].hi);
                    CHECK(after[r].lo == before[r].lo);
                }
                CHECK((after[rows - 1].hi != before[rows - 1].hi ||
                       after[rows - 1].lo != before[rows - 1].lo));
            }
        }
    }
    dd::cap_kernel(dd::Kernel::avx512);
}

TEST_CASE("certify (double-double): the same bits whether rows share the factor's passes",
          "[certify][dd]") {
    Rng rng(31);
    // n = 150: the rows below each 32-column block end in a chunk of 6 (a group of 4 and one of 2)
    const Eigen::MatrixXd J = rng.with_spectrum(150, 300, geometric_spectrum(150, 1.0, 1e6));
    const double s = static_cast<double>(reference_sigma_min(J));
    DdCertifyOptions opt;
    opt.threads = 2;
    std::vector<DdCertifiedMin> out;
    for (int group : {1, 2, 3, dd::kMaxRows}) {
        set_factor_row_group(group);
        // no vector and 1.3 s^2: the first factorization fails and the ladder factors again
        out.push_back(certify_lambda_min_dd(J.transpose(), 1.3 * s * s, {}, opt));
    }
    set_factor_row_group(dd::kMaxRows);
    REQUIRE(out.back().certified);
    CHECK(out.back().attempts > 1);
    const auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
    for (const DdCertifiedMin& r : out) {
        CHECK(r.lambda_lo == out.back().lambda_lo);
        CHECK(same(r.lambda_hi, out.back().lambda_hi));
        CHECK(r.rho == out.back().rho);
        CHECK(r.tau == out.back().tau);
        CHECK(r.lambda_est == out.back().lambda_est);
        CHECK(r.attempts == out.back().attempts);
        CHECK(r.bound == out.back().bound);
    }
}
