// The double-double certificate's factorizations (proofs/spectral_enclosure.md §8), in the order
// they run: G~ - tau I + c w w^T with the estimate's vector (Temple's bound after one
// factorization), then the ladder of plain shifts G~ - tau I with inverse-iteration refinements.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "attnspec/base/dd_accumulate.hpp"
#include "attnspec/base/interval_ops.hpp"
#include "attnspec/base/rounding.hpp"
#include "dd_internal.hpp"

namespace attnspec::ddcert {

namespace {
// The factorizations and their bound on a double-double Gram, in the order they run: one of
// G~ - tau I + c w w^T with the estimate's vector w (Temple's bound after one factorization),
// then the ladder of plain shifts G~ - tau I (a failed one lowers tau; a failure at the last
// pivot or a success at a coarse shift refines the estimate by inverse iteration). r is the
// certificate being built.
class Ladder {
  public:
    Ladder(const CoreInput& in, DdCertifiedMin& r)
        : in_(in), g_(in.g), opt_(in.opt), n_(in.g.n), r_(r), rho_gram_(in.g.rho) {
        double hmax = 0;  // the largest tree height over the factor's columns (not monotone in j)
        for (Eigen::Index j = 0; j < n_; ++j)
            hmax = std::max(hmax, dd::blocked_height(static_cast<std::size_t>(j), 1));
        cl_ = dd::error_constant(hmax) * (1 + 4 * kUnitRoundoff);  // its P part: c_L l_i l_j
        margin_ = opt_.first_margin;
    }

    void run() {
        if (opt_.temple && opt_.augmented_margin > 0 && in_.u_est.size() == n_ &&
            in_.u_est.allFinite() && in_.u_est.squaredNorm() > 0 && r_.attempts < opt_.max_attempts)
            augmented();
        while (!done_ && r_.attempts < opt_.max_attempts)
            if (!plain_step()) break;
    }

  private:
    void set_temple(const TempleResult& tr, double tau);
    void augmented();
    bool plain_step();
    bool after_failure(const Factor& f, double tau, double factor_seconds);
    bool temple_at_last_pivot(const Factor& f, double tau, const Eigen::VectorXd& x);
    bool after_success(const Factor& f, double tau, double factor_seconds);
    // one line per further factorization: why, and how long it should take
    void announce(const std::string& why, double factor_seconds) const {
        if (!opt_.notice || r_.attempts >= opt_.max_attempts) return;
        char buf[300];
        std::snprintf(buf, sizeof buf,
                      "certify (double-double): factorization %d %s; one more, about %.0f s",
                      r_.attempts, why.c_str(), factor_seconds);
        opt_.notice(buf);
    }

    const CoreInput& in_;
    const DdGram& g_;
    const DdCertifyOptions& opt_;
    const Eigen::Index n_;
    DdCertifiedMin& r_;
    const double rho_gram_;
    double cl_ = 0, margin_ = 0;
    bool done_ = false, refined_ = false;
};

void Ladder::set_temple(const TempleResult& tr, double tau) {
    r_.certified = true;
    r_.bound = "temple";
    r_.tau = tau, r_.rho = tr.rho, r_.rho_gram = rho_gram_, r_.rho_factor = tr.rho_factor;
    r_.lambda_lo = tr.lo;
    r_.sigma_lo = std::max(0.0, iv::down(iv::down(std::sqrt(tr.lo)) - opt_.product_abs_error));
    r_.lambda_hi = tr.hi;
    r_.sigma_hi = iv::up(iv::up(std::sqrt(tr.hi)) + opt_.product_abs_error);
    r_.lambda_est = tr.mu;
    r_.u = tr.u;
    r_.failed_column = -1;
    r_.notes.push_back(
        fmt("certify (double-double): Temple: lambda_min in [%.12g, %.12g], sigma_min in "
            "[%.12g, %.12g]",
            r_.lambda_lo, r_.lambda_hi, r_.sigma_lo, r_.sigma_hi));
}

// First, with the estimate's vector w: G~ - tau I + c w w^T at tau = lambda_est (1 +
// opt.augmented_margin), just above lambda_min, and c = lambda_est. Its success proves
// lambda_2 >= tau - rho, and Temple's bound at the inverse-iteration vector encloses lambda_min
// with one factorization, however far down the factor the plain one would have failed.
void Ladder::augmented() {
    ++r_.attempts;
    const Eigen::VectorXd w = in_.u_est / in_.u_est.norm();
    const double tau = r_.lambda_est * (1 + opt_.augmented_margin), c = r_.lambda_est;
    double hmax2 = 0;  // the chains carry one more product (c w_i w_j)
    for (Eigen::Index j = 0; j < n_; ++j)
        hmax2 = std::max(hmax2, dd::blocked_height(static_cast<std::size_t>(j), 2));
    const auto tf = std::chrono::steady_clock::now();
    const Factor f = factor(g_, tau, in_.threads, &w, c);
    const double factor_seconds = seconds_since(tf);
    if (f.ok) {
        const auto tt = std::chrono::steady_clock::now();
        const TempleResult tr = temple_from_augmented(
            g_, f, tau, dd::error_constant(hmax2) * (1 + 4 * kUnitRoundoff), opt_.bound_scale);
        char buf[700];
        std::snprintf(
            buf, sizeof buf,
            "certify (double-double): G - tau I + c w w^T factored at tau = lambda_est (1 + "
            "%.3g), c = lambda_est, w the estimate's vector (%.2f s): lambda_2 >= tau - rho = "
            "%.12g (rho = %.3g: Gram %.3g, factor %.3g); Temple at %d double-double "
            "inverse-iteration step(s) (Sherman-Morrison): Rayleigh quotient %.12g, residual "
            "<= %.3g%s (%.2f s)",
            opt_.augmented_margin, factor_seconds, tr.beta, tr.rho, rho_gram_, tr.rho_factor,
            tr.steps, tr.mu, tr.R,
            tr.ok ? "" : ": no bound (the Rayleigh quotient is not below lambda_2's bound)",
            seconds_since(tt));
        r_.notes.emplace_back(buf);
        if (tr.ok) {
            set_temple(tr, tau);
            done_ = true;
        }
    } else {
        // before its last pivot: at least two eigenvalues of G - tau I + c w w^T are below
        // ~0, so lambda_2 < tau or w is far from lambda_min's vector; either way lambda_est is
        // well above lambda_min and the plain shifts start at the coarse margin 0.5
        if (f.failed_column < n_ - 1) margin_ = std::max(margin_, 0.5);
        r_.notes.push_back(
            fmt("certify (double-double): G - tau I + c w w^T at tau = lambda_est (1 + %.3g) "
                "not positive definite (pivot %.0f; the estimate's vector is not close to "
                "lambda_min's, or lambda_2 is within the margin): the plain factorizations "
                "follow, from the margin %.3g",
                opt_.augmented_margin, static_cast<double>(f.failed_column), margin_));
    }
    if (!done_ && opt_.notice && r_.attempts < opt_.max_attempts)
        opt_.notice(
            fmt("certify (double-double): factorization 1 (with the estimate's vector) "
                "gave no bound; one more, about %.0f s",
                factor_seconds));
}

// One plain factorization of G~ - tau I, tau = lambda_est (1 - margin). False: stop the ladder.
bool Ladder::plain_step() {
    ++r_.attempts;
    const double tau = r_.lambda_est * (1 - margin_);
    const auto tf = std::chrono::steady_clock::now();
    const Factor f = factor(g_, tau, in_.threads);
    const double factor_seconds = seconds_since(tf);
    return f.ok ? after_success(f, tau, factor_seconds) : after_failure(f, tau, factor_seconds);
}

// Failed at the last pivot (G - tau I has one negative eigenvalue, tau just above lambda_min):
// with the inertia it proves, Temple's bound at the inverse-iteration vector x certifies
// lambda_min at once. True when it did (the ladder stops).
bool Ladder::temple_at_last_pivot(const Factor& f, double tau, const Eigen::VectorXd& x) {
    const auto tt = std::chrono::steady_clock::now();
    const TempleResult tr = temple_from_last_pivot(g_, f, tau, cl_, x, opt_.bound_scale);
    char buf[700];
    std::snprintf(buf, sizeof buf,
                  "certify (double-double): only the last pivot failed (%.3g) at tau = "
                  "lambda_est (1 - %.3g): lambda_2 >= tau - rho = %.12g (one negative "
                  "eigenvalue; rho = %.3g: Gram %.3g, factor %.3g); Temple at %d double-double "
                  "inverse-iteration step(s): Rayleigh quotient %.12g, residual <= %.3g%s "
                  "(%.2f s)",
                  f.last_pivot, margin_, tr.beta, tr.rho, rho_gram_, tr.rho_factor, tr.steps, tr.mu,
                  tr.R,
                  tr.ok ? ""
                        : ": no bound (the Rayleigh quotient is not below lambda_2's bound "
                          "by enough)",
                  seconds_since(tt));
    r_.notes.emplace_back(buf);
    if (tr.ok && (!r_.certified || tr.lo > r_.lambda_lo)) {
        set_temple(tr, tau);
        return true;
    }
    return false;
}

// A failed factorization: Temple's bound or a refined estimate after a failure at the last
// pivot, else tau lowered down the ladder. False: stop.
bool Ladder::after_failure(const Factor& f, double tau, double factor_seconds) {
    r_.failed_column = f.failed_column;
    const bool last_pivot = f.failed_column == n_ - 1 && f.last_pivot < 0;
    // failed at the last pivot: inverse iteration with this indefinite factor finds lambda_min's
    // vector
    Eigen::VectorXd x;
    if (last_pivot) x = inverse_iterate(f, n_, r_.u.size() == n_ ? r_.u : in_.u_est);
    if (last_pivot && opt_.temple && x.allFinite() && temple_at_last_pivot(f, tau, x)) return false;
    r_.notes.push_back(
        fmt("certify (double-double): pivot %.0f of the factor of G - tau I "
            "not positive at tau = lambda_est (1 - %.3g): lowering tau",
            static_cast<double>(f.failed_column), margin_));
    if (r_.certified) return false;  // the refined shift failed: keep the coarse certificate
    r_.tau = tau;
    // ... and the next shift goes just below its Rayleigh quotient instead of down the ladder
    if (!refined_ && last_pivot) {
        const double rq = x.allFinite() ? in_.rayleigh(x) : -1;
        refined_ = rq > 0 && rq < r_.lambda_est;  // spent only when it refined
        r_.notes.push_back(
            fmt("certify (double-double): only the last pivot failed (%.3g); inverse "
                "iteration with that factor: Rayleigh quotient %.12g (was %.12g)",
                f.last_pivot, rq, r_.lambda_est));
        if (rq > 0 && rq < r_.lambda_est) {
            r_.u = x;
            r_.lambda_est = rq;
            margin_ = opt_.first_margin;
            announce("failed at its last pivot (the shift was just above lambda_min)",
                     factor_seconds);
            return true;
        }
    }
    if (!(margin_ > 0) || margin_ > 0.97) return false;
    margin_ = margin_ < 1e-6  ? margin_ * 25
              : margin_ < 0.5 ? std::min(0.5, margin_ * 100)
                              : 1 - (1 - margin_) / 5;  // 0.5, 0.9, 0.98
    announce("failed at pivot " + std::to_string(f.failed_column) +
                 " (the shift was above lambda_min): lowering it",
             factor_seconds);
    return true;
}

// A factorization that succeeded: lambda_min >= tau - rho; after a coarse shift, inverse
// iteration with its factor and one more attempt just below the new Rayleigh quotient. False:
// stop.
bool Ladder::after_success(const Factor& f, double tau, double factor_seconds) {
    r_.failed_column = -1;
    Eigen::VectorXd l(n_);
    for (Eigen::Index i = 0; i < n_; ++i) {
        double sq = 0;
        for (Eigen::Index k = 0; k <= i; ++k) sq += f.Lh[idx(i, k, n_)] * f.Lh[idx(i, k, n_)];
        l[i] = std::sqrt(sq) * (1 + gamma_n(static_cast<double>(n_) + 4));
    }
    const double rho_factor = collatz_wielandt(f.Bs, n_, cl_, l);
    const double rho = opt_.bound_scale * kBoundSafety * iv::up(rho_gram_ + rho_factor);
    const double lo = iv::down(tau - rho);
    if (!(lo > 0)) {
        r_.notes.push_back(
            fmt("certify (double-double): rounding bound rho = %.3g exceeds "
                "tau = %.3g: out of reach",
                rho, tau));
        if (!r_.certified) r_.tau = tau, r_.rho = rho, r_.rho_gram = rho_gram_;
        return false;
    }
    if (!r_.certified || lo > r_.lambda_lo) {
        r_.certified = true;
        r_.bound = "cholesky";
        r_.tau = tau, r_.rho = rho, r_.rho_gram = rho_gram_, r_.rho_factor = rho_factor;
        r_.lambda_lo = lo;
        r_.sigma_lo = std::max(0.0, iv::down(iv::down(std::sqrt(lo)) - opt_.product_abs_error));
    }
    // a coarse shift (the estimate was well above lambda_min): inverse iteration with this
    // factor, then one more attempt just below the new Rayleigh quotient
    if (refined_ || margin_ <= opt_.first_margin || r_.attempts >= opt_.max_attempts) return false;
    refined_ = true;
    const Eigen::VectorXd x = inverse_iterate(f, n_, in_.u_est);
    const double rq = x.allFinite() ? in_.rayleigh(x) : -1;
    r_.notes.push_back(
        fmt("certify (double-double): certified at the coarse shift lambda_est "
            "(1 - %.3g); inverse iteration with its factor: Rayleigh quotient "
            "%.12g (was %.12g)",
            margin_, rq, r_.lambda_est));
    if (!(rq > 0 && rq < r_.lambda_est)) return false;
    r_.u = x;
    r_.lambda_est = rq;
    margin_ = opt_.first_margin;
    announce("certified at a coarse shift; inverse iteration refined the estimate", factor_seconds);
    return true;
}

// The certificate's last note: the outcome, its shift and bound, and the times.
void summary_note(DdCertifiedMin& r, bool gram_by_caller) {
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "certify (double-double): %s after %d factorization(s), tau = %.12g "
                  "(lambda_est %.12g), rho = %.3g (Gram %.3g, factor %.3g) = %.3g tau; %s "
                  "%.2f s, factorizations %.2f s",
                  r.certified ? "certified" : "no certificate", r.attempts, r.tau, r.lambda_est,
                  r.rho, r.rho_gram, r.rho_factor, r.rho / r.tau,
                  gram_by_caller ? "Rayleigh quotient" : "Gram", r.seconds_gram, r.seconds_chol);
    r.notes.emplace_back(buf);
}

}  // namespace

DdCertifiedMin certify_core(const CoreInput& in, double lambda_est, DdCertifiedMin r,
                            std::chrono::steady_clock::time_point t0) {
    const Eigen::Index n = in.g.n;
    r.lambda_est = lambda_est;
    if (in.u_est.size() == n && in.u_est.squaredNorm() > 0) {
        const double rq = in.rayleigh(in.u_est);
        if (rq > 0 && std::isfinite(rq)) r.lambda_est = rq;
    }
    if (in.gram_by_caller) r.seconds_gram = seconds_since(t0);  // the Rayleigh quotient's time
    if (!(r.lambda_est > 0)) {
        r.notes.emplace_back("certify (double-double): the Rayleigh quotient is not positive");
        return r;
    }
    Ladder ladder(in, r);
    const auto tc = std::chrono::steady_clock::now();
    ladder.run();
    r.seconds_chol = seconds_since(tc);
    if (r.certified) r.failed_column = -1;
    r.seconds = seconds_since(t0);
    summary_note(r, in.gram_by_caller);
    return r;
}

}  // namespace attnspec::ddcert
