// Deflated certificate for sigma_min(J) when J J^T is too ill-conditioned for the plain shift test
// (proofs/spectral_enclosure.md §7): bottom eigenpairs of a computed Gram (dsyevr), an inertia
// certificate on G~ + s V V^T - beta I (rump_shift_test), a graded Ritz block from matrix-free
// products enclosed by the plain certificate (compensated_gram + certify_lambda_min), and the
// Schur-complement bound for the coupling.
#include "attnspec/spectral/certify/deflated.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/interval_ops.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/spectral/certify/plain.hpp"

namespace attnspec {

namespace {
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

// Y = J^T V column by column (k matrix-free products).
Eigen::MatrixXd transpose_products(const LinearOperator& J, const Eigen::MatrixXd& V) {
    Eigen::MatrixXd Y(J.cols(), V.cols());
    for (Eigen::Index j = 0; j < V.cols(); ++j) J.apply_transpose(V.col(j).data(), Y.col(j).data());
    if (!Y.allFinite()) fail_data("certify_deflated: products J^T v are not finite");
    return Y;
}

// Upper bounds on the column norms of A: computed norm x (1 + gamma_{rows + 2}).
Eigen::VectorXd column_norm_bounds(const Eigen::MatrixXd& A) {
    return A.colwise().norm().transpose() * (1 + gamma_n(static_cast<double>(A.rows()) + 2));
}

// The inertia certificate: lambda_min(G + s V V^T) >= beta with G within gram_error (2-norm) of
// G~ (lower triangle). Returns false (and notes why) when no attempt certifies.
bool certify_inertia(const Eigen::MatrixXd& Gt, const Eigen::MatrixXd& V, double s,
                     const DeflatedOptions& opt, DeflatedMin& r) {
    const Eigen::Index n = Gt.rows(), k = V.cols();
    CompensatedGram cg;  // fl(G~ + s V V^T), its scaling and its scaled error
    cg.G = Gt;
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, static_cast<int>(n), static_cast<int>(k),
                s, V.data(), static_cast<int>(n), 1.0, cg.G.data(), static_cast<int>(n));
    cg.w.resize(n);
    double wmin2 = std::numeric_limits<double>::infinity();
    for (Eigen::Index i = 0; i < n; ++i) {
        if (!(cg.G(i, i) > 0)) {
            r.notes.emplace_back("certify (deflated): a zero diagonal entry of G~ + s V V^T");
            return false;
        }
        cg.w[i] = std::sqrt(cg.G(i, i));
        wmin2 = std::min(wmin2, cg.G(i, i));
    }
    // |fl(G~ + s V V^T) - (G~ + s V V^T)| <= gamma_{k+2} (s |V||V|^T + |G~|) entrywise (dsyrk with
    // beta = 1); scaled: ||W^-1 |V|||_F^2 and the largest row sum of W^-1 |G~| W^-1.
    double vv = 0, row_max = 0;
    for (Eigen::Index i = 0; i < n; ++i) {
        vv += V.row(i).squaredNorm() / cg.G(i, i);
        double sum = 0;
        for (Eigen::Index j = 0; j < n; ++j) {
            const double gij = j <= i ? Gt(i, j) : Gt(j, i);
            sum += std::abs(gij) / cg.w[i] / cg.w[j];
        }
        row_max = std::max(row_max, sum);
    }
    const double sums = 1 + gamma_n(static_cast<double>(n * std::max<Eigen::Index>(k, n)) + 2);
    cg.scaled_error =
        kBoundSafety * sums *
        (gamma_n(static_cast<double>(k) + 2) * (s * vv + row_max) + opt.gram_error / wmin2);
    double beta = r.beta;
    double c = opt.slack_scale * rump_slack(cg.G, cg.w, cg.scaled_error, beta, 1.0);
    while (r.attempts < opt.max_attempts && c < 1) {
        ++r.attempts;
        const ShiftTest t = rump_shift_test(cg, beta, c, opt.slack_scale);
        r.slack = c;
        r.beta = beta;
        if (t.certified) return true;
        if (t.factored)
            c = 1.05 * t.c_needed;  // the factor needs a larger slack: same beta, larger c
        else if (opt.beta_override > 0)
            break;  // a forced beta is tested as given
        else
            beta /= 4;
    }
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "certify (deflated): no inertia certificate after %d dpotrf (beta = %.3g, c = "
                  "%.3g): beta is not below lambda_{k+1}(G) by the slack",
                  r.attempts, beta, c);
    r.notes.emplace_back(buf);
    return false;
}
// theta (ascending, >= kcap + 1 entries) and V (n x (kcap + 1)): LAPACK dsyevr.
void bottom_pairs_dsyevr(const Eigen::MatrixXd& G, Eigen::Index kcap, Eigen::VectorXd& theta,
                         Eigen::MatrixXd& V) {
    const Eigen::Index n = G.rows();
    Eigen::MatrixXd A = G;
    theta.resize(n);  // dsyevr writes up to n values
    V.resize(n, kcap + 1);
    std::vector<lapack_int> isuppz(2 * static_cast<std::size_t>(kcap + 1));
    lapack_int found = 0;
    const lapack_int ln = static_cast<lapack_int>(n);
    const lapack_int info = LAPACKE_dsyevr(LAPACK_COL_MAJOR, 'V', 'I', 'L', ln, A.data(), ln, 0.0,
                                           0.0, 1, static_cast<lapack_int>(kcap + 1), 0.0, &found,
                                           theta.data(), V.data(), ln, isuppz.data());
    if (info != 0 || found != kcap + 1)
        fail_data("certify_deflated: dsyevr failed (info " + std::to_string(info) + ")");
}

// Block inverse iteration with opt.shifted_solve: K vectors, inverse_steps solves each followed by
// a QR, then Rayleigh-Ritz on G~; K doubles (up to kcap + 1) while more than 3K/4 Ritz values lie
// below vu, so that the first one above vu is a converged estimate of lambda_{k+1}.
void bottom_pairs_inverse(const Eigen::MatrixXd& G, const DeflatedOptions& opt, double vu,
                          Eigen::Index kcap, Eigen::VectorXd& theta, Eigen::MatrixXd& V) {
    const Eigen::Index n = G.rows();
    Eigen::Index K = std::min<Eigen::Index>(std::max<Eigen::Index>(opt.block_size, 8), kcap + 1);
    Rng rng(1);
    for (;;) {
        Eigen::MatrixXd X = rng.gaussian(n, K);
        for (int s = 0; s < std::max(opt.inverse_steps, 1); ++s) {
            opt.shifted_solve(X);
            if (!X.allFinite()) fail_data("certify_deflated: the shifted solve is not finite");
            X = Eigen::HouseholderQR<Eigen::MatrixXd>(X).householderQ() *
                Eigen::MatrixXd::Identity(n, K);
        }
        Eigen::MatrixXd GX(n, K);
        cblas_dsymm(CblasColMajor, CblasLeft, CblasLower, static_cast<int>(n), static_cast<int>(K),
                    1.0, G.data(), static_cast<int>(n), X.data(), static_cast<int>(n), 0.0,
                    GX.data(), static_cast<int>(n));
        Eigen::MatrixXd H = X.transpose() * GX;
        H = (0.5 * (H + H.transpose())).eval();
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(H);
        if (es.info() != Eigen::Success) fail_data("certify_deflated: Ritz eigensolve failed");
        theta = es.eigenvalues();
        Eigen::Index below = 0;
        while (below < K && theta[below] < vu) ++below;
        if (4 * below <= 3 * K || K == kcap + 1) {
            V = X * es.eigenvectors();
            return;
        }
        K = std::min(2 * K, kcap + 1);
    }
}
// The k (<= k_vu, the count below vu) that minimises the predicted relative width in sigma_1:
// the block error sqrt(k) pe smax / sigma_1 plus the quadratic term (pe smax^2)^2 k /
// (theta_{k+1} lambda_1) (residual ~ pe smax^2 sqrt(k), gap ~ theta_{k+1} / 2), among the k whose
// beta = theta_{k+1} / 2 clears the Cholesky slack (~ n u smax^2) by 1e3. Needs theta_1 > 0 as
// the lambda_1 estimate; otherwise (or when no k qualifies) k_vu.
Eigen::Index choose_k(const Eigen::VectorXd& theta, Eigen::Index k_vu, double pe, double smax,
                      double n) {
    const double l1 = theta[0], s2 = smax * smax;
    if (!(l1 > 0)) return k_vu;
    Eigen::Index best = k_vu;
    double best_w = std::numeric_limits<double>::infinity();
    for (Eigen::Index k = 1; k <= k_vu; ++k) {
        if (!(theta[k] / 2 > 1e3 * n * kUnitRoundoff * s2)) continue;
        const double kd = static_cast<double>(k);
        const double w = std::sqrt(kd) * pe * smax / std::sqrt(l1) +
                         (pe * s2) * (pe * s2) * kd / (theta[k] * l1);
        if (w < best_w) best_w = w, best = k;
    }
    return best;
}
}  // namespace

double deflated_bytes(Eigen::Index n, Eigen::Index m, Eigen::Index k) {
    const double nd = static_cast<double>(n), md = static_cast<double>(m),
                 kd = static_cast<double>(k);
    // G~ copy (dsyevr) or shifted matrix + its dpotrf copy; V, V', J Y; J^T V, its SVD (U) and
    // the split rows of the block (3 m k).
    return 8.0 * (2 * nd * nd + 4 * nd * (kd + 1) + 6 * md * kd);
}

namespace {
// The checks before any work (DataError): sizes, options and memory. Returns the most pairs that
// may be deflated, min(k_max, n - 1).
Eigen::Index check_deflated(const LinearOperator& J, const Eigen::MatrixXd& G,
                            const DeflatedOptions& opt) {
    const Eigen::Index n = J.rows(), m = J.cols();
    if (n == 0 || m == 0) fail_data("certify_deflated: empty operator");
    if (n > m) fail_data("certify_deflated: J must be wide (rows <= cols); pass J^T");
    if (G.rows() != n || G.cols() != n)
        fail_data("certify_deflated: G must be " + std::to_string(n) + " x " + std::to_string(n));
    if (!(opt.product_rel_error > 0) || !(opt.sigma_max_hi > 0) || !(opt.gram_error >= 0) ||
        !(opt.vu_rel > 0 && opt.vu_rel < 1) || opt.k_max < 1 || opt.max_attempts < 1)
        fail_data(
            "certify_deflated: needs product_rel_error > 0, sigma_max_hi > 0, gram_error >= 0, "
            "vu_rel in (0, 1), k_max >= 1, max_attempts >= 1");
    const Eigen::Index kcap = std::min<Eigen::Index>(opt.k_max, n - 1);
    check_allocation(deflated_bytes(n, m, kcap), opt.max_bytes,
                     "deflated certificate (" + std::to_string(n) + " x " + std::to_string(m) +
                         ", up to " + std::to_string(kcap) + " pairs)",
                     "max_bytes");
    return kcap;
}

// 1. the bottom eigenpairs of G~: dsyevr (index range 1 .. kcap + 1), or block inverse iteration
// with the caller's solver (Rayleigh-Ritz on G~ in the iterated block); then the k to deflate
// (choose_k). Returns k (0, with a note: nothing below vu) and V with its k columns.
Eigen::Index deflated_pairs(const Eigen::MatrixXd& G, const DeflatedOptions& opt, double vu,
                            Eigen::Index kcap, Clock::time_point t0, Eigen::MatrixXd& V,
                            DeflatedMin& r) {
    const Eigen::Index n = G.rows();
    Eigen::VectorXd theta;
    if (opt.shifted_solve && n > opt.dsyevr_upto)
        bottom_pairs_inverse(G, opt, vu, kcap, theta, V);
    else
        bottom_pairs_dsyevr(G, kcap, theta, V);
    r.seconds_eig = since(t0);
    Eigen::Index k = 0;
    const Eigen::Index have = V.cols();  // pairs computed: theta[have - 1] is the largest
    while (k < have && theta[k] < vu) ++k;
    if (k == 0) {
        r.notes.emplace_back("certify (deflated): no eigenvalue of G~ below vu = " +
                             value_text(vu) + "; nothing to deflate");
        return 0;
    }
    k = std::min(k, have - 1);  // more below vu than computed: choose among the computed ones
    k = choose_k(theta, k, opt.product_rel_error, opt.sigma_max_hi, static_cast<double>(n));
    r.k = k;
    r.theta_1 = theta[0];
    r.theta_k = theta[k - 1];
    r.theta_next = theta[k];
    V.conservativeResize(n, k);
    return k;
}

// 2. grade the block: rotate V by the right singular vectors of J^T V (Rayleigh-Ritz with the
// operator), so that column j of J^T V' has norm ~ sigma_j of the block. Returns Y = J^T V'.
Eigen::MatrixXd graded_block(const LinearOperator& J, Eigen::MatrixXd& V) {
    {
        const Eigen::MatrixXd Y0 = transpose_products(J, V);
        Eigen::BDCSVD<Eigen::MatrixXd> sv(Y0, Eigen::ComputeThinV);
        V = (V * sv.matrixV()).eval();  // descending: the last column is the smallest
    }
    return transpose_products(J, V);
}

// What the Ritz block's enclosure hands on to the coupling bound and the Schur complement.
struct RitzBlock {
    Eigen::VectorXd vn, yn;           // upper bounds on the column norms of V and of Y
    Eigen::VectorXd e;                // A2: ||fl(J^T v_j) - J^T v_j|| <= e_j
    double lam1_lo = 0, lam1_hi = 0;  // lambda_1(H11) in [lam1_lo, lam1_hi]
};

// 4. the Ritz block H11 = Q^T G Q, Q = V (V^T V)^-1/2: eta, Y's error, lambda_1(H11), its lower
// end by the plain certificate on the k x k Gram of the graded block and its upper end by the
// Rayleigh quotient of the last column. False (with a note) when V is not orthonormal enough or
// the block is not certified.
bool ritz_block(const Eigen::MatrixXd& V, const Eigen::MatrixXd& Y, const DeflatedOptions& opt,
                RitzBlock& b, DeflatedMin& r) {
    const Eigen::Index n = V.rows(), k = V.cols();
    b.vn = column_norm_bounds(V);
    {
        Eigen::MatrixXd B = V.transpose() * V;
        B.diagonal().array() -= 1;
        r.eta = kBoundSafety * (B.norm() * (1 + gamma_n(static_cast<double>(k * k) + 3)) +
                                gamma_n(static_cast<double>(n)) * b.vn.squaredNorm());
    }
    if (!(r.eta < 0.5)) {
        r.notes.emplace_back(
            "certify (deflated): V is not orthonormal enough (eta = " + value_text(r.eta) + ")");
        return false;
    }
    b.e = opt.product_rel_error * opt.sigma_max_hi * b.vn;
    b.e *= kBoundSafety;
    r.block_error = iv::up(b.e.norm() * kBoundSafety);
    b.yn = column_norm_bounds(Y);
    // lower end: sigma_min(Y~) by the plain certificate on the k x k Gram of the graded block
    double smin_lo = 0;
    {
        Eigen::BDCSVD<Eigen::MatrixXd> sy(Y, Eigen::ComputeThinV);
        const double s_est = sy.singularValues()[k - 1];
        // lower the estimate by its absolute accuracy (backward stable SVD: ~ k u ||Y||)
        const double s0 = std::max(
            0.0, s_est - 4 * static_cast<double>(k) * kUnitRoundoff * sy.singularValues()[0]);
        const CompensatedGram gy = compensated_gram(Y.transpose());
        PlainCertifyOptions co;
        co.max_bytes = opt.max_bytes;
        const CertifiedMin cy = certify_lambda_min(gy, s0 * s0, sy.matrixV().col(k - 1), co);
        if (!cy.certified) {
            r.notes.emplace_back(
                "certify (deflated): sigma_min of the Ritz block J^T V not "
                "certified (" +
                cy.notes.back() + ")");
            return false;
        }
        smin_lo = iv::down(std::sqrt(cy.lambda_lo));
    }
    const double y_lo = std::max(0.0, iv::down(smin_lo - r.block_error));
    b.lam1_lo = iv::down(iv::down(y_lo * y_lo) / iv::up(1 + r.eta));
    // upper end: the Rayleigh quotient of the last column, sigma_min(J) <= ||J^T v|| / ||v||
    const double y_hi = iv::up(b.yn[k - 1] + b.e[k - 1]);
    b.lam1_hi = iv::up(iv::up(y_hi * y_hi) / iv::down(1 - r.eta));
    r.lambda_hi = b.lam1_hi;
    r.u = V.col(k - 1).normalized();
    r.sigma_hi = iv::up(y_hi / iv::down(std::sqrt(iv::down(1 - r.eta))));
    return true;
}

// 5. the coupling e >= ||(I - Q Q^T) G Q|| <= ||G V - V C||_2 / sqrt(1 - eta), C =
// diag(||y_j||^2)
double coupling_residual(const LinearOperator& J, const Eigen::MatrixXd& V,
                         const Eigen::MatrixXd& Y, const RitzBlock& b, const DeflatedOptions& opt,
                         double eta) {
    const Eigen::Index n = V.rows(), k = V.cols();
    const double pe = opt.product_rel_error, smax = opt.sigma_max_hi;
    Eigen::MatrixXd R(n, k);
    for (Eigen::Index j = 0; j < k; ++j) J.apply(Y.col(j).data(), R.col(j).data());
    if (!R.allFinite()) fail_data("certify_deflated: products J y are not finite");
    const Eigen::VectorXd jy = column_norm_bounds(R);
    double f2 = 0;
    for (Eigen::Index j = 0; j < k; ++j) {
        const double cj = Y.col(j).squaredNorm();
        R.col(j) -= cj * V.col(j);
        // A2 for J y_j and J (y_j - J^T v_j); the scaling c_j v_j and the subtraction (2u)
        const double f =
            pe * smax * b.yn[j] + smax * b.e[j] + 3 * kUnitRoundoff * (jy[j] + cj * b.vn[j]);
        f2 += f * f;
    }
    const double res = R.norm() * (1 + gamma_n(static_cast<double>(n * k) + 2)) + std::sqrt(f2);
    return iv::up(opt.residual_scale * kBoundSafety * res / std::sqrt(iv::down(1 - eta)));
}

// 6. Schur complement: lambda_min(G) >= lambda_1(H11) - 2e^2 / (g + sqrt(g^2 + 4 e^2)), and the
// certificate's notes (none but why when there is no gap).
void schur_bound(const RitzBlock& b, double vu, DeflatedMin& r) {
    r.gap = iv::down(r.beta - b.lam1_hi);
    if (!(r.gap > 0)) {
        r.notes.emplace_back("certify (deflated): no gap, lambda_1 of the block " +
                             value_text(b.lam1_hi) + " >= beta " + value_text(r.beta));
        return;
    }
    const double e2 = iv::up(r.residual * r.residual);
    r.shift = iv::up(2 * e2 / iv::down(r.gap + std::sqrt(iv::down(r.gap * r.gap + 4 * e2))));
    r.lambda_lo = iv::down(b.lam1_lo - r.shift);
    r.certified = r.lambda_lo > 0;
    r.sigma_lo = r.certified ? iv::down(std::sqrt(r.lambda_lo)) : 0;
    char buf[600];
    std::snprintf(buf, sizeof buf,
                  "certify (deflated): %s; k = %ld below vu = %.3g (theta_1 %.3g, theta_k %.3g, "
                  "theta_k+1 %.3g), beta = %.3g (c = %.3g, %d dpotrf), gap %.3g, residual %.3g, "
                  "quadratic term %.3g, block error %.3g (A2), eta %.2g, Gram error %.3g (assumed)",
                  r.certified ? "certified" : "lambda_1 - shift <= 0", static_cast<long>(r.k), vu,
                  r.theta_1, r.theta_k, r.theta_next, r.beta, r.slack, r.attempts, r.gap,
                  r.residual, r.shift, r.block_error, r.eta, r.gram_error);
    r.notes.emplace_back(buf);
    std::snprintf(buf, sizeof buf,
                  "certify (deflated): times dsyevr %.2f s, dpotrf %.2f s, Ritz block and residual "
                  "%.2f s",
                  r.seconds_eig, r.seconds_chol, r.seconds_ritz);
    r.notes.emplace_back(buf);
}
}  // namespace

DeflatedMin certify_deflated(const LinearOperator& J, const Eigen::MatrixXd& G,
                             const DeflatedOptions& opt) {
    const auto t0 = Clock::now();
    const Eigen::Index kcap = check_deflated(J, G, opt);
    DeflatedMin r;
    r.method =
        "deflated Rump: dsyevr pairs of G~ below vu, dpotrf of G~ + s V V^T - beta I, graded "
        "Ritz block J^T V enclosed by the plain certificate, Schur / quadratic residual bound";
    r.gram_error = opt.gram_error;
    r.sigma_hi = std::numeric_limits<double>::infinity();
    r.lambda_hi = r.sigma_hi;
    auto finish = [&] {
        r.seconds = since(t0);
        return r;
    };
    if (kcap < 1) {
        r.notes.emplace_back("certify (deflated): n = 1, nothing to deflate");
        return finish();
    }
    const double smax = opt.sigma_max_hi;
    const double vu = opt.vu_rel * smax * smax;
    Eigen::MatrixXd V;
    if (deflated_pairs(G, opt, vu, kcap, t0, V, r) == 0) return finish();
    const auto t_ritz = Clock::now();
    const Eigen::MatrixXd Y = graded_block(J, V);
    r.seconds_ritz = since(t_ritz);

    // 3. inertia: lambda_min(G + s V V^T) >= beta, hence lambda_min(G on range(V)^perp) >= beta
    const auto t_chol = Clock::now();
    r.beta = opt.beta_override > 0 ? opt.beta_override : r.theta_next / 2;
    const bool inertia = certify_inertia(G, V, 2 * r.beta, opt, r);
    r.seconds_chol = since(t_chol);
    if (!inertia) return finish();

    const auto t_ritz2 = Clock::now();
    RitzBlock b;
    if (!ritz_block(V, Y, opt, b, r)) return finish();
    r.residual = coupling_residual(J, V, Y, b, opt, r.eta);
    r.seconds_ritz += since(t_ritz2);
    schur_bound(b, vu, r);
    return finish();
}

}  // namespace attnspec
