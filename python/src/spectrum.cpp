// kappa of a head's Jacobian through the analysis `attnspec jacobian --svd` runs
// (attention/jacobian_analysis.hpp -> jacobian_spectrum / operator_spectrum), with the CLI's
// defaults, so that the numbers are the CLI's bit for bit; and kappa of a matrix through the
// analysis of `attnspec cond` (spectral/cond_analysis.hpp). Results go back as dicts the Python
// layer (python/attnspec/_spectrum.py) turns into Spectrum objects.
#include <nanobind/eigen/dense.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "attnspec/attention/jacobian_analysis.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/spectral/certify/policy.hpp"
#include "attnspec/spectral/cond_analysis.hpp"
#include "attnspec/spectral/operator_spectrum.hpp"
#include "bindings.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace attnspec::python {
namespace {

// The one place where certify= ("auto", "always", "never"; Usage error otherwise) becomes the
// engine's certification options (CertifyOptions, whose default is the library's and the CLI's),
// as `jacobian --certify` does.
void set_certify(LargeSvdOptions& o, const std::string& certify) {
    o.certify.mode = certify_mode_from_string(certify);
}

nb::dict triplet_dict(const RefinedTriplet& t) {
    nb::dict d;
    d["value"] = t.sigma, d["lo"] = t.enclosure.lo, d["hi"] = t.enclosure.hi;
    d["basis"] = t.basis, d["sigma_gram"] = t.sigma_gram, d["residual_u"] = t.res_u;
    d["residual_v"] = t.res_v, d["rho"] = t.rho, d["steps"] = t.steps;
    return d;
}

nb::dict kappa_dict(const Kappa& k) {
    nb::dict d;
    d["value"] = k.value, d["lo"] = k.enclosure.lo, d["hi"] = k.enclosure.hi;
    d["convention"] = std::string(to_string(k.convention)), d["rtol"] = k.rtol;
    d["rank"] = static_cast<long>(k.rank), d["sigma_max"] = k.sigma_max;
    d["sigma_min"] = k.sigma_min, d["method"] = k.method;
    return d;
}

nb::list strings(const std::vector<std::string>& v) {
    nb::list l;
    for (const std::string& s : v) l.append(s);
    return l;
}

nb::dict spectrum_dict(const OperatorSpectrum& s) {
    nb::dict d;
    d["rows"] = static_cast<long>(s.rows), d["cols"] = static_cast<long>(s.cols);
    d["mode"] = s.mode, d["method"] = s.method, d["rank"] = static_cast<long>(s.rank);
    d["sigma_max"] = triplet_dict(s.max), d["sigma_min"] = triplet_dict(s.min);
    d["kappa_strict"] = kappa_dict(s.strict), d["kappa_nz"] = kappa_dict(s.nz);
    d["gram_error"] = s.gram_error, d["gram_trace"] = s.gram_trace;
    d["product_rel_error"] = s.product_rel_error, d["rel_error_bound"] = s.rel_error_bound;
    d["seconds"] = s.seconds, d["gram_seconds"] = s.gram_seconds, d["notes"] = strings(s.notes);
    d["gram_sigma"] = Eigen::VectorXd(s.gram_sigma);
    return d;
}

nb::dict head_spectrum(const Head& h, const std::string& svd, const std::string& certify,
                       const std::string& wrt, long full_upto, double max_bytes) {
    JacobianOptions jo;
    if (wrt != "weights" && wrt != "input")
        fail_usage("wrt must be 'weights' or 'input', got '" + wrt + "'", "wrt");
    jo.wrt = wrt == "weights" ? JacobianWrt::weights : JacobianWrt::input;
    jo.max_bytes = jo.svd.max_bytes = max_bytes;
    jo.store_bytes = 0;  // J is not formed: the engine needs J J^T and products only
    jo.spectrum = true;
    jo.svd.mode = large_svd_mode_from_string(svd);
    set_certify(jo.svd, certify);
    if (full_upto < 1) fail_usage("full_upto must be >= 1, got " + std::to_string(full_upto));
    jo.svd.full_upto = full_upto;
    h.validate("Head");
    JacobianAnalysis a;
    {
        nb::gil_scoped_release unlocked;
        a = analyse_jacobians({h}, false, jo);
    }
    return spectrum_dict(a.heads.at(0).spectrum);
}

nb::dict matrix_spectrum(const Eigen::MatrixXd& M, const std::string& method, double rtol) {
    CondOptions opt;
    opt.svd.method = svd_method_from_string(method);
    opt.rtol = rtol;
    CondAnalysis c;
    {
        nb::gil_scoped_release unlocked;
        c = cond_analysis(M, opt);
    }
    nb::dict d;
    d["rows"] = static_cast<long>(c.rows), d["cols"] = static_cast<long>(c.cols);
    d["method"] = c.svd.method, d["seconds"] = c.seconds;
    d["sigma"] = Eigen::VectorXd(c.svd.sigma), d["lo"] = Eigen::VectorXd(c.svd.lo);
    d["hi"] = Eigen::VectorXd(c.svd.hi), d["basis"] = strings(c.svd.basis);
    d["kappa_strict"] = kappa_dict(c.strict), d["kappa_nz"] = kappa_dict(c.nz);
    return d;
}

}  // namespace

void bind_spectrum(nb::module_& m) {
    m.def("head_spectrum", &head_spectrum, "head"_a, "svd"_a, "certify"_a, "wrt"_a, "full_upto"_a,
          "max_bytes"_a,
          "sigma_max, sigma_min and kappa (strict, nz) of the head's J (wrt 'weights') or J_X "
          "('input') with enclosures, as `attnspec jacobian --svd SVD --certify CERTIFY` "
          "computes them (analyse_jacobians).");
    m.def("matrix_spectrum", &matrix_spectrum, "M"_a, "method"_a, "rtol"_a,
          "Every singular value of M with its enclosure and kappa (strict, nz), as "
          "`attnspec cond` computes them (cond_analysis).");
}

}  // namespace attnspec::python
