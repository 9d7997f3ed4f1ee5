// Large-scale extremal singular values of a LinearOperator via its Gram matrix, refined with
// matrix-free products (proofs/spectral_enclosure.md §4).
#include "attnspec/spectral/operator_spectrum.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "attnspec/base/enum_names.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/interval_ops.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/spectral/engine_progress.hpp"
#include "operator_spectrum_internal.hpp"

namespace attnspec {

namespace {
constexpr EnumName<LargeSvdMode> kLargeSvdModeNames[] = {{LargeSvdMode::full, "full"},
                                                         {LargeSvdMode::extremal, "extremal"},
                                                         {LargeSvdMode::auto_select, "auto"}};
}  // namespace

const char* to_string(LargeSvdMode m) { return enum_name(m, kLargeSvdModeNames); }
LargeSvdMode large_svd_mode_from_string(const std::string& s) {
    return enum_from_name(s, kLargeSvdModeNames, "large-SVD mode", "large_svd_mode");
}

namespace {

using opspec::Vec;

// J as it is, counting its applications (J and J^T) into a progress stage: the refinement's
// power steps and PCG products show themselves.
class Counting final : public LinearOperator {
  public:
    Counting(const LinearOperator& A, opspec::StageProgress& prog) : A_(A), prog_(prog) {}
    Eigen::Index rows() const override { return A_.rows(); }
    Eigen::Index cols() const override { return A_.cols(); }
    void apply(const double* x, double* y) const override {
        A_.apply(x, y);
        prog_.update(++count_);
    }
    void apply_transpose(const double* x, double* y) const override {
        A_.apply_transpose(x, y);
        prog_.update(++count_);
    }

  private:
    const LinearOperator& A_;
    opspec::StageProgress& prog_;
    mutable long count_ = 0;
};

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

// What the engine knows of each singular value sigma_i (i = 0 .. n-1, descending): the refined
// ends with their enclosures and, in full mode, the Gram values (Weyl intervals on G) resolved
// above the rank threshold; an unresolved interior value (or any, in extremal mode) counts as 0.
struct KnownSpectrum {
    const OperatorSpectrum& s;
    const Vec* all;  // ascending eigenvalues of G (full mode), else null
    Eigen::Index n;
    double threshold;  // t_def * sigma_max: below it a Gram value is not resolved as nonzero

    Interval gram(Eigen::Index i) const {
        return opspec::gram_interval((*all)[n - 1 - i], s.gram_error);
    }
    double sigma(Eigen::Index i) const {
        if (i == n - 1) return s.min.sigma;
        if (i == 0) return s.max.sigma;
        return all && !(gram(i).lo <= threshold) ? s.gram_sigma[i] : 0.0;
    }
    Interval enclosure(Eigen::Index i) const {
        if (i == n - 1) return s.min.enclosure;
        if (i == 0) return s.max.enclosure;
        return all ? gram(i) : Interval{0.0, 0.0};
    }
    KappaInputs kappa_inputs(KappaConvention c, double rtol) const {
        KappaInputs in;
        in.rtol = rtol;
        in.full_rank = n;
        in.sigma_max = sigma(0);
        for (Eigen::Index i = 0; i < n; ++i)  // numerical_rank over sigma(i)
            if (sigma(i) > rtol * in.sigma_max) in.rank = i + 1;
        const Eigen::Index j = kappa_divisor_index(c, in.rank, n);
        in.sigma_min = sigma(j);
        in.max_enclosure = enclosure(0);
        in.min_enclosure = enclosure(j);
        return in;
    }
};

// Numerical rank of J in full mode from the Gram intervals: a value counts as nonzero only when
// its interval clears the threshold; values straddling it are noted (the rank is a lower bound).
void full_mode_rank(OperatorSpectrum& s, const Vec& all, double threshold, bool proven_full) {
    const Eigen::Index n = all.size();
    Eigen::Index unresolved = 0;
    s.rank = 0;
    for (Eigen::Index i = 0; i < n; ++i) {
        const Interval g = opspec::gram_interval(all[n - 1 - i], s.gram_error);
        if (g.lo > threshold)
            s.rank = i + 1;
        else if (g.hi > threshold)
            ++unresolved;
    }
    if (proven_full) s.rank = n;
    if (unresolved > 0 && !proven_full)
        s.notes.push_back(std::to_string(unresolved) +
                          " Gram values straddle the rank threshold: rank is a lower bound");
}

// What the auto fallback tells the user before it starts: why, what, and how long.
std::string fallback_notice(const OperatorSpectrum& s, Eigen::Index n, double seconds) {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "auto: the extremal path cannot prove full rank (sigma_min >= %.3g, threshold "
                  "%.3g); falling back to all eigenvalues of the %ld x %ld Gram matrix (dsyevd, "
                  "%.3g flops): expect about %.0f s",
                  s.min.enclosure.lo,
                  static_cast<double>(std::max(s.rows, s.cols)) *
                      std::numeric_limits<double>::epsilon() * s.max.enclosure.hi,
                  static_cast<long>(n), static_cast<long>(n), 4.0 * n * n * n / 3, seconds);
    return buf;
}

// The Gram matrix the engine works on: the caller's (checked) or assembled from products of J
// into G_own; refuses before allocating when G, its factor and a copy exceed max_bytes.
const Eigen::MatrixXd& engine_gram(const LinearOperator& J, const Eigen::MatrixXd* G_in,
                                   const LargeSvdOptions& opt, Eigen::MatrixXd& G_own,
                                   OperatorSpectrum& s) {
    const Eigen::Index n = J.rows();
    check_allocation(8.0 * 3.0 * n * n, opt.max_bytes,
                     "Gram matrix, its factor and a copy (" + std::to_string(n) + "^2)",
                     "max_bytes");
    if (G_in && (G_in->rows() != n || G_in->cols() != n))
        fail_data("operator_spectrum: G must be " + std::to_string(n) + "x" + std::to_string(n));
    if (G_in && !G_in->allFinite()) fail_data("operator_spectrum: G contains NaN or Inf");
    if (G_in) return *G_in;
    G_own = opspec::assemble_gram(J);
    if (!G_own.allFinite()) fail_data("operator_spectrum: J products are not finite");
    s.notes.push_back("G assembled from " + std::to_string(n) + " products J (J^T e_i)");
    return G_own;
}

// Seconds since the previous call (or since construction): the stages' timings note.
class Lap {
  public:
    double operator()() {
        const auto t = std::chrono::steady_clock::now();
        const double dt = std::chrono::duration<double>(t - last_).count();
        last_ = t;
        return dt;
    }

  private:
    std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// What the engine's stages hand each other.
struct Stages {
    LargeSvdMode mode = LargeSvdMode::full;  // opt.mode with auto resolved by size
    double rate = 1;                         // measured Cholesky flop/s (time estimates)
    opspec::GramEigs d;                      // extremal Ritz pairs of G
    Vec all;                                 // ascending eigenvalues of G (full mode)
    double t_chol = 0, t_lanczos = 0, t_full = 0;
    double smax = 0;  // refined sigma_max
};

const char* const kFullMethod =
    "G=JJ^T: LAPACK dsyevd (all) + Spectra Lanczos/shift-invert vectors";

// All eigenvalues of G (dsyevd), as the progress stage "eigensolve".
Vec all_eigenvalues(const Eigen::MatrixXd& G, const LargeSvdOptions& opt, double rate) {
    Vec all;
    opspec::with_heartbeat(opt.progress, "eigensolve", opspec::eigensolve_seconds(G.rows(), rate),
                           [&] { all = opspec::gram_eigenvalues(G); });
    return all;
}

// The Gram stage: the factor of G + tau I (lambda_max_est >= lambda_max), the extremal Ritz pairs,
// all eigenvalues in full mode; then the bounds the refinement uses (Gram and product errors).
Stages gram_stage(const LinearOperator& J, const Eigen::MatrixXd& G, opspec::CholShiftOp& chol,
                  double lambda_max_est, const LargeSvdOptions& opt, Lap& lap,
                  OperatorSpectrum& s) {
    const Eigen::Index n = J.rows();
    Stages e;
    e.mode = opt.mode;
    if (e.mode == LargeSvdMode::auto_select)
        e.mode = n <= opt.full_upto ? LargeSvdMode::full : LargeSvdMode::extremal;
    Rng rng(opt.seed);
    double tau = 0;
    const double rate0 =
        opt.progress ? opspec::measured_cholesky_rate(G, -lambda_max_est * 1e-8) : 1;
    opspec::with_heartbeat(opt.progress, "Cholesky", opspec::cholesky_seconds(n, rate0),
                           [&] { tau = opspec::factor_shifted(chol, lambda_max_est); });
    e.t_chol = lap();
    e.rate = e.t_chol > 0 ? opspec::cholesky_seconds(n, 1) / e.t_chol : rate0;  // flop/s
    e.d = opspec::extremal_eigs(J, G, chol, tau, rng, s.notes, opt.progress);
    e.t_lanczos = lap();
    if (e.mode == LargeSvdMode::full) {
        e.all = all_eigenvalues(G, opt, e.rate);
        s.method = kFullMethod;
    } else {
        s.method = "G=JJ^T: Spectra Lanczos (largest) + shift-invert at -tau (smallest)";
    }
    e.t_full = lap();
    s.mode = to_string(e.mode);
    // Gram error: estimate of ||fl(G) - J J^T|| x 10 + eigensolver backward error.
    s.gram_error = opspec::gram_error_bound(e.d.gram_est, n, e.d.top_vals[0]);
    s.product_rel_error = opt.product_rel_error > 0
                              ? opt.product_rel_error
                              : 4 * std::sqrt(static_cast<double>(n + J.cols())) * kUnitRoundoff;
    return e;
}

// Refinement of both ends (matrix-free J, J^T), then the certificate of sigma_min when
// opt.certify asks for one (its own progress stage); notes the stages' timings.
void refine_stage(const LinearOperator& J, const Eigen::MatrixXd& G,
                  const opspec::CholShiftOp& chol, const LargeSvdOptions& opt, Lap& lap, Stages& e,
                  OperatorSpectrum& s) {
    // in applications of J and J^T; the total is the most the steps allow (power steps: 2 + 3 per
    // step; inverse iteration: 2 + (4 + 2 per PCG iteration) per step), so the estimate of the
    // time left is an upper bound, and the stage ends at the count it took
    const long most = 2 + 3L * opt.refine_steps + 2 +
                      static_cast<long>(opt.refine_steps) * (4 + 2L * opt.pcg_max_iter);
    opspec::StageProgress refining(opt.progress, "refinement", "products", most);
    const double pe = s.product_rel_error;
    const Counting Jc(J, refining);
    const double pad = opspec::refine_max(Jc, e.d, s.gram_error, pe, opt.refine_steps, s.max);
    e.smax = s.max.sigma;
    opspec::refine_min(Jc, chol, e.d, s.gram_error, pe, e.smax, pad, opt.refine_steps,
                       opt.pcg_max_iter, s.min);
    refining.finish();
    opspec::certify_min(J, G, chol, opt, pad, e.rate, s);  // its own stage, "certify"
    const double t_refine = lap();
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "timings: dpotrf %.2f s, Lanczos %.2f s (%ld G products + %ld solves), "
                  "dsyevd %.2f s, refine+check %.2f s",
                  e.t_chol, e.t_lanczos, static_cast<long>(e.d.top_ops),
                  static_cast<long>(e.d.bot_ops), e.t_full, t_refine);
    s.notes.emplace_back(buf);
}

// The numerical rank and both kappas from the refined ends (and, in full mode, the Gram values);
// auto falls back to full mode when the extremal path cannot prove full rank.
void rank_and_kappa(const Eigen::MatrixXd& G, const LargeSvdOptions& opt, Stages& e,
                    OperatorSpectrum& s) {
    const Eigen::Index n = G.rows();
    const double eps = std::numeric_limits<double>::epsilon();
    const double t_def = static_cast<double>(std::max(s.rows, s.cols)) * eps;
    const double t_nz = opt.rtol < 0 ? t_def : opt.rtol;
    if (!(t_nz >= 0 && t_nz < 1))
        fail_data("operator_spectrum: rtol = " + value_text(t_nz) + " must lie in [0, 1)", "rtol");
    const bool proven_full = s.min.enclosure.lo > t_def * s.max.enclosure.hi;
    // auto: a (possibly) rank-deficient J needs the whole spectrum for rank and kappa_nz
    if (opt.mode == LargeSvdMode::auto_select && e.mode == LargeSvdMode::extremal && !proven_full &&
        n <= 4 * opt.full_upto) {
        if (opt.notice) opt.notice(fallback_notice(s, n, opspec::eigensolve_seconds(n, e.rate)));
        e.all = all_eigenvalues(G, opt, e.rate);
        s.method = kFullMethod;
        e.mode = LargeSvdMode::full;
        s.mode = to_string(e.mode);
        s.notes.emplace_back("auto: full rank not proven in extremal mode; fell back to full");
    }
    const bool full = e.mode == LargeSvdMode::full;
    if (full) {
        s.gram_sigma = e.all.reverse().cwiseMax(0.0).cwiseSqrt();
        full_mode_rank(s, e.all, t_def * e.smax, proven_full);
    } else {
        s.gram_sigma.resize(e.d.top_vals.size() + e.d.bot_vals.size());
        s.gram_sigma << e.d.top_vals.cwiseMax(0.0).cwiseSqrt(),
            e.d.bot_vals.reverse().cwiseMax(0.0).cwiseSqrt();
        s.rank = proven_full ? n : -1;
        if (!proven_full)
            s.notes.emplace_back(
                "extremal: full rank not proven; rank and kappa_nz unknown (use full mode)");
    }
    const KnownSpectrum known{s, full ? &e.all : nullptr, n, t_def * e.smax};
    const std::string method = "operator (" + s.mode + ")";
    s.strict = kappa_from_extremes(known.kappa_inputs(KappaConvention::strict, t_def),
                                   KappaConvention::strict, method);
    s.nz = kappa_from_extremes(known.kappa_inputs(KappaConvention::nz, t_nz), KappaConvention::nz,
                               method);
    if (!full && !proven_full) {  // kappa_nz needs the whole spectrum
        s.nz.value = std::numeric_limits<double>::quiet_NaN();
        s.nz.rank = -1;
        s.nz.enclosure = {1.0, std::numeric_limits<double>::infinity()};
    }
    const Kappa& kr = std::isfinite(s.strict.value) ? s.strict : s.nz;
    s.rel_error_bound = kr.value > 0 && std::isfinite(kr.enclosure.hi)
                            ? (kr.enclosure.hi - kr.enclosure.lo) / (2 * kr.value)
                            : std::numeric_limits<double>::infinity();
}

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
        s.notes.emplace_back("tall operator: the engine works on J^T (same singular values)");
        G_in = nullptr;
    }
    Eigen::MatrixXd G_own;
    const Eigen::MatrixXd& G = engine_gram(J, G_in, opt, G_own, s);
    s.gram_trace = G.trace();
    const double lambda_max_est = G.diagonal().maxCoeff() > 0 ? G.norm() : 0.0;  // >= lambda_max
    if (lambda_max_est == 0) fail_data("operator_spectrum: J = 0 (kappa undefined)");
    Lap lap;
    opspec::CholShiftOp chol(G);
    Stages e = gram_stage(J, G, chol, lambda_max_est, opt, lap, s);
    refine_stage(J, G, chol, opt, lap, e, s);
    rank_and_kappa(G, opt, e, s);
    s.method += "; refined by power steps / PCG inverse iteration with matrix-free J, J^T";
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return s;
}

}  // namespace attnspec
