// Large-scale extremal singular values of a LinearOperator via its Gram matrix, refined with
// matrix-free products (proofs/spectral_enclosure.md §4).
#include "attnspec/spectral/operator_spectrum.hpp"

#include <Spectra/MatOp/DenseSymMatProd.h>
#include <Spectra/SymEigsShiftSolver.h>
#include <Spectra/SymEigsSolver.h>
#include <lapacke.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/base/interval_ops.hpp"

namespace attnspec {

const char* to_string(LargeSvdMode m) {
    switch (m) {
        case LargeSvdMode::full:
            return "full";
        case LargeSvdMode::extremal:
            return "extremal";
        case LargeSvdMode::auto_select:
            return "auto";
    }
    return "?";
}
LargeSvdMode large_svd_mode_from_string(const std::string& s) {
    if (s == "full") return LargeSvdMode::full;
    if (s == "extremal") return LargeSvdMode::extremal;
    if (s == "auto") return LargeSvdMode::auto_select;
    fail_usage("unknown --svd mode '" + s + "' (expected full, extremal or auto)");
}

namespace {

constexpr double kU = std::numeric_limits<double>::epsilon() / 2;
using Vec = Eigen::VectorXd;

// (G - shift I)^{-1} by LAPACK dpotrf/dpotrs; the factor is kept for the PCG preconditioner.
class CholShiftOp {
  public:
    using Scalar = double;
    explicit CholShiftOp(const Eigen::MatrixXd& G) : G_(G) {}
    Eigen::Index rows() const { return G_.rows(); }
    Eigen::Index cols() const { return G_.rows(); }
    bool factor(double shift) {
        if (ok_ && shift == shift_) return true;
        L_ = G_;
        L_.diagonal().array() -= shift;
        const lapack_int n = static_cast<lapack_int>(L_.rows());
        ok_ = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, L_.data(), n) == 0;
        shift_ = shift;
        return ok_;
    }
    void set_shift(double s) {
        if (!factor(s)) fail_data("shift-invert: G - shift I is not positive definite");
    }
    void perform_op(const double* x, double* y) const {
        const lapack_int n = static_cast<lapack_int>(L_.rows());
        std::copy(x, x + n, y);
        LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', n, 1, L_.data(), n, y, n);
    }

  private:
    const Eigen::MatrixXd& G_;
    Eigen::MatrixXd L_;
    double shift_ = 0;
    bool ok_ = false;
};

Vec JJt(const LinearOperator& J, const Vec& x) { return J * J.transpose_times(x); }

Eigen::MatrixXd assemble_gram(const LinearOperator& J) {
    const Eigen::Index n = J.rows();
    Eigen::MatrixXd G(n, n);
    Vec e = Vec::Zero(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        e[i] = 1;
        G.col(i) = JJt(J, e);
        e[i] = 0;
    }
    return 0.5 * (G + G.transpose());
}

// A few power steps on E = G - J J^T: an estimate (a lower bound) of ||E||_2.
double estimate_gram_error(const LinearOperator& J, const Eigen::MatrixXd& G, Rng& rng) {
    Vec x(G.rows());
    for (Eigen::Index i = 0; i < x.size(); ++i) x[i] = rng.normal();
    x.normalize();
    double e = 0;
    for (int k = 0; k < 4; ++k) {
        Vec y = G.selfadjointView<Eigen::Lower>() * x - JJt(J, x);
        e = y.norm();
        if (e == 0) break;
        x = y / e;
    }
    return e;
}

struct Dense {               // Ritz vectors at both ends of G's spectrum
    Vec top_vals, bot_vals;  // descending / ascending
    Eigen::MatrixXd top_vecs, bot_vecs;
    Vec top_res, bot_res;                   // Ritz residuals ||G y - lambda y||, y unit
    Eigen::Index top_ops = 0, bot_ops = 0;  // operator applications (Lanczos cost)
};

// Rayleigh quotients and residuals of the Ritz pairs in double: each lambda is within res of an
// eigenvalue of G (symmetric Bauer-Fike), whatever the solver's tolerance was.
void ritz_check(const Eigen::MatrixXd& G, Vec& vals, Eigen::MatrixXd& vecs, Vec& res) {
    res.resize(vals.size());
    for (Eigen::Index k = 0; k < vals.size(); ++k) {
        vecs.col(k).normalize();
        const Vec g = G.selfadjointView<Eigen::Lower>() * vecs.col(k);
        vals[k] = vecs.col(k).dot(g);
        res[k] = (g - vals[k] * vecs.col(k)).norm();
    }
}

Dense extremal_eigs(const Eigen::MatrixXd& G, CholShiftOp& chol, double tau, Rng& rng,
                    std::vector<std::string>& notes) {
    const Eigen::Index n = G.rows();
    Dense d;
    Vec v0(n);
    for (Eigen::Index i = 0; i < n; ++i) v0[i] = rng.normal();
    if (n <= 8) {  // Spectra needs nev < n: tiny cases go dense
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(G);
        const Eigen::Index k = std::min<Eigen::Index>(3, n);
        d.bot_vals = es.eigenvalues().head(k);
        d.bot_vecs = es.eigenvectors().leftCols(k);
        d.top_vals = es.eigenvalues().tail(k).reverse();
        d.top_vecs = es.eigenvectors().rightCols(k).rowwise().reverse();
        return d;
    }
    const Eigen::Index nev = 2,
                       ncv = std::min<Eigen::Index>(n, 16);  // refinement follows: loose tol
    Spectra::DenseSymMatProd<double> op(G);
    Spectra::SymEigsSolver<Spectra::DenseSymMatProd<double>> top(op, nev, ncv);
    top.init(v0.data());
    top.compute(Spectra::SortRule::LargestAlge, 2000, 1e-7);
    if (top.info() != Spectra::CompInfo::Successful)
        notes.push_back("Lanczos (largest) reported no convergence; residuals decide");
    d.top_vals = top.eigenvalues();
    d.top_vecs = top.eigenvectors();
    d.top_ops = top.num_operations();
    // shift-invert at -tau (tau > 0): never at 0, where a singular G breaks the factorization
    Spectra::SymEigsShiftSolver<CholShiftOp> bot(chol, nev, ncv, -tau);
    bot.init(v0.data());
    bot.compute(Spectra::SortRule::LargestMagn, 2000, 1e-7);
    if (bot.info() != Spectra::CompInfo::Successful)
        notes.push_back(
            "shift-invert Lanczos (smallest) reported no convergence; residuals decide");
    d.bot_ops = bot.num_operations();
    Vec bv = bot.eigenvalues();
    Eigen::MatrixXd bV = bot.eigenvectors();
    std::vector<Eigen::Index> order(bv.size());
    for (Eigen::Index i = 0; i < bv.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](Eigen::Index a, Eigen::Index b) { return bv[a] < bv[b]; });
    d.bot_vals.resize(bv.size());
    d.bot_vecs.resize(n, bv.size());
    for (Eigen::Index i = 0; i < bv.size(); ++i) {
        d.bot_vals[i] = bv[order[i]];
        d.bot_vecs.col(i) = bV.col(order[i]);
    }
    return d;
}

// Triplet from a unit left vector u: sigma = ||J^T u||, v = J^T u / sigma, residuals.
void make_triplet(const LinearOperator& J, const Vec& u0, RefinedTriplet& t) {
    t.u = u0.normalized();
    Vec w = J.transpose_times(t.u);
    t.sigma = w.norm();
    t.v = t.sigma > 0 ? Vec(w / t.sigma) : Vec(w);
    t.res_v = (w - t.sigma * t.v).norm();
    t.res_u = (J * t.v - t.sigma * t.u).norm();
}

// Preconditioned CG for (J J^T) x = b with M^{-1} = (G + tau I)^{-1}.
Vec pcg(const LinearOperator& J, const CholShiftOp& M, const Vec& b, int max_iter) {
    const Eigen::Index n = b.size();
    Vec x(n), z(n);
    M.perform_op(b.data(), x.data());
    Vec r = b - JJt(J, x);
    M.perform_op(r.data(), z.data());
    Vec p = z;
    double rz = r.dot(z);
    const double bn = b.norm();
    for (int it = 0; it < max_iter && r.norm() > 1e-13 * bn; ++it) {
        const Vec Ap = JJt(J, p);
        const double pAp = p.dot(Ap);
        if (!(pAp > 0)) break;  // (numerically) singular J J^T: keep the iterate
        const double a = rz / pAp;
        x += a * p;
        r -= a * Ap;
        M.perform_op(r.data(), z.data());
        const double rz2 = r.dot(z);
        p = z + (rz2 / rz) * p;
        rz = rz2;
    }
    return x;
}

// Interval of sigma_k from the Gram eigenvalue lambda (Weyl on G with error delta).
Interval gram_interval(double lambda, double delta) {
    return {iv::down(std::sqrt(std::max(0.0, lambda - delta))),
            iv::up(std::sqrt(std::max(0.0, lambda + delta)))};
}

// Enclosure of one refined triplet; alpha/beta bound the neighbouring singular values.
void enclose(RefinedTriplet& t, Interval gram, double alpha, double beta, double pad, bool is_max) {
    t.rho = iv::up(
        std::sqrt(0.5 * ((t.res_u + pad) * (t.res_u + pad) + (t.res_v + pad) * (t.res_v + pad))));
    TripletBound tb;
    tb.theta = t.sigma;
    tb.theta_err = 2 * pad + 4 * kU * t.sigma;
    tb.rho = t.rho;
    Interval enc = gram;
    t.basis = "gram-weyl";
    // Courant-Fischer with the unit u: sigma_min <= ||J^T u|| <= sigma_max (rows <= cols)
    if (is_max)
        enc.lo = std::max(enc.lo, iv::down(t.sigma - tb.theta_err));
    else
        enc.hi = std::min(enc.hi, iv::up(t.sigma + tb.theta_err));
    const Interval jw = iv::around(t.sigma, t.rho + tb.theta_err);
    const bool identified = (gram.lo > alpha && gram.hi < beta) || (jw.lo > alpha && jw.hi < beta);
    if (identified) {
        if (jw.lo > alpha && jw.hi < beta) {
            enc = iv::intersect(enc, jw);
            t.basis = "jordan-wielandt";
        }
        const Interval tk = temple_enclosure(tb, alpha, beta);
        if (tk.lo <= tk.hi) {
            enc = iv::intersect(enc, tk);
            t.basis = "temple";
        }
    }
    if (enc.lo > enc.hi) {  // the assumptions (gram error, product error) are contradicted
        enc = {std::min(enc.lo, enc.hi), std::max(enc.lo, enc.hi)};
        t.basis += " (inconsistent: assumptions violated)";
    }
    t.enclosure = {std::max(0.0, enc.lo), enc.hi};
}

// Wide operator view of a tall one (rows > cols): J^T.
class Transposed final : public LinearOperator {
  public:
    explicit Transposed(const LinearOperator& A) : A_(A) {}
    Eigen::Index rows() const override { return A_.cols(); }
    Eigen::Index cols() const override { return A_.rows(); }
    void apply(const double* x, double* y) const override { A_.apply_transpose(x, y); }
    void apply_transpose(const double* x, double* y) const override { A_.apply(x, y); }

  private:
    const LinearOperator& A_;
};

}  // namespace

OperatorSpectrum operator_spectrum(const LinearOperator& J0, const Eigen::MatrixXd* G_in,
                                   const LargeSvdOptions& opt) {
    const auto t0 = std::chrono::steady_clock::now();
    if (J0.rows() == 0 || J0.cols() == 0) fail_data("operator_spectrum: empty operator");
    OperatorSpectrum s;
    s.rows = J0.rows();
    s.cols = J0.cols();
    const bool tall = J0.rows() > J0.cols();
    Transposed JT(J0);
    const LinearOperator& J = tall ? static_cast<const LinearOperator&>(JT) : J0;
    if (tall) {
        s.notes.push_back("tall operator: the engine works on J^T (same singular values)");
        G_in = nullptr;
    }
    const Eigen::Index n = J.rows();
    check_allocation(8.0 * 3.0 * n * n, opt.max_bytes,
                     "Gram matrix, its factor and a copy (" + std::to_string(n) + "^2)");
    if (G_in && (G_in->rows() != n || G_in->cols() != n))
        fail_data("operator_spectrum: G must be " + std::to_string(n) + "x" + std::to_string(n));
    if (G_in && !G_in->allFinite()) fail_data("operator_spectrum: G contains NaN or Inf");
    Eigen::MatrixXd G_own;
    if (!G_in) {
        G_own = assemble_gram(J);
        if (!G_own.allFinite()) fail_data("operator_spectrum: J products are not finite");
        s.notes.push_back("G assembled from " + std::to_string(n) + " products J (J^T e_i)");
    }
    const Eigen::MatrixXd& G = G_in ? *G_in : G_own;
    Rng rng(opt.seed);
    LargeSvdMode mode = opt.mode;
    if (mode == LargeSvdMode::auto_select)
        mode = n <= opt.full_upto ? LargeSvdMode::full : LargeSvdMode::extremal;

    const double lambda_max_est = G.diagonal().maxCoeff() > 0 ? G.norm() : 0.0;  // >= lambda_max
    if (lambda_max_est == 0) fail_data("operator_spectrum: J = 0 (kappa undefined)");
    // tau: above the possible negative eigenvalues of fl(G) (~ n u ||G||), never zero.
    double tau = 4 * std::sqrt(static_cast<double>(n)) * kU * lambda_max_est;
    auto lap = [t_last = std::chrono::steady_clock::now()]() mutable {
        const auto t = std::chrono::steady_clock::now();
        const double dt = std::chrono::duration<double>(t - t_last).count();
        t_last = t;
        return dt;
    };
    char buf[256];
    CholShiftOp chol(G);
    while (!chol.factor(-tau)) {
        tau *= 16;
        if (tau > lambda_max_est)
            fail_data("operator_spectrum: G is not positive semidefinite (not J J^T)");
    }
    const double t_chol = lap();

    Dense d = extremal_eigs(G, chol, tau, rng, s.notes);
    ritz_check(G, d.top_vals, d.top_vecs, d.top_res);
    ritz_check(G, d.bot_vals, d.bot_vecs, d.bot_res);
    const double t_lanczos = lap();
    Vec all;
    auto all_eigenvalues = [&]() {
        Eigen::MatrixXd A = G;
        all.resize(n);
        const lapack_int info =
            LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'N', 'L', static_cast<lapack_int>(n), A.data(),
                           static_cast<lapack_int>(n), all.data());
        if (info != 0) fail_data("dsyevd failed (info = " + std::to_string(info) + ")");
        s.method = "G=JJ^T: LAPACK dsyevd (all) + Spectra Lanczos/shift-invert vectors";
    };
    if (mode == LargeSvdMode::full) {
        all_eigenvalues();
    } else {
        s.method = "G=JJ^T: Spectra Lanczos (largest) + shift-invert at -tau (smallest)";
    }
    const double t_full = lap();
    s.mode = to_string(mode);

    // Gram error: estimate of ||fl(G) - J J^T|| x 10 + eigensolver backward error.
    const double lam1 = d.top_vals[0];
    s.gram_error =
        10 * estimate_gram_error(J, G, rng) + 4 * std::sqrt(static_cast<double>(n)) * kU * lam1;
    const double pe = opt.product_rel_error > 0
                          ? opt.product_rel_error
                          : 4 * std::sqrt(static_cast<double>(n + J.cols())) * kU;
    s.product_rel_error = pe;

    // sigma_max: power steps from the Lanczos vector
    RefinedTriplet& tmax = s.max;
    tmax.sigma_gram = std::sqrt(std::max(0.0, lam1));
    make_triplet(J, d.top_vecs.col(0), tmax);
    for (int k = 0; k < opt.refine_steps && tmax.res_u > 8 * pe * tmax.sigma; ++k) {
        make_triplet(J, J * tmax.v, tmax);
        tmax.steps = k + 1;
    }
    const double smax = tmax.sigma;
    const double pad = iv::up(pe * smax * 1.01);
    const double alpha_top =
        d.top_vals.size() > 1 ? gram_interval(d.top_vals[1], s.gram_error + d.top_res[1]).hi : 0.0;
    enclose(tmax, gram_interval(lam1, s.gram_error + d.top_res[0]), alpha_top,
            std::numeric_limits<double>::infinity(), pad, true);

    // sigma_min: inverse iteration, each solve by PCG preconditioned with the Gram factor
    RefinedTriplet& tmin = s.min;
    tmin.sigma_gram = std::sqrt(std::max(0.0, d.bot_vals[0]));
    make_triplet(J, d.bot_vecs.col(0), tmin);
    for (int k = 0; k < opt.refine_steps && tmin.res_u > 8 * pe * smax; ++k) {
        RefinedTriplet next;
        make_triplet(J, pcg(J, chol, tmin.u, opt.pcg_max_iter), next);
        if (!(next.res_u < tmin.res_u)) break;
        next.sigma_gram = tmin.sigma_gram;
        tmin = next;
        tmin.steps = k + 1;
    }
    const double beta_bot = d.bot_vals.size() > 1 ? gram_interval(d.bot_vals[1], s.gram_error + d.bot_res[1]).lo
                                                  : std::numeric_limits<double>::infinity();
    enclose(tmin, gram_interval(d.bot_vals[0], s.gram_error + d.bot_res[0]), 0.0, beta_bot, pad, false);

    const double t_refine = lap();
    std::snprintf(buf, sizeof buf,
                  "timings: dpotrf %.2f s, Lanczos %.2f s (%ld G products + %ld solves), "
                  "dsyevd %.2f s, refine+check %.2f s",
                  t_chol, t_lanczos, static_cast<long>(d.top_ops), static_cast<long>(d.bot_ops),
                  t_full, t_refine);
    s.notes.push_back(buf);
    // rank and kappa
    const double eps = std::numeric_limits<double>::epsilon();
    const double t_def = static_cast<double>(std::max(s.rows, s.cols)) * eps;
    const double t_nz = opt.rtol < 0 ? t_def : opt.rtol;
    if (!(t_nz >= 0 && t_nz < 1)) fail_data("operator_spectrum: rtol must be in [0, 1)");
    SvdResult fake;  // extremal values with their enclosures, fed to kappa()
    const bool proven_full = tmin.enclosure.lo > t_def * tmax.enclosure.hi;
    // auto: a (possibly) rank-deficient J needs the whole spectrum for rank and kappa_nz
    if (opt.mode == LargeSvdMode::auto_select && mode == LargeSvdMode::extremal && !proven_full &&
        n <= 4 * opt.full_upto) {
        all_eigenvalues();
        mode = LargeSvdMode::full;
        s.mode = to_string(mode);
        s.notes.push_back("auto: full rank not proven in extremal mode; fell back to full");
    }
    if (mode == LargeSvdMode::full) {
        s.gram_sigma = all.reverse().cwiseMax(0.0).cwiseSqrt();
        fake.sigma = s.gram_sigma;
        fake.lo.resize(n);
        fake.hi.resize(n);
        // A Gram value is resolved as nonzero only when its interval (Weyl on G) clears the rank
        // threshold; values the Gram matrix cannot resolve (below ~sqrt(gram_error)) count as 0.
        Eigen::Index unresolved = 0;
        s.rank = 0;
        for (Eigen::Index i = 0; i < n; ++i) {
            const Interval g = gram_interval(all[n - 1 - i], s.gram_error);
            fake.lo[i] = g.lo;
            fake.hi[i] = g.hi;
            if (g.lo > t_def * smax)
                s.rank = i + 1;
            else if (g.hi > t_def * smax)
                ++unresolved;
            if (i > 0 && g.lo <= t_def * smax) fake.sigma[i] = 0;
        }
        if (proven_full) s.rank = n;
        if (unresolved > 0 && !proven_full)
            s.notes.push_back(std::to_string(unresolved) +
                              " Gram values straddle the rank threshold: rank is a lower bound");
    } else {
        s.gram_sigma.resize(d.top_vals.size() + d.bot_vals.size());
        s.gram_sigma << d.top_vals.cwiseMax(0.0).cwiseSqrt(),
            d.bot_vals.reverse().cwiseMax(0.0).cwiseSqrt();
        s.rank = proven_full ? n : -1;
        fake.sigma = Vec::Zero(n);
        fake.lo = fake.hi = Vec::Zero(n);
        if (!proven_full)
            s.notes.push_back(
                "extremal: full rank not proven; rank and kappa_nz unknown (use full mode)");
    }
    fake.sigma[0] = tmax.sigma;
    fake.lo[0] = tmax.enclosure.lo;
    fake.hi[0] = tmax.enclosure.hi;
    fake.sigma[n - 1] = tmin.sigma;
    fake.lo[n - 1] = tmin.enclosure.lo;
    fake.hi[n - 1] = tmin.enclosure.hi;
    fake.method = s.mode;
    s.strict = kappa(fake, s.rows, s.cols, KappaConvention::strict, t_def);
    s.nz = kappa(fake, s.rows, s.cols, KappaConvention::nz, t_nz);
    s.strict.method = s.nz.method = "operator (" + s.mode + ")";
    if (mode == LargeSvdMode::extremal && !proven_full) {  // kappa_nz needs the whole spectrum
        s.nz.value = std::numeric_limits<double>::quiet_NaN();
        s.nz.rank = -1;
        s.nz.enclosure = {1.0, std::numeric_limits<double>::infinity()};
    }
    const Kappa& kr = std::isfinite(s.strict.value) ? s.strict : s.nz;
    s.rel_error_bound = kr.value > 0 && std::isfinite(kr.enclosure.hi)
                            ? (kr.enclosure.hi - kr.enclosure.lo) / (2 * kr.value)
                            : std::numeric_limits<double>::infinity();
    s.method += "; refined by power steps / PCG inverse iteration with matrix-free J, J^T";
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return s;
}

}  // namespace attnspec
