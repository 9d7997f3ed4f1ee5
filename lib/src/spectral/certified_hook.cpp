// The engine's use of the certified sigma_min bound (operator_spectrum,
// proofs/spectral_enclosure.md §6): when, and how the result enters the sigma_min enclosure.
#include <cmath>
#include <cstdio>

#include "attnspec/base/errors.hpp"
#include "operator_spectrum_internal.hpp"

namespace attnspec::opspec {

void certify_min(const LinearOperator& J, const LargeSvdOptions& opt, double pad, RefinedTriplet& t,
                 std::vector<std::string>& notes) {
    if (opt.certify == CertifyMode::never) return;
    const double width = (t.enclosure.hi - t.enclosure.lo) / (2 * t.sigma);
    const bool needed = !(t.enclosure.lo > 0) || !(width <= 1e-6);
    if (opt.certify == CertifyMode::auto_select && !needed) return;
    const double n = static_cast<double>(J.rows()), m = static_cast<double>(J.cols());
    const double bytes = 8.0 * (3 * n * m + 3 * n * n);
    if (opt.certify == CertifyMode::auto_select && bytes > opt.max_bytes) {
        char buf[200];
        std::snprintf(buf, sizeof buf,
                      "certify (auto): skipped, the rows of J and their split need %.3g GB > "
                      "max_bytes %.3g GB (--certify always refuses with exit 65)",
                      bytes / 1e9, opt.max_bytes / 1e9);
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
