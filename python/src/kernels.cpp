// Kernel validation (lib/include/attnspec/kernels/): the checks `attnspec check-kernel attention`,
// `attention-vjp`, `attention-jvp`, `linear-infsa`, `pure-infsa` and `spec-attention` run (float64
// reference, rounding bound, baseline rule, verdict), attnspec's own plain kernels at a declared
// precision, and the seeded stress inputs (with the cotangent or tangents of a derivative case).
// Arrays come in as C-contiguous float64 ndarrays that python/attnspec/testing.py builds from numpy
// arrays and CPU tensors (an exact upcast) and are copied once into the library's row-major arrays;
// arrays go back as (shape, values) and results as dicts. Every computation runs without the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/kernels/attention_check.hpp"
#include "attnspec/kernels/attention_problem.hpp"
#include "attnspec/kernels/derivative_baseline.hpp"
#include "attnspec/kernels/derivative_check.hpp"
#include "attnspec/kernels/linear_infsa_check.hpp"
#include "attnspec/kernels/neumann_check.hpp"
#include "attnspec/kernels/precision.hpp"
#include "attnspec/kernels/pure_infsa_check.hpp"
#include "attnspec/kernels/spec_attention_check.hpp"
#include "attnspec/kernels/stress.hpp"
#include "bindings.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace attnspec::python {
namespace {

using kernels::Array;
using In = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;

// One copy of a C-contiguous float64 array (its shape as the library's int64 dimensions).
Array array_of(const In& a) {
    Array out;
    for (std::size_t i = 0; i < a.ndim(); ++i)
        out.shape.push_back(static_cast<std::int64_t>(a.shape(i)));
    out.values.assign(a.data(), a.data() + a.size());
    return out;
}

nb::tuple array_tuple(const Array& a) { return nb::make_tuple(a.shape, a.values); }

nb::list elements(const std::vector<kernels::ElementReport>& v) {
    nb::list out;
    for (const auto& e : v) {
        nb::dict d;
        d["index"] = e.index, d["got"] = e.got, d["reference"] = e.reference;
        d["error"] = e.error, d["bound"] = e.bound, d["allowed"] = e.allowed;
        d["baseline"] = e.baseline;
        out.append(d);
    }
    return out;
}

nb::dict result_dict(const kernels::KernelCheckResult& r) {
    nb::dict d;
    d["verdict"] = std::string(kernels::verdict_name(r.verdict)), d["summary"] = r.summary;
    d["scale"] = r.scale, d["inputs_exact"] = r.inputs_exact;
    d["rows"] = r.rows, d["masked_rows"] = r.masked_rows;
    d["rows_beyond_rule"] = r.rows_beyond_rule;
    d["elements_beyond_bound"] = r.elements_beyond_bound, d["nonfinite"] = r.nonfinite;
    d["nonfinite_expected"] = r.nonfinite_expected;
    d["nonfinite_mismatch"] = r.nonfinite_mismatch;
    d["tensor_error"] = r.tensor_error, d["tensor_baseline"] = r.tensor_baseline;
    d["tensor_allowed"] = r.tensor_allowed, d["tensor_floor"] = r.tensor_floor;
    d["worst_rule_ratio"] = r.worst_rule_ratio, d["worst_bound_ratio"] = r.worst_bound_ratio;
    d["baseline_bound_ratio"] = r.baseline_bound_ratio;
    d["max_reference_error"] = r.max_reference_error;
    d["worst_by_bound"] = elements(r.worst_by_bound);
    d["worst_by_rule"] = elements(r.worst_by_rule);
    d["has_lse"] = r.has_lse;
    if (r.has_lse) {
        d["lse_beyond_bound"] = r.lse_beyond_bound, d["lse_error"] = r.lse_error;
        d["lse_baseline"] = r.lse_baseline, d["lse_allowed"] = r.lse_allowed;
        d["lse_bound_ratio"] = r.lse_bound_ratio, d["worst_lse"] = elements(r.worst_lse);
    }
    return d;
}

kernels::AttentionProblem problem(const In& q, const In& k, const In& v, const std::string& mask,
                                  double scale, const std::optional<In>& mask_array = {}) {
    kernels::AttentionProblem p;
    p.q = array_of(q);
    p.k = array_of(k);
    p.v = array_of(v);
    p.mask = kernels::parse_mask(mask, "mask");
    p.scale = scale;
    if (mask_array) p.mask_array = array_of(*mask_array);
    return p;
}

kernels::KernelCheckOptions options(const std::string& storage, const std::string& accumulate,
                                    double factor, double floor_units, int worst) {
    kernels::KernelCheckOptions opt;
    opt.storage = kernels::parse_format(storage, "dtype");
    opt.accumulate = kernels::parse_format(accumulate, "accumulate");
    opt.factor = factor, opt.floor_units = floor_units, opt.worst = worst;
    return opt;
}

// The check of one output o (and lse, when given) of attention on q, k, v.
nb::dict check_attention(const In& q, const In& k, const In& v, const In& o, std::optional<In> lse,
                         const std::string& mask, double scale, const std::string& storage,
                         const std::string& accumulate, double factor, double floor_units,
                         int worst, std::optional<In> mask_array) {
    kernels::AttentionProblem p = problem(q, k, v, mask, scale, mask_array);
    const kernels::KernelCheckOptions opt =
        options(storage, accumulate, factor, floor_units, worst);
    const Array out = array_of(o);
    const bool with_lse = lse.has_value();
    const Array l = with_lse ? array_of(*lse) : Array{};
    kernels::KernelCheckResult r;
    {
        nb::gil_scoped_release release;
        r = kernels::check_attention(p, out, with_lse ? &l : nullptr, opt);
    }
    return result_dict(r);
}

// The problem and options of a derivative check, then `fn(p, opt)` without the GIL.
template <class F>
auto run_check(const In& q, const In& k, const In& v, const std::string& mask, double scale,
               const std::string& storage, const std::string& accumulate, double factor,
               double floor_units, int worst, const std::optional<In>& mask_array, F&& fn) {
    const kernels::AttentionProblem p = problem(q, k, v, mask, scale, mask_array);
    const kernels::KernelCheckOptions opt =
        options(storage, accumulate, factor, floor_units, worst);
    nb::gil_scoped_release release;
    return fn(p, opt);
}

// The check of dq, dk, dv of attention-vjp on q, k, v and the cotangent do: {verdict, summary,
// dq, dk, dv} with one result dict per tensor.
nb::dict check_vjp(const In& q, const In& k, const In& v, const In& dout, const In& dq,
                   const In& dk, const In& dv, const std::string& mask, double scale,
                   const std::string& storage, const std::string& accumulate, double factor,
                   double floor_units, int worst, std::optional<In> mask_array) {
    const Array g = array_of(dout), a = array_of(dq), b = array_of(dk), c = array_of(dv);
    const kernels::VjpCheckResult r =
        run_check(q, k, v, mask, scale, storage, accumulate, factor, floor_units, worst, mask_array,
                  [&](const auto& p, const auto& opt) {
                      return kernels::check_attention_vjp(p, g, a, b, c, opt);
                  });
    nb::dict d;
    d["verdict"] = std::string(kernels::verdict_name(r.verdict)), d["summary"] = r.summary;
    d["dq"] = result_dict(r.dq), d["dk"] = result_dict(r.dk), d["dv"] = result_dict(r.dv);
    return d;
}

// The check of do_t of attention-jvp on q, k, v and the tangents tq, tk, tv.
nb::dict check_jvp(const In& q, const In& k, const In& v, const In& tq, const In& tk, const In& tv,
                   const In& dout, const std::string& mask, double scale,
                   const std::string& storage, const std::string& accumulate, double factor,
                   double floor_units, int worst, std::optional<In> mask_array) {
    const Array a = array_of(tq), b = array_of(tk), c = array_of(tv), o = array_of(dout);
    return result_dict(run_check(q, k, v, mask, scale, storage, accumulate, factor, floor_units,
                                 worst, mask_array, [&](const auto& p, const auto& opt) {
                                     return kernels::check_attention_jvp(p, a, b, c, o, opt);
                                 }));
}

// attnspec's plain VJP (dq, dk, dv) or JVP (do_t) at (storage, accumulate), as (shape, values)
// tuples; `directions` are do, or tq, tk, tv.
nb::list baseline_derivative(const std::string& op, const In& q, const In& k, const In& v,
                             const std::vector<In>& directions, const std::string& mask,
                             double scale, const std::string& storage,
                             const std::string& accumulate, std::optional<In> mask_array) {
    const kernels::AttentionProblem p = problem(q, k, v, mask, scale, mask_array);
    const auto st = kernels::parse_format(storage, "dtype");
    const auto ac = kernels::parse_format(accumulate, "accumulate");
    const bool vjp = op == "vjp";
    if (!(vjp && directions.size() == 1) && !(op == "jvp" && directions.size() == 3))
        fail_usage("baseline_derivative: op vjp takes do, jvp takes tq, tk, tv", "op");
    std::vector<Array> dirs;
    for (const In& a : directions) dirs.push_back(array_of(a));
    std::vector<Array> out(vjp ? 3 : 1);
    {
        nb::gil_scoped_release release;
        if (vjp)
            kernels::baseline_vjp(p, dirs[0], st, ac, out[0], out[1], out[2]);
        else
            kernels::baseline_jvp(p, dirs[0], dirs[1], dirs[2], st, ac, out[0]);
    }
    nb::list l;
    for (const Array& a : out) l.append(array_tuple(a));
    return l;
}

// The mask of a boolean or additive case (kernels/stress.hpp, generate_mask) as (shape, values).
nb::tuple stress_mask(const std::string& mask, std::uint64_t seed,
                      const std::vector<std::int64_t>& q_shape, const std::string& storage) {
    const auto m = kernels::parse_mask(mask, "mask");
    const auto st = kernels::parse_format(storage, "dtype");
    Array a;
    {
        nb::gil_scoped_release release;
        a = kernels::generate_mask(m, seed, q_shape, st);
    }
    return array_tuple(a);
}

// The directions of a derivative case (kernels/stress.hpp, generate_directions).
nb::list stress_directions(const std::string& name, std::uint64_t seed,
                           const std::vector<std::vector<std::int64_t>>& shapes,
                           const std::string& storage) {
    const auto c = kernels::parse_stress(name, "case");
    const auto st = kernels::parse_format(storage, "dtype");
    std::vector<Array> dirs;
    {
        nb::gil_scoped_release release;
        dirs = kernels::generate_directions(c, seed, shapes, st);
    }
    nb::list l;
    for (const Array& a : dirs) l.append(array_tuple(a));
    return l;
}

// attnspec's plain kernel at (storage, accumulate): (O, LSE) as (shape, values) tuples.
nb::tuple baseline_attention(const In& q, const In& k, const In& v, const std::string& mask,
                             double scale, const std::string& storage,
                             const std::string& accumulate, std::optional<In> mask_array) {
    kernels::AttentionProblem p = problem(q, k, v, mask, scale, mask_array);
    const auto st = kernels::parse_format(storage, "dtype");
    const auto ac = kernels::parse_format(accumulate, "accumulate");
    Array o, lse;
    {
        nb::gil_scoped_release release;
        kernels::baseline_attention(p, st, ac, o, lse);
    }
    return nb::make_tuple(array_tuple(o), array_tuple(lse));
}

// A stress case: (q, k, v) as (shape, values) tuples, values representable in `storage`.
nb::tuple stress_case(const std::string& name, std::uint64_t seed,
                      const std::vector<std::int64_t>& shape, const std::string& storage) {
    const auto c = kernels::parse_stress(name, "case");
    const auto st = kernels::parse_format(storage, "dtype");
    kernels::AttentionProblem p;
    {
        nb::gil_scoped_release release;
        p = kernels::generate_stress(c, seed, shape, st);
    }
    return nb::make_tuple(array_tuple(p.q), array_tuple(p.k), array_tuple(p.v));
}

kernels::LinearInfsaParams infsa_params(double gamma, double eps) {
    kernels::LinearInfsaParams par;
    par.gamma = gamma, par.eps = eps;
    return par;
}

// The check of one Linear-InfSA ("linear"), one-hop InfSA ("pure") or Neumann-kernel ("neumann")
// output o on q, k, v (kernels/linear_infsa_check.hpp, pure_infsa_check.hpp, neumann_check.hpp).
nb::dict check_infsa(const std::string& op, const In& q, const In& k, const In& v, const In& o,
                     double gamma, double eps, const std::string& storage,
                     const std::string& accumulate, double factor, double floor_units, int worst) {
    if (op != "linear" && op != "pure" && op != "neumann")
        fail_usage("check_infsa: op is linear, pure or neumann", "op");
    const kernels::AttentionProblem p = problem(q, k, v, "none", 0);
    const kernels::KernelCheckOptions opt =
        options(storage, accumulate, factor, floor_units, worst);
    const Array out = array_of(o);
    kernels::KernelCheckResult r;
    {
        nb::gil_scoped_release release;
        const kernels::LinearInfsaParams par = infsa_params(gamma, eps);
        r = op == "linear" ? kernels::check_linear_infsa(p, par, out, opt)
            : op == "pure" ? kernels::check_pure_infsa(p, par, out, opt)
                           : kernels::check_neumann(p, par, out, opt);
    }
    return result_dict(r);
}

// attnspec's plain Linear-InfSA ("linear"), one-hop InfSA ("pure") or Neumann kernel ("neumann")
// at (storage, accumulate) as a (shape, values) tuple.
nb::tuple baseline_infsa(const std::string& op, const In& q, const In& k, const In& v, double gamma,
                         double eps, const std::string& storage, const std::string& accumulate) {
    if (op != "linear" && op != "pure" && op != "neumann")
        fail_usage("baseline_infsa: op is linear, pure or neumann", "op");
    const kernels::AttentionProblem p = problem(q, k, v, "none", 0);
    const auto st = kernels::parse_format(storage, "dtype");
    const auto ac = kernels::parse_format(accumulate, "accumulate");
    Array o;
    {
        nb::gil_scoped_release release;
        const kernels::LinearInfsaParams par = infsa_params(gamma, eps);
        o = op == "linear" ? kernels::baseline_linear_infsa(p, par, st, ac)
            : op == "pure" ? kernels::baseline_pure_infsa(p, par, st, ac)
                           : kernels::baseline_neumann(p, par, st, ac);
    }
    return array_tuple(o);
}

// A linear-infsa (or, with `neumann`, a neumann) stress case: (q, k, v) as (shape, values) tuples.
nb::tuple linear_infsa_case(const std::string& name, std::uint64_t seed,
                            const std::vector<std::int64_t>& shape, const std::string& storage,
                            bool neumann) {
    const auto st = kernels::parse_format(storage, "dtype");
    kernels::AttentionProblem p;
    {
        nb::gil_scoped_release release;
        p = neumann ? kernels::generate_neumann(name, seed, shape, st)
                    : kernels::generate_linear_infsa(name, seed, shape, st);
    }
    return nb::make_tuple(array_tuple(p.q), array_tuple(p.k), array_tuple(p.v));
}

// spec-attention's problem: x, w_q, w_k, w_v, the correction, lambda, mask and scale.
kernels::SpecAttentionProblem spec_problem(const In& x, const In& wq, const In& wk, const In& wv,
                                           const std::string& correction, double lambda,
                                           const std::string& mask, double scale,
                                           const std::optional<In>& mask_array) {
    kernels::SpecAttentionProblem p;
    p.x = array_of(x), p.w_q = array_of(wq), p.w_k = array_of(wk), p.w_v = array_of(wv);
    p.correction = kernels::parse_spec_correction(correction, "correction");
    p.lambda = lambda, p.mask = kernels::parse_mask(mask, "mask"), p.scale = scale;
    if (mask_array) p.mask_array = array_of(*mask_array);
    return p;
}

// The check of one SpecA output o (kernels/spec_attention_check.hpp).
nb::dict check_spec_attention(const In& x, const In& wq, const In& wk, const In& wv, const In& o,
                              const std::string& correction, double lambda, const std::string& mask,
                              double scale, const std::string& storage,
                              const std::string& accumulate, double factor, double floor_units,
                              int worst, std::optional<In> mask_array) {
    const kernels::SpecAttentionProblem p =
        spec_problem(x, wq, wk, wv, correction, lambda, mask, scale, mask_array);
    const kernels::KernelCheckOptions opt =
        options(storage, accumulate, factor, floor_units, worst);
    const Array out = array_of(o);
    kernels::KernelCheckResult r;
    {
        nb::gil_scoped_release release;
        r = kernels::check_spec_attention(p, out, opt);
    }
    return result_dict(r);
}

// attnspec's plain SpecA at (storage, accumulate) as a (shape, values) tuple.
nb::tuple baseline_spec_attention(const In& x, const In& wq, const In& wk, const In& wv,
                                  const std::string& correction, double lambda,
                                  const std::string& mask, double scale, const std::string& storage,
                                  const std::string& accumulate, std::optional<In> mask_array) {
    const kernels::SpecAttentionProblem p =
        spec_problem(x, wq, wk, wv, correction, lambda, mask, scale, mask_array);
    const auto st = kernels::parse_format(storage, "dtype");
    const auto ac = kernels::parse_format(accumulate, "accumulate");
    Array o;
    {
        nb::gil_scoped_release release;
        o = kernels::baseline_spec_attention(p, st, ac);
    }
    return array_tuple(o);
}

// A spec-attention stress case: (x, w_q, w_k, w_v) as (shape, values) tuples and its lambda.
nb::tuple spec_attention_case(const std::string& name, std::uint64_t seed,
                              const std::vector<std::int64_t>& shape, const std::string& storage) {
    const auto st = kernels::parse_format(storage, "dtype");
    kernels::SpecAttentionProblem p;
    {
        nb::gil_scoped_release release;
        p = kernels::generate_spec_attention(name, seed, shape, st);
    }
    return nb::make_tuple(array_tuple(p.x), array_tuple(p.w_q), array_tuple(p.w_k),
                          array_tuple(p.w_v), p.lambda);
}

// The finite stress cases, or (`nonfinite`) the NaN/Inf ones of `operation` (kernels/stress.hpp,
// nonfinite_cases_for; spec-attention: spec_attention_nonfinite_cases).
std::vector<std::string> stress_names(bool nonfinite, const std::string& operation) {
    if (nonfinite && operation == "spec-attention")
        return kernels::spec_attention_nonfinite_cases();
    std::vector<std::string> out;
    const auto cases =
        nonfinite ? kernels::nonfinite_cases_for(operation) : kernels::stress_cases();
    for (auto c : cases) out.emplace_back(kernels::stress_name(c));
    return out;
}

double round_array_unit(const std::string& format) {
    return kernels::unit_roundoff(kernels::parse_format(format, "dtype"));
}

}  // namespace

void bind_kernels(nb::module_& m) {
    m.def("kernel_check_attention", &check_attention, "q"_a, "k"_a, "v"_a, "o"_a, "lse"_a.none(),
          "mask"_a, "scale"_a, "storage"_a, "accumulate"_a, "factor"_a, "floor_units"_a, "worst"_a,
          "mask_array"_a.none() = nb::none());
    m.def("kernel_baseline_attention", &baseline_attention, "q"_a, "k"_a, "v"_a, "mask"_a,
          "scale"_a, "storage"_a, "accumulate"_a, "mask_array"_a.none() = nb::none());
    m.def("kernel_check_vjp", &check_vjp, "q"_a, "k"_a, "v"_a, "do"_a, "dq"_a, "dk"_a, "dv"_a,
          "mask"_a, "scale"_a, "storage"_a, "accumulate"_a, "factor"_a, "floor_units"_a, "worst"_a,
          "mask_array"_a.none() = nb::none());
    m.def("kernel_check_jvp", &check_jvp, "q"_a, "k"_a, "v"_a, "tq"_a, "tk"_a, "tv"_a, "do_t"_a,
          "mask"_a, "scale"_a, "storage"_a, "accumulate"_a, "factor"_a, "floor_units"_a, "worst"_a,
          "mask_array"_a.none() = nb::none());
    m.def("kernel_baseline_derivative", &baseline_derivative, "op"_a, "q"_a, "k"_a, "v"_a,
          "directions"_a, "mask"_a, "scale"_a, "storage"_a, "accumulate"_a,
          "mask_array"_a.none() = nb::none());
    m.def("kernel_stress_mask", &stress_mask, "mask"_a, "seed"_a, "q_shape"_a, "storage"_a);
    m.def("kernel_stress_directions", &stress_directions, "name"_a, "seed"_a, "shapes"_a,
          "storage"_a);
    m.def("kernel_stress_case", &stress_case, "name"_a, "seed"_a, "shape"_a, "storage"_a);
    m.def("kernel_stress_names", &stress_names, "nonfinite"_a = false, "operation"_a = "attention");
    m.def("kernel_check_infsa", &check_infsa, "op"_a, "q"_a, "k"_a, "v"_a, "o"_a, "gamma"_a,
          "eps"_a, "storage"_a, "accumulate"_a, "factor"_a, "floor_units"_a, "worst"_a);
    m.def("kernel_baseline_infsa", &baseline_infsa, "op"_a, "q"_a, "k"_a, "v"_a, "gamma"_a, "eps"_a,
          "storage"_a, "accumulate"_a);
    m.def("kernel_linear_infsa_case", &linear_infsa_case, "name"_a, "seed"_a, "shape"_a,
          "storage"_a, "neumann"_a = false);
    m.def("kernel_linear_infsa_case_names", &kernels::linear_infsa_cases);
    m.def("kernel_neumann_case_names", &kernels::neumann_cases);
    m.def("kernel_unit_roundoff", &round_array_unit, "format"_a);
    m.def("kernel_check_spec_attention", &check_spec_attention, "x"_a, "w_q"_a, "w_k"_a, "w_v"_a,
          "o"_a, "correction"_a, "lambda_"_a, "mask"_a, "scale"_a, "storage"_a, "accumulate"_a,
          "factor"_a, "floor_units"_a, "worst"_a, "mask_array"_a.none() = nb::none());
    m.def("kernel_baseline_spec_attention", &baseline_spec_attention, "x"_a, "w_q"_a, "w_k"_a,
          "w_v"_a, "correction"_a, "lambda_"_a, "mask"_a, "scale"_a, "storage"_a, "accumulate"_a,
          "mask_array"_a.none() = nb::none());
    m.def("kernel_spec_attention_case", &spec_attention_case, "name"_a, "seed"_a, "shape"_a,
          "storage"_a);
    m.def("kernel_spec_attention_case_names", &kernels::spec_attention_cases);
}

}  // namespace attnspec::python
