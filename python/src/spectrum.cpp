// kappa of a head's Jacobian through the analysis `attnspec jacobian --svd` runs
// (attention/jacobian_analysis.hpp -> jacobian_spectrum / operator_spectrum), with the CLI's
// defaults, so that the numbers are the CLI's bit for bit; and kappa of a matrix through the
// analysis of `attnspec cond` (spectral/cond_analysis.hpp). Results go back as dicts the Python
// layer (python/attnspec/_spectrum.py) turns into Spectrum objects.
#include <nanobind/eigen/dense.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attnspec/attention/jacobian_analysis.hpp"
#include "attnspec/base/blas_runtime.hpp"
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

// The engine's progress reports (EngineProgress) as progress(stage, done, total, unit,
// seconds_left), called with the GIL held; a callback that raises is reported as unraisable and
// the solve goes on. `fn` None: no callback. The callback holds a pointer to `fn`, which must
// outlive it: the engine copies its options without the GIL, and copying an nb::object there
// would touch a reference count without the GIL.
EngineProgressFn progress_fn(const nb::object& fn) {
    if (fn.is_none()) return {};
    return [f = &fn](const EngineProgress& p) {
        nb::gil_scoped_acquire locked;
        try {
            (*f)(p.stage, p.done, p.total, p.unit, p.seconds_left);
        } catch (nb::python_error& e) {
            e.discard_as_unraisable("attnspec spectrum progress callback");
        }
    };
}

// threads: the BLAS threads of this call (0: leave the process's count, every core by default).
int checked_threads(long threads) {
    if (threads < 0 || threads > 4096)
        fail_usage(
            "threads must be in [1, 4096] (or None: every core), got " + std::to_string(threads),
            "threads");
    return static_cast<int>(threads);
}

nb::dict head_spectrum(const Head& h, const std::string& svd, const std::string& certify,
                       const std::string& wrt, long full_upto, double max_bytes, long threads,
                       const nb::object& progress) {
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
    jo.progress = jo.svd.progress = progress_fn(progress);
    const int nthreads = checked_threads(threads);
    h.validate("Head");
    JacobianAnalysis a;
    {
        nb::gil_scoped_release unlocked;
        BlasThreadsScope scope(nthreads);  // 0: ignored, the count stays
        a = analyse_jacobians({h}, false, jo);
    }
    return spectrum_dict(a.heads.at(0).spectrum);
}

// M as the library's view of the caller's buffer, without a copy: an F-contiguous (column-major)
// array is M itself; a C-contiguous one is read as M^T (column-major), whose singular values are
// M's. Anything else is refused (the Python layer copies strided views before this).
struct MatrixView {
    Eigen::Map<const Eigen::MatrixXd> map;
    bool transposed;
};

MatrixView matrix_view(const nb::ndarray<const double, nb::ndim<2>, nb::device::cpu>& a) {
    const auto m = static_cast<Eigen::Index>(a.shape(0)), n = static_cast<Eigen::Index>(a.shape(1));
    if (m == 0 || n == 0) fail_data("matrix: empty array", "matrix");
    if (a.stride(0) == 1 && (n == 1 || a.stride(1) == m)) return {{a.data(), m, n}, false};
    if (a.stride(1) == 1 && (m == 1 || a.stride(0) == n)) return {{a.data(), n, m}, true};
    fail_data("matrix: neither C- nor F-contiguous (strides " + std::to_string(a.stride(0)) + ", " +
                  std::to_string(a.stride(1)) + " elements)",
              "matrix");
}

nb::dict matrix_spectrum(const nb::ndarray<const double, nb::ndim<2>, nb::device::cpu>& a,
                         const std::string& method, double rtol, long threads) {
    CondOptions opt;
    opt.svd.method = svd_method_from_string(method);
    opt.rtol = rtol;
    const int nthreads = checked_threads(threads);
    const MatrixView v = matrix_view(a);
    const Eigen::Ref<const Eigen::MatrixXd> M(v.map);  // the library's argument: no copy
    CondAnalysis c;
    {
        nb::gil_scoped_release unlocked;
        BlasThreadsScope scope(nthreads);
        c = cond_analysis(M, opt);
    }
    nb::dict d;
    d["rows"] = static_cast<long>(a.shape(0)), d["cols"] = static_cast<long>(a.shape(1));
    d["transposed"] = v.transposed;
    d["data_address"] = reinterpret_cast<std::uintptr_t>(M.data());
    d["method"] = c.svd.method, d["seconds"] = c.seconds;
    d["sigma"] = Eigen::VectorXd(c.svd.sigma), d["lo"] = Eigen::VectorXd(c.svd.lo);
    d["hi"] = Eigen::VectorXd(c.svd.hi), d["basis"] = strings(c.svd.basis);
    d["kappa_strict"] = kappa_dict(c.strict), d["kappa_nz"] = kappa_dict(c.nz);
    return d;
}

}  // namespace

void bind_spectrum(nb::module_& m) {
    m.def("head_spectrum", &head_spectrum, "head"_a, "svd"_a, "certify"_a, "wrt"_a, "full_upto"_a,
          "max_bytes"_a, "threads"_a = 0, "progress"_a = nb::none(),
          "sigma_max, sigma_min and kappa (strict, nz) of the head's J (wrt 'weights') or J_X "
          "('input') with enclosures, as `attnspec jacobian --svd SVD --certify CERTIFY` "
          "computes them (analyse_jacobians).");
    m.def("matrix_spectrum", &matrix_spectrum, "M"_a.noconvert(), "method"_a, "rtol"_a,
          "threads"_a = 0,
          "Every singular value of M with its enclosure and kappa (strict, nz), as "
          "`attnspec cond` computes them (cond_analysis), on the caller's buffer without a copy "
          "(a C-contiguous M is analysed as M^T: 'transposed'; 'data_address' is the pointer the "
          "library read).");
}

}  // namespace attnspec::python
