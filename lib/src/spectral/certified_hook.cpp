// The engine's use of the certified sigma_min bound (operator_spectrum,
// proofs/spectral_enclosure.md §6): when, and how the result enters the sigma_min enclosure.
#include <cmath>
#include <cstdio>

#include "attnspec/base/errors.hpp"
#include "operator_spectrum_internal.hpp"

namespace attnspec::opspec {

namespace {
// auto runs the certificate up to 4 n^2 m = 5e11 flops (the (64, 128, 32) head: 2e11, ~30 s on
// two loaded cores); larger ones only with --certify always.
constexpr double kAutoFlops = 5e11;
}  // namespace

void certify_min(const LinearOperator& J, const LargeSvdOptions& opt, double pad, RefinedTriplet& t,
                 std::vector<std::string>& notes) {
    if (opt.certify == CertifyMode::never) return;
    const double width = (t.enclosure.hi - t.enclosure.lo) / (2 * t.sigma);
    const bool needed = !(t.enclosure.lo > 0) || !(width <= 1e-6);
    if (opt.certify == CertifyMode::auto_select && !needed) return;
    const double n = static_cast<double>(J.rows()), m = static_cast<double>(J.cols());
    const double bytes = 8.0 * (3 * n * m + 3 * n * n), flops = 4 * n * n * m;
    if (opt.certify == CertifyMode::auto_select && (bytes > opt.max_bytes || flops > kAutoFlops)) {
        char buf[240];
        std::snprintf(buf, sizeof buf,
                      "certify (auto): skipped, the rows of J and their split need %.3g GB "
                      "(max_bytes %.3g GB) and %.3g flops (auto's cap %.3g); --certify always "
                      "runs it (exit 65 above max_bytes)",
                      bytes / 1e9, opt.max_bytes / 1e9, flops, kAutoFlops);
        notes.emplace_back(buf);
        return;
    }
    CertifyOptions co;
    co.product_abs_error = pad;
    co.max_bytes = opt.max_bytes;
    const CertifiedMin r = certified_sigma_min(J, t.sigma, t.u, co);
    notes.push_back(r.method + "; minus the product error " + value_text(pad) + " (A2)");
    notes.insert(notes.end(), r.notes.begin(), r.notes.end());
    if (!r.certified) return;
    char buf[160];
    std::snprintf(buf, sizeof buf, "certify: sigma_min >= %.12g, %.3g relative below sigma",
                  r.sigma_lo, (t.sigma - r.sigma_lo) / t.sigma);
    notes.emplace_back(buf);
    if (r.sigma_lo > t.enclosure.hi) {
        notes.emplace_back("certify: bound above the enclosure's upper end (assumptions violated)");
        return;
    }
    if (r.sigma_lo > t.enclosure.lo) {
        t.enclosure.lo = r.sigma_lo;
        t.basis += "; lower end: rump-cholesky";
    }
}

}  // namespace attnspec::opspec
