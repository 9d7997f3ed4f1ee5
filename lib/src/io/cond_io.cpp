// `attnspec cond`: the matrix input and the /cond report section (io/cond_io.hpp).
#include "attnspec/io/cond_io.hpp"

#include <cstdint>
#include <vector>

#include "attnspec/base/errors.hpp"

namespace attnspec {

namespace {
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
    H5Group g = parent.group("cond");
    g.attr("input", input), g.attr("dataset", dataset), g.attr("method", s.method);
    g.attr("input_dtype", H5Reader(input).dtype(dataset));  // as stored: float32 or float64
    g.attr("rows", static_cast<std::int64_t>(a.rows)),
        g.attr("cols", static_cast<std::int64_t>(a.cols));
    g.attr("residual", s.residual), g.attr("eta_U", s.eta_U), g.attr("eta_V", s.eta_V),
        g.attr("pad", s.pad);
    g.attr("seconds", a.seconds), g.attr("headline_convention", to_string(a.headline));
    g.write("sigma", as_vector(s.sigma)), g.write("sigma_lo", as_vector(s.lo));
    g.write("sigma_hi", as_vector(s.hi));
    g.write("weyl_radius", as_vector(s.weyl_radius));
    g.write("triplet_residual", as_vector(s.triplet_residual));
    g.write("basis", s.basis);
    for (const Kappa* k : {&a.strict, &a.nz}) {
        H5Group gk = g.group(std::string("kappa_") + to_string(k->convention));
        gk.attr("value", k->value), gk.attr("enclosure_lo", k->enclosure.lo);
        gk.attr("enclosure_hi", k->enclosure.hi), gk.attr("rtol", k->rtol);
        gk.attr("rank", static_cast<std::int64_t>(k->rank));
        gk.attr("sigma_min_used", k->sigma_min);
    }
}

}  // namespace attnspec
