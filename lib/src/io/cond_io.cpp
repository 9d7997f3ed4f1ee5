// `attnspec cond`: the matrix input and the /cond report section (io/cond_io.hpp).
#include "attnspec/io/cond_io.hpp"

#include <cstdint>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/io/report_names.hpp"

namespace attnspec {

namespace {

namespace cn = names::cond;
namespace sp = names::spectrum;

std::vector<double> as_vector(const Eigen::VectorXd& v) {
    return std::vector<double>(v.data(), v.data() + v.size());
}
}  // namespace

Eigen::MatrixXd load_matrix_input(const std::string& file, const std::string& dataset) {
    const H5Reader in(file);
    if (!in.exists(dataset)) fail_data(file + ": no dataset '" + dataset + "'");
    const auto shape = in.shape(dataset);
    if (shape.empty() || shape.size() > 2)
        fail_data(file + ": dataset '" + dataset + "' has rank " + std::to_string(shape.size()) +
                  " (expected a matrix or a vector)");
    double elems = 1;
    for (auto s : shape) elems *= static_cast<double>(s);
    if (elems == 0) fail_data(file + ": dataset '" + dataset + "' is empty");
    // M, U, V and work space: refused before reading (memory_limit_bytes(), --max-memory)
    in.check_fits(8.0 * 4 * elems, "reading and decomposing '" + dataset + "'");
    return in.input_matrix(dataset);  // float32/float64 only; rejects NaN/Inf
}

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
