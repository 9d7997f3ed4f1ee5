// Certified lower bound on sigma_min(J) by verified positive definiteness (Rump 2006, diagonally
// scaled): error-free split Gram, the scaled rounding bound c, and dpotrf attempts on
// G - tau I - c W^2 (proofs/spectral_enclosure.md §6).
#include "attnspec/spectral/certify/plain.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/interval_ops.hpp"
#include "attnspec/base/rounding.hpp"

namespace attnspec {

namespace {
constexpr double kTiny = std::numeric_limits<double>::denorm_min();

// Upper bound on the 2-norm of each row of A (n x m): the computed norm times (1 + gamma_{m+2}).
Eigen::VectorXd row_norm_bounds(const Eigen::MatrixXd& A) {
    return A.rowwise().norm() * (1 + gamma_n(static_cast<double>(A.cols()) + 2));
}

// C (lower) = alpha A B^T + B A^T (syr2k) or A A^T (B == nullptr, syrk), accumulating beta C.
void rank_k(const Eigen::MatrixXd& A, const Eigen::MatrixXd* B, double beta, Eigen::MatrixXd& C) {
    const int n = static_cast<int>(A.rows()), m = static_cast<int>(A.cols());
    if (B)
        cblas_dsyr2k(CblasColMajor, CblasLower, CblasNoTrans, n, m, 1.0, A.data(), n, B->data(), n,
                     beta, C.data(), n);
    else
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, n, m, 1.0, A.data(), n, beta, C.data(),
                    n);
}
}  // namespace

CompensatedGram compensated_gram(const Eigen::MatrixXd& R) {
    const Eigen::Index n = R.rows(), m = R.cols();
    if (!R.allFinite()) fail_data("compensated_gram: rows of J are not finite");
    CompensatedGram g;
    // m products of beta-bit integers sum exactly in 53 bits when m 2^(2 beta) <= 2^53
    const int log2m =
        static_cast<int>(std::ceil(std::log2(static_cast<double>(std::max<Eigen::Index>(m, 2)))));
    const int beta = (53 - log2m) / 2;
    g.split_bits = beta;
    Eigen::MatrixXd H(n, m), L(n, m);
    for (Eigen::Index i = 0; i < n; ++i) {
        const double M = R.row(i).cwiseAbs().maxCoeff();
        int e = 0;
        std::frexp(M, &e);             // M < 2^e
        if (M > 0 && e - beta < -510)  // products on a grid 2^(e_i + e_j - 2 beta)
            fail_data("compensated_gram: row " + std::to_string(i) +
                      " is too small for an exact split (underflow)");
        for (Eigen::Index k = 0; k < m; ++k) {
            const double x = R(i, k);
            const double h =
                M > 0 ? std::ldexp(std::nearbyint(std::ldexp(x, beta - e)), e - beta) : 0;
            H(i, k) = h;
            L(i, k) = x - h;  // exact: |x - h| <= 2^(e - beta - 1), a multiple of ulp(x)
        }
    }
    const Eigen::VectorXd h = row_norm_bounds(H), l = row_norm_bounds(L);
    g.w = h + l;  // >= ||R_i|| (triangle inequality)
    double a = 0, b = 0, wmin = std::numeric_limits<double>::infinity();
    for (Eigen::Index i = 0; i < n; ++i)
        if (g.w[i] > 0) {
            a = std::max(a, l[i] / g.w[i]);
            b = std::max(b, h[i] / g.w[i]);
            wmin = std::min(wmin, g.w[i]);
        }
    g.G.resize(n, n);
    rank_k(H, &L, 0.0, g.G);       // H L^T + L H^T
    rank_k(L, nullptr, 1.0, g.G);  // + L L^T  (cross terms: sums of <= 3m + 1 products)
    Eigen::MatrixXd HH(n, n);
    rank_k(H, nullptr, 0.0, HH);  // exact
    for (Eigen::Index j = 0; j < n; ++j)
        for (Eigen::Index i = j; i < n; ++i) g.G(i, j) += HH(i, j);
    // |G_ij - (R R^T)_ij| <= u/(1-u) |G_ij| (final addition) + gamma_{3m+2} (1+u) (2 h_i l_j +
    // l_i l_j) (cross terms), so ||W^-1 E W^-1||_2 <= u/(1-u) ||W^-1 |G| W^-1||_inf + n e_cross.
    const double gc = gamma_n(3.0 * static_cast<double>(m) + 2);
    const double e_cross = gc * (1 + kUnitRoundoff) * (2 * a * b + a * a);
    double row_max = 0;
    for (Eigen::Index i = 0; i < n; ++i) {
        double sum = 0;
        for (Eigen::Index j = 0; j < n; ++j) {
            const double gij = j <= i ? g.G(i, j) : g.G(j, i);
            if (g.w[i] > 0 && g.w[j] > 0) sum += std::abs(gij) / g.w[i] / g.w[j];
        }
        row_max = std::max(row_max, sum);
    }
    g.scaled_error = kBoundSafety * (kUnitRoundoff / (1 - kUnitRoundoff) * row_max *
                                         (1 + gamma_n(static_cast<double>(n) + 2)) +
                                     static_cast<double>(n) * e_cross);
    if (wmin < std::numeric_limits<double>::infinity())
        g.scaled_error +=
            4.0 * static_cast<double>(m * n) * kTiny / (wmin * wmin);  // underflowed products
    return g;
}

double rump_slack(const Eigen::MatrixXd& G, const Eigen::VectorXd& w, double err, double tau,
                  double factor_norm2) {
    const Eigen::Index n = G.rows();
    const double nd = static_cast<double>(n);
    const double g1 = gamma_n(nd + 1), gchol = g1 / (1 - g1), g6 = gamma_n(6);
    double diag = 0, wmin2 = std::numeric_limits<double>::infinity();
    for (Eigen::Index i = 0; i < n; ++i) {
        const double w2 = w[i] * w[i];
        diag = std::max(diag, g6 * (G(i, i) / w2 + tau / w2 + 1));  // forming g_ii - tau - c w_i^2
        wmin2 = std::min(wmin2, w2);
    }
    const double underflow = nd * (nd + 2) * std::numeric_limits<double>::min() / wmin2;
    return kBoundSafety * (gchol * factor_norm2 + err + diag + underflow) / (1 - g6);
}

namespace {
// ||W^-1 |L|||_2^2 for the computed factor L (lower), rounded up: the least of ||.||_F^2,
// ||.||_1 ||.||_inf and the Collatz-Wielandt bound max_i (M^T M x)_i / x_i (M = W^-1 |L| >= 0,
// any x > 0) at x from 30 power steps; nonnegative sums have relative rounding <= gamma_n.
double scaled_factor_norm2(const Eigen::MatrixXd& L, const Eigen::VectorXd& w) {
    const Eigen::Index n = L.rows();
    Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n, n);
    for (Eigen::Index j = 0; j < n; ++j)
        for (Eigen::Index i = j; i < n; ++i) M(i, j) = std::abs(L(i, j)) / w[i];
    const double fro = M.squaredNorm();
    const double one_inf = M.colwise().sum().maxCoeff() * M.rowwise().sum().maxCoeff();
    Eigen::VectorXd x = Eigen::VectorXd::Ones(n), y(n);
    for (int k = 0; k < 30; ++k) {
        y = M.transpose().triangularView<Eigen::Upper>() * (M.triangularView<Eigen::Lower>() * x);
        x = y / y.maxCoeff();
    }
    y = M.transpose().triangularView<Eigen::Upper>() * (M.triangularView<Eigen::Lower>() * x);
    double cw = std::numeric_limits<double>::infinity();
    if (x.minCoeff() > 0) cw = (y.array() / x.array()).maxCoeff();
    return std::min({fro, one_inf, cw}) * (1 + gamma_n(2.0 * static_cast<double>(n) + 8));
}
}  // namespace

ShiftTest rump_shift_test(const CompensatedGram& g, double tau, double c_trial,
                          double slack_scale) {
    const Eigen::Index n = g.G.rows();
    ShiftTest t;
    t.c_trial = c_trial;
    Eigen::MatrixXd A = g.G.triangularView<Eigen::Lower>();
    for (Eigen::Index i = 0; i < n; ++i) A(i, i) = g.G(i, i) - tau - c_trial * (g.w[i] * g.w[i]);
    const lapack_int ln = static_cast<lapack_int>(n);
    t.factored = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', ln, A.data(), ln) == 0;
    if (!t.factored) return t;
    t.factor_norm2 = scaled_factor_norm2(A, g.w);
    t.c_needed = slack_scale * rump_slack(g.G, g.w, g.scaled_error, tau, t.factor_norm2);
    t.certified = t.c_needed <= c_trial;
    return t;
}

CertifiedMin certify_lambda_min(const CompensatedGram& g, const double lambda_est,
                                const Eigen::VectorXd& u_est, const PlainCertifyOptions& opt) {
    const auto t0 = std::chrono::steady_clock::now();
    CertifiedMin r;
    const Eigen::Index n = g.G.rows();
    r.method = "Rump isspd, van der Sluis scaled: dpotrf of G - tau I - c W^2, G by an exact " +
               std::to_string(g.split_bits) + "-bit split";
    if (n == 0 || !(g.w.minCoeff() > 0) || !(lambda_est > 0)) {
        r.notes.emplace_back("certify: a zero row or a zero estimate; lambda_min >= 0 only");
        return r;
    }
    // weight of the slack c W^2 along the estimated eigenvector: the first-order loss in lambda
    const Eigen::VectorXd w2 = g.w.cwiseAbs2();
    const double along =
        u_est.size() == n ? w2.dot(u_est.cwiseAbs2()) / u_est.squaredNorm() : w2.maxCoeff();
    // first trial: the factor's scaled norm at its least (1); raised to what a factor needs
    double c = opt.slack_scale * rump_slack(g.G, g.w, g.scaled_error, lambda_est, 1.0);
    double margin = 2 * c * along + 4 * kUnitRoundoff * lambda_est;
    r.slack = c;
    while (r.attempts < opt.max_attempts) {
        const double tau = lambda_est - margin;
        if (!(tau > 0) || c >= 1) {
            r.notes.emplace_back("certify: tau would be <= 0 (slack c = " + value_text(c) +
                                 " of the scaled Gram exceeds lambda_min there): out of reach");
            break;
        }
        ++r.attempts;
        r.tau = tau;
        const ShiftTest t = rump_shift_test(g, tau, c, opt.slack_scale);
        r.slack = c;
        if (t.certified) {
            r.certified = true;
            r.lambda_lo = tau;
            r.sigma_lo = std::max(0.0, iv::down(iv::down(std::sqrt(tau)) - opt.product_abs_error));
            break;
        }
        if (t.factored)  // factored, but its rounding needs a larger slack: retry with that
            c = 1.05 * t.c_needed,
            margin = std::max(margin, 1.2 * c * along + 4 * kUnitRoundoff * lambda_est);
        else
            margin *= 4;
    }
    r.assembly_error = g.scaled_error * along;
    r.delta = std::max(0.0, r.slack - g.scaled_error) * along;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "certify: %s after %d Cholesky attempt(s), tau = %.6g, c = %.3g (delta %.3g, "
                  "assembly %.3g along u)",
                  r.certified ? "certified" : "no certificate", r.attempts, r.tau, r.slack, r.delta,
                  r.assembly_error);
    r.notes.emplace_back(buf);
    return r;
}

CertifiedMin certified_sigma_min(const LinearOperator& J, double sigma_est,
                                 const Eigen::VectorXd& u_est, const PlainCertifyOptions& opt) {
    const auto t0 = std::chrono::steady_clock::now();
    const Eigen::Index n = J.rows(), m = J.cols();
    if (n == 0 || m == 0) fail_data("certified_sigma_min: empty operator");
    if (n > m) fail_data("certified_sigma_min: J must be wide (rows <= cols); pass J^T");
    const double nd = static_cast<double>(n), md = static_cast<double>(m);
    check_allocation(8.0 * (3 * nd * md + 3 * nd * nd), opt.max_bytes,
                     "certified sigma_min: rows of J, their split and the Gram (" +
                         std::to_string(n) + " x " + std::to_string(m) + ")",
                     "max_bytes");
    CompensatedGram g;
    {
        Eigen::MatrixXd R(n, m);
        Eigen::VectorXd e = Eigen::VectorXd::Zero(n), y(m);
        for (Eigen::Index i = 0; i < n; ++i) {
            e[i] = 1;
            J.apply_transpose(e.data(), y.data());
            e[i] = 0;
            R.row(i) = y.transpose();
        }
        g = compensated_gram(R);
    }
    const double t_gram =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CertifiedMin r = certify_lambda_min(g, sigma_est * sigma_est, u_est, opt);
    r.seconds += t_gram;
    char buf[120];
    std::snprintf(buf, sizeof buf, "certify: rows + split Gram %.2f s, Cholesky attempts %.2f s",
                  t_gram, r.seconds - t_gram);
    r.notes.emplace_back(buf);
    return r;
}

}  // namespace attnspec
