// The engine's use of the certified sigma_min bounds (operator_spectrum,
// proofs/spectral_enclosure.md §6-8): when, which method, and how the result enters the sigma_min
// enclosure.
#include "attnspec/spectral/certify/policy.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "../operator_spectrum_internal.hpp"
#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/base/enum_names.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/interval_ops.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/spectral/certify/deflated.hpp"
#include "attnspec/spectral/certify/double_double.hpp"
#include "attnspec/spectral/certify/plain.hpp"
#include "attnspec/spectral/engine_progress.hpp"

namespace attnspec {

namespace {
constexpr EnumName<CertifyMode> kCertifyModeNames[] = {{CertifyMode::auto_select, "auto"},
                                                       {CertifyMode::always, "always"},
                                                       {CertifyMode::never, "never"}};
}  // namespace

const char* to_string(CertifyMode m) { return enum_name(m, kCertifyModeNames); }
CertifyMode certify_mode_from_string(const std::string& s) {
    return enum_from_name(s, kCertifyModeNames, "certify mode", "certify");
}

}  // namespace attnspec

namespace attnspec::opspec {

namespace {
// auto runs a certificate up to 5e11 flops: the plain one's 4 n^2 m (the (64, 128, 32) head:
// 2e11, ~30 s on two loaded cores), the deflated one's dsyevr + two dpotrf (~2 n^3: n <= 6300);
// larger ones only with --certify always.
constexpr double kAutoFlops = 5e11;
constexpr Eigen::Index kDeflatedPairs = 1024;  // DeflatedOptions::k_max

void note_bound(const char* what, double lo, const RefinedTriplet& t,
                std::vector<std::string>& notes) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: sigma_min >= %.12g, %.3g relative below sigma", what, lo,
                  (t.sigma - lo) / t.sigma);
    notes.emplace_back(buf);
}

// Plain shift test on the Gram of the rows of J (§6). True when it raised or confirmed t's lower
// end.
bool certify_plain(const LinearOperator& J, const LargeSvdOptions& opt, double pad,
                   RefinedTriplet& t, std::vector<std::string>& notes) {
    PlainCertifyOptions co;
    co.product_abs_error = pad;
    co.max_bytes = opt.max_bytes;
    const CertifiedMin r = certified_sigma_min(J, t.sigma, t.u, co);
    notes.push_back(r.method + "; minus the product error " + value_text(pad) + " (A2)");
    notes.insert(notes.end(), r.notes.begin(), r.notes.end());
    if (!r.certified) return false;
    note_bound("certify", r.sigma_lo, t, notes);
    if (r.sigma_lo > t.enclosure.hi) {
        notes.emplace_back("certify: bound above the enclosure's upper end (assumptions violated)");
        return false;
    }
    if (r.sigma_lo > t.enclosure.lo) {
        t.enclosure.lo = r.sigma_lo;
        t.basis += "; lower end: rump-cholesky";
    }
    return true;
}

// auto runs the double-double certificate (§8) up to this many multiply-adds (n^2 m / 2 for the
// Gram, n^3 / 6 per factorization): the (64, 128, 32) head is 2.7e10.
constexpr double kAutoDdUpdates = 6e10;
// Its rate per thread, for the notice: measured 2.1e9 (Gram) and 0.9e9 (factor) multiply-adds/s
// per thread at the (64, 128, 32) head (bench_certified_kappa, proofs/spectral_enclosure.md §8).
constexpr double kDdRatePerThread = 1.5e9;

// The double-double certificate's work (multiply-adds, one factorization) and bytes: from the
// rows of J, or from the structured Gram when the caller gives one.
double dd_updates(const LinearOperator& J, const LargeSvdOptions& opt) {
    if (!opt.certify.dd_gram) return dd_certify_updates(J.rows(), J.cols());
    const double n = static_cast<double>(J.rows());
    return opt.certify.dd_gram_updates + n * n * n / 6;
}
// Bytes on top of what the engine holds meanwhile (its Gram and the factor of G + tau I, 16 n^2),
// which count against max_bytes too.
double dd_bytes(const LinearOperator& J, const LargeSvdOptions& opt) {
    const double n = static_cast<double>(J.rows()), held = 16 * n * n;
    if (!opt.certify.dd_gram) return dd_certify_bytes(J.rows(), J.cols()) + held;
    // pairs in dd_gram_bytes; factor and bound
    return opt.certify.dd_gram_bytes + 24 * n * n + held;
}

// The notice before the double-double certificate: what it factors and its expected time.
void notice_dd(const LinearOperator& J, const LargeSvdOptions& opt, int threads, double seconds) {
    const double nr = static_cast<double>(J.rows());
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "certify: double-double Gram (%s) and Cholesky of the %ld x %ld Gram (%.3g "
                  "multiply-adds, %.3g GB with the engine's): expect about %.2g s, and %.2g s "
                  "more for each further factorization when the first gives no bound (the "
                  "engine's vector far from lambda_min's)",
                  opt.certify.dd_gram ? "from the operator's structure" : "from the rows of J",
                  static_cast<long>(J.rows()), static_cast<long>(J.rows()), dd_updates(J, opt),
                  dd_bytes(J, opt) / 1e9, seconds, nr * nr * nr / 6 / (kDdRatePerThread * threads));
    opt.notice(buf);
}

// The double-double certificate on the structured Gram (opt.certify.dd_gram): a proved
// ||J~ - J|| from the caller replaces A2's pad in o (factor_error, else NaN).
DdCertifiedMin certify_structured_dd(const LargeSvdOptions& opt, double pad, int threads,
                                     const RefinedTriplet& t, DdCertifyOptions& o,
                                     double& factor_error) {
    const auto tg = std::chrono::steady_clock::now();
    const DdGram g = opt.certify.dd_gram(threads);
    const double gram_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - tg).count();
    // a proved ||J~ - J|| from the caller replaces A2's pad on both ends
    if (std::isfinite(g.factor_error) && g.factor_error >= 0) {
        factor_error = g.factor_error;
        o.product_abs_error = factor_error;
    }
    DdCertifiedMin r = certify_gram_dd(g, t.sigma * t.sigma, t.u, o);  // sqrt(lambda_lo) - pad
    r.seconds_gram = gram_seconds;
    r.seconds += gram_seconds;
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "certify (double-double): Gram from the operator's structure in %.2f s, "
                  "its error bound rho = %.3g",
                  gram_seconds, g.rho);
    std::string note = buf;
    if (std::isfinite(factor_error))
        note += "; the factors' error ||J~ - J|| <= " + value_text(factor_error) +
                " (A2's pad was " + value_text(pad) + ")";
    r.notes.push_back(note);
    return r;
}

// The double-double result into t: its lower end, the inverse-iteration triplet when the engine's
// vector was far off, and both ends when the factors' error is proved (factor_error finite). True
// when it raised or confirmed t's lower end.
bool apply_dd(const LinearOperator& J, const DdCertifiedMin& r, double pad, double factor_error,
              RefinedTriplet& t, std::vector<std::string>& notes) {
    const bool proved = std::isfinite(factor_error);
    notes.push_back(r.method + (proved ? "; minus the factors' error " + value_text(factor_error) +
                                             " (proved from the factors; assumes expl within 2 ulp)"
                                       : "; minus the product error " + value_text(pad) + " (A2)"));
    notes.insert(notes.end(), r.notes.begin(), r.notes.end());
    if (!r.certified) return false;
    if (r.sigma_lo > t.enclosure.hi && !(proved && std::isfinite(r.sigma_hi))) {
        notes.emplace_back(
            "certify (double-double): bound above the enclosure's upper end (assumptions "
            "violated)");
        return false;
    }
    if (r.sigma_lo > t.enclosure.lo) {
        t.enclosure.lo = r.sigma_lo;
        t.basis += r.bound == "temple" ? "; lower end: double-double temple"
                                       : "; lower end: double-double cholesky";
    }
    // the inverse-iteration vector (when the engine's was far off) gives a smaller sigma
    if (r.u.size() == J.rows()) {
        RefinedTriplet b = t;
        make_triplet(J, r.u, b);
        if (b.sigma < t.sigma) {
            notes.push_back(
                "certify (double-double): sigma_min's triplet from its inverse "
                "iteration (sigma " +
                value_text(b.sigma) + ", was " + value_text(t.sigma) + ")");
            set_rho(b, pad);
            b.enclosure.hi = std::min(t.enclosure.hi, iv::up(b.sigma + pad));
            t = b;
        }
    }
    // a proved ||J~ - J||: both ends of sigma_min's enclosure from the double-double Gram (the
    // lower from the factorization, the upper from the vector's Rayleigh quotient), without A2,
    // when that is narrower than the engine's (or the engine's misses it); the point value is
    // kept inside
    const bool disjoint = r.sigma_lo > t.enclosure.hi || r.sigma_hi < t.enclosure.lo;
    if (proved && std::isfinite(r.sigma_hi) && r.sigma_hi >= r.sigma_lo &&
        (disjoint || r.sigma_hi - r.sigma_lo < t.enclosure.hi - t.enclosure.lo)) {
        if (disjoint)
            notes.emplace_back(
                "certify (double-double): the engine's enclosure (A2) does not meet the proved "
                "one; the proved one is kept");
        t.enclosure.lo = r.sigma_lo;
        t.enclosure.hi = r.sigma_hi;
        t.basis += "; both ends: double-double (factors' error proved)";
        if (!(t.sigma >= t.enclosure.lo && t.sigma <= t.enclosure.hi)) {
            const double was = t.sigma;
            t.sigma = std::clamp(std::sqrt(r.lambda_est), t.enclosure.lo, t.enclosure.hi);
            notes.push_back("certify (double-double): sigma_min's value " + value_text(was) +
                            " (double products) lies outside the proved enclosure; replaced by "
                            "the square root of the double-double Rayleigh quotient, " +
                            value_text(t.sigma));
        }
    }
    note_bound("certify (double-double)", r.sigma_lo, t, notes);
    return true;
}

// The double-double shift test (§8) on the Gram of the rows of J or on the structured Gram. True
// when it raised or confirmed t's lower end.
bool certify_dd(const LinearOperator& J, const LargeSvdOptions& opt, double pad, RefinedTriplet& t,
                std::vector<std::string>& notes) {
    DdCertifyOptions o;
    o.product_abs_error = pad;
    o.max_bytes = opt.max_bytes;
    o.notice = opt.notice;
    const int threads = std::max(1, blas_threads());
    const double seconds = dd_updates(J, opt) / (kDdRatePerThread * threads);
    if (opt.notice) notice_dd(J, opt, threads, seconds);
    DdCertifiedMin r;
    double factor_error = std::numeric_limits<double>::quiet_NaN();
    with_heartbeat(opt.progress, "certify", seconds, [&] {
        r = opt.certify.dd_gram ? certify_structured_dd(opt, pad, threads, t, o, factor_error)
                                : certified_sigma_min_dd(J, t.sigma, t.u, o);
    });
    return apply_dd(J, r, pad, factor_error, t, notes);
}

// The deflated certificate (§7) when the shift tests failed or could not run (dd_fits /
// plain_fits: which of them ran, for auto's note), as many pairs as fit max_bytes; auto runs it
// up to its flop cap. Raises or narrows t on success.
void certify_deflated_min(const LinearOperator& J, const Eigen::MatrixXd& G,
                          const CholShiftOp& chol, const LargeSvdOptions& opt, double pad,
                          double rate, bool dd_fits, bool plain_fits, OperatorSpectrum& s) {
    RefinedTriplet& t = s.min;
    std::vector<std::string>& notes = s.notes;
    const bool always = opt.certify.mode == CertifyMode::always;
    const double n = static_cast<double>(J.rows());
    // as many deflated pairs as fit max_bytes (at most kDeflatedPairs, at least 16)
    Eigen::Index kd = std::min<Eigen::Index>(kDeflatedPairs, J.rows() - 1);
    while (kd > 16 && deflated_bytes(J.rows(), J.cols(), kd) > opt.max_bytes) kd -= kd / 8;
    const double dbytes = deflated_bytes(J.rows(), J.cols(), kd);
    const bool iterative = J.rows() > DeflatedOptions{}.dsyevr_upto;
    // dsyevr + two dpotrf, or block inverse iteration (~3 steps of 2 n^2 K at K = 256) + dpotrf
    const double dflops = iterative ? 2 * n * n * n / 3 + 6 * n * n * 256 : 2 * n * n * n;
    const double seconds =
        (iterative ? 0 : eigensolve_seconds(J.rows(), rate)) + 2 * cholesky_seconds(J.rows(), rate);
    if (!always && (dbytes > opt.max_bytes || dflops > kAutoFlops)) {
        char buf[300];
        std::snprintf(buf, sizeof buf,
                      "certify (auto): %s; the deflated certificate needs %.3g GB (max_bytes %.3g "
                      "GB) and ~%.3g flops (auto's cap %.3g, about %.0f s here); --certify always "
                      "runs it (exit 65 above max_bytes)",
                      dd_fits      ? "the double-double shift test failed"
                      : plain_fits ? "the plain shift test failed"
                                   : "the shift tests skipped",
                      dbytes / 1e9, opt.max_bytes / 1e9, dflops, kAutoFlops, seconds);
        notes.emplace_back(buf);
        return;
    }
    DeflatedOptions d;
    d.product_rel_error = s.product_rel_error;
    d.sigma_max_hi = s.max.enclosure.hi;
    d.gram_error = s.gram_error;
    d.max_bytes = opt.max_bytes;
    d.k_max = kd;
    d.shifted_solve = [&chol](Eigen::MatrixXd& X) { chol.solve_block(X); };
    if (opt.notice) {
        char buf[200];
        std::snprintf(buf, sizeof buf,
                      "certify: deflated certificate (%s + dpotrf of the %ld x %ld Gram, %.3g "
                      "flops): expect about %.0f s",
                      iterative ? "block inverse iteration" : "dsyevr", static_cast<long>(J.rows()),
                      static_cast<long>(J.rows()), dflops, seconds);
        opt.notice(buf);
    }
    DeflatedMin r;
    with_heartbeat(opt.progress, "certify", seconds, [&] { r = certify_deflated(J, G, d); });
    notes.push_back(r.method +
                    "; A2 for the products, the engine's Gram error (A1) only in the "
                    "inertia certificate's margin");
    notes.insert(notes.end(), r.notes.begin(), r.notes.end());
    if (!r.certified) return;
    note_bound("certify (deflated)", r.sigma_lo, t, notes);
    if (r.sigma_lo > t.enclosure.hi || r.sigma_hi < t.enclosure.lo) {
        notes.emplace_back(
            "certify (deflated): disjoint from the engine's enclosure (assumptions violated)");
        return;
    }
    if (r.sigma_lo > t.enclosure.lo) {
        t.enclosure.lo = r.sigma_lo;
        t.basis += "; lower end: deflated rump";
    }
    if (r.sigma_hi < t.enclosure.hi) {
        t.enclosure.hi = r.sigma_hi;
        t.basis += "; upper end: deflated rump";
    }
    // the block's graded vector is a better estimate than a refined vector outside the enclosure
    RefinedTriplet b = t;
    make_triplet(J, r.u, b);
    if (b.sigma < t.sigma) {
        notes.push_back("certify (deflated): sigma_min's triplet from the Ritz block (sigma " +
                        value_text(b.sigma) + ", was " + value_text(t.sigma) + ")");
        set_rho(b, pad);
        t = b;
    }
}
}  // namespace

void certify_min(const LinearOperator& J, const Eigen::MatrixXd& G, const CholShiftOp& chol,
                 const LargeSvdOptions& opt, double pad, double rate, OperatorSpectrum& s) {
    RefinedTriplet& t = s.min;
    std::vector<std::string>& notes = s.notes;
    if (opt.certify.mode == CertifyMode::never) return;
    const double width = (t.enclosure.hi - t.enclosure.lo) / (2 * t.sigma);
    const bool needed = !(t.enclosure.lo > 0) || !(width <= 1e-6);
    const bool always = opt.certify.mode == CertifyMode::always;
    if (!always && !needed) return;
    const double n = static_cast<double>(J.rows()), m = static_cast<double>(J.cols());
    const double bytes = 8.0 * (3 * n * m + 3 * n * n), flops = 4 * n * n * m;
    // the plain test needs lambda_min above its slack ~ n u max_i ||J_i||^2 (§6, "The limit")
    const double slack_est = n * kUnitRoundoff * s.max.enclosure.hi * s.max.enclosure.hi;
    const bool plain_hopeless = t.sigma * t.sigma <= slack_est;
    const bool plain_fits = bytes <= opt.max_bytes && (always || flops <= kAutoFlops);
    // double-double first where it fits: its rounding is ~(n/8)^2 u^2 against the plain test's
    // n u, so it resolves sigma_min where the plain one cannot, at a similar cost
    const CertifyMethod method = opt.certify.method;
    const bool auto_method = method == CertifyMethod::auto_select;
    const bool dd_fits = (auto_method || method == CertifyMethod::double_double) &&
                         dd_bytes(J, opt) <= opt.max_bytes &&
                         (always || dd_updates(J, opt) <= kAutoDdUpdates);
    // a coarse double-double bound (the engine's vector was far off) leaves room for §7
    if (dd_fits && certify_dd(J, opt, pad, t, notes) &&
        (method != CertifyMethod::auto_select || t.enclosure.lo >= (1 - 1e-4) * t.sigma))
        return;
    const bool plain_wanted =
        method == CertifyMethod::plain || (auto_method && !dd_fits && !plain_hopeless);
    if (plain_wanted && plain_fits && certify_plain(J, opt, pad, t, notes)) return;
    if (!(auto_method || method == CertifyMethod::deflated)) return;

    certify_deflated_min(J, G, chol, opt, pad, rate, dd_fits, plain_fits, s);
}

}  // namespace attnspec::opspec
