// Spectrum records of the large-scale engine, in HDF5 and JSON (report/spectrum_record.hpp).
#include "attnspec/report/spectrum_record.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "attnspec/report/names.hpp"

namespace attnspec {

namespace {

namespace sp = names::spectrum;

void triplet_h5(H5Group& g, const RefinedTriplet& t) {
    g.attr(sp::kSigma, t.sigma);
    g.attr("sigma_gram", t.sigma_gram);
    g.attr(sp::kEnclosureLo, t.enclosure.lo);
    g.attr(sp::kEnclosureHi, t.enclosure.hi);
    g.attr("residual_u", t.res_u);
    g.attr("residual_v", t.res_v);
    g.attr("rho", t.rho);
    g.attr("basis", t.basis);
    g.attr("refine_steps", t.steps);
}
void kappa_h5(H5Group& g, const Kappa& k) {
    g.attr(sp::kValue, k.value);
    g.attr(sp::kEnclosureLo, k.enclosure.lo);
    g.attr(sp::kEnclosureHi, k.enclosure.hi);
    g.attr("convention", to_string(k.convention));
    g.attr(sp::kRtol, k.rtol);
    g.attr(sp::kRank, static_cast<std::int64_t>(k.rank));
    g.attr(sp::kSigmaMinUsed, k.sigma_min);
}
void triplet_json(JsonWriter& j, const RefinedTriplet& t) {
    j.begin_object();
    j.kv("sigma", t.sigma).kv("sigma_gram", t.sigma_gram);
    j.key("enclosure").begin_array().value(t.enclosure.lo).value(t.enclosure.hi).end_array();
    j.kv("residual_u", t.res_u).kv("residual_v", t.res_v).kv("rho", t.rho).kv("basis", t.basis);
    j.kv("refine_steps", t.steps);
    j.end_object();
}
void kappa_json(JsonWriter& j, const Kappa& k) {
    j.begin_object();
    j.kv("value", k.value).kv("convention", to_string(k.convention)).kv("rtol", k.rtol);
    j.key("enclosure").begin_array().value(k.enclosure.lo).value(k.enclosure.hi).end_array();
    j.kv("rank", static_cast<std::int64_t>(k.rank)).kv("sigma_min_used", k.sigma_min);
    j.end_object();
}
}  // namespace

void write_operator_spectrum(H5Group& g, const OperatorSpectrum& s) {
    g.attr("rows", static_cast<std::int64_t>(s.rows));
    g.attr("cols", static_cast<std::int64_t>(s.cols));
    g.attr("mode", s.mode);
    g.attr("method", s.method);
    g.attr(sp::kRank, static_cast<std::int64_t>(s.rank));
    g.attr("gram_error", s.gram_error);
    g.attr("product_rel_error", s.product_rel_error);
    g.attr("seconds", s.seconds);
    g.attr("rel_error_bound", s.rel_error_bound);
    auto gm = g.group(sp::kSigmaMax);
    triplet_h5(gm, s.max);
    auto gn = g.group(sp::kSigmaMin);
    triplet_h5(gn, s.min);
    auto ks = g.group(sp::kKappaStrict);
    kappa_h5(ks, s.strict);
    auto kn = g.group(sp::kKappaNz);
    kappa_h5(kn, s.nz);
    g.write("gram_sigma",
            std::vector<double>(s.gram_sigma.data(), s.gram_sigma.data() + s.gram_sigma.size()));
    g.write("notes", s.notes.empty() ? std::vector<std::string>{""} : s.notes);
}

void write_operator_spectrum(JsonWriter& j, const OperatorSpectrum& s) {
    j.kv("rows", static_cast<std::int64_t>(s.rows)).kv("cols", static_cast<std::int64_t>(s.cols));
    j.kv("mode", s.mode).kv("method", s.method).kv("rank", static_cast<std::int64_t>(s.rank));
    j.key("sigma_max");
    triplet_json(j, s.max);
    j.key("sigma_min");
    triplet_json(j, s.min);
    j.key("kappa_strict");
    kappa_json(j, s.strict);
    j.key("kappa_nz");
    kappa_json(j, s.nz);
    j.kv("gram_error", s.gram_error).kv("product_rel_error", s.product_rel_error);
    j.kv("rel_error_bound", s.rel_error_bound).kv("seconds", s.seconds);
    j.kv("gram_seconds", s.gram_seconds);
    j.key("notes").begin_array();
    for (const auto& n : s.notes) j.value(n);
    j.end_array();
}

}  // namespace attnspec
