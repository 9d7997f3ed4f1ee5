// The /cond report section of `attnspec cond` (report/cond_section.hpp).
#include "attnspec/report/cond_section.hpp"

#include <cstdint>
#include <vector>

#include "attnspec/report/names.hpp"

namespace attnspec {

namespace {

namespace cn = names::cond;
namespace sp = names::spectrum;

std::vector<double> as_vector(const Eigen::VectorXd& v) {
    return std::vector<double>(v.data(), v.data() + v.size());
}
}  // namespace

void write_cond_section(H5Group& parent, const CondAnalysis& a, const std::string& input,
                        const std::string& dataset) {
    const SvdResult& s = a.svd;
    H5Group g = parent.group(cn::kGroup);
    g.attr(cn::kInput, input), g.attr(cn::kDataset, dataset), g.attr(cn::kMethod, s.method);
    g.attr(cn::kInputDtype, H5Reader(input).dtype(dataset));  // as stored: float32 or float64
    g.attr(cn::kRows, static_cast<std::int64_t>(a.rows)),
        g.attr(cn::kCols, static_cast<std::int64_t>(a.cols));
    g.attr(cn::kResidual, s.residual), g.attr(cn::kEtaU, s.eta_U), g.attr(cn::kEtaV, s.eta_V),
        g.attr("pad", s.pad);
    g.attr(cn::kSeconds, a.seconds), g.attr(cn::kHeadlineConvention, to_string(a.headline));
    g.write(cn::kSigma, as_vector(s.sigma)), g.write(cn::kSigmaLo, as_vector(s.lo));
    g.write(cn::kSigmaHi, as_vector(s.hi));
    g.write("weyl_radius", as_vector(s.weyl_radius));
    g.write("triplet_residual", as_vector(s.triplet_residual));
    g.write(cn::kBasis, s.basis);
    for (const Kappa* k : {&a.strict, &a.nz}) {
        H5Group gk = g.group(std::string(sp::kKappaPrefix) + to_string(k->convention));
        gk.attr(sp::kValue, k->value), gk.attr(sp::kEnclosureLo, k->enclosure.lo);
        gk.attr(sp::kEnclosureHi, k->enclosure.hi), gk.attr(sp::kRtol, k->rtol);
        gk.attr(sp::kRank, static_cast<std::int64_t>(k->rank));
        gk.attr(sp::kSigmaMinUsed, k->sigma_min);
    }
}

}  // namespace attnspec
