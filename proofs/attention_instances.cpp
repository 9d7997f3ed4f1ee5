// Instance regimes shared by the attention checks (thm3.3, thm3.4, specA-sweep) and the storage
// of a head in a record (replay).
#include "attnspec/proofs/attention_instances.hpp"

#include <cmath>

#include "attention_run.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/io/attention_input.hpp"
#include "attnspec/report/check_records.hpp"

namespace attnspec::proofs {

std::string AttentionRegime::name() const {
    return shape + "/" + weights + "/" + (inv_sqrt_d ? "s=1/sqrt(d)" : "s=1") + "/" + tokens;
}

std::vector<AttentionRegime> attention_regimes(const RunOptions& opt) {
    struct S {
        const char* name;
        long N, D, d;
    };
    std::vector<S> shapes = {
        {"N<D", 6, 10, 3}, {"N>D", 12, 5, 3}, {"d=1", 8, 8, 1}, {"d=D", 6, 4, 4}};
    if (opt.thorough) shapes.push_back({"N>D-large", 32, 16, 8});
    if (opt.shape.size() == 2) shapes = {{"given", 2 * opt.shape[0], opt.shape[0], opt.shape[1]}};
    const char* weights[] = {"gauss-0.1", "gauss-1", "gauss-3", "kappa-1e3", "lambda-10"};
    std::vector<AttentionRegime> out;
    for (const auto& s : shapes)
        for (const char* w : weights)
            for (bool inv : {false, true})
                for (const char* t : {"gaussian", "layernorm"})
                    out.push_back({s.name, s.N, s.D, s.d, w, inv, t});
    return out;
}

Head draw_head(const AttentionRegime& r, std::uint64_t seed) {
    RandomSpec spec;
    spec.N = r.N;
    spec.D = r.D;
    spec.d = r.d;
    spec.seed = seed;
    spec.token_dist = r.tokens;
    spec.scale = r.inv_sqrt_d ? LogitScale::inv_sqrt_d : LogitScale::one;
    spec.weight_scale = r.weights == "gauss-0.1" ? 0.1 : r.weights == "gauss-3" ? 3.0 : 1.0;
    Head h = random_head(spec);
    if (r.weights == "kappa-1e3") {
        Rng rng(seed ^ 0x5bd1e995u);
        const long k = std::min(r.D, r.d);
        h.W_Q = rng.with_spectrum(r.D, r.d, geometric_spectrum(k, 1.0, 1e3));
        h.W_K = rng.with_spectrum(r.D, r.d, geometric_spectrum(k, 1.0, 1e3));
        h.W_V = rng.with_spectrum(r.D, r.d, geometric_spectrum(k, 1.0, 1e3));
    }
    if (r.weights == "lambda-10") {
        CorrectionSpec c;
        c.kind = CorrectionKind::lambda;
        c.lambda = 10.0;
        apply_correction(h, c);
    }
    return h;
}

void store_head(CheckResult& res, const Head& h) {
    res.instance.emplace_back("X", h.X);
    res.instance.emplace_back("W_Q", h.W_Q);
    res.instance.emplace_back("W_K", h.W_K);
    res.instance.emplace_back("W_V", h.W_V);
    if (h.C_Q.size()) res.instance.emplace_back("C_Q", h.C_Q);
    if (h.C_K.size()) res.instance.emplace_back("C_K", h.C_K);
    if (h.C_V.size()) res.instance.emplace_back("C_V", h.C_V);
    // Biases (a head read from an input that has them): d x 1 here, written with shape (d,).
    if (h.b_Q.size()) res.instance.emplace_back("b_Q", h.b_Q);
    if (h.b_K.size()) res.instance.emplace_back("b_K", h.b_K);
    if (h.b_V.size()) res.instance.emplace_back("b_V", h.b_V);
    res.values.emplace_back("s", h.s);
}

// Records keep the head under <group>/instance/ (X, W_*, C_*, b_*) and s under <group>/values; the
// datasets are read and checked by the one attention-head reader (io/attention_input.hpp).
Head stored_head(const H5Reader& r, const std::string& group) {
    const std::string inst = (group == "/" ? "" : group) + "/instance";
    const double s = stored_value(r, group, "s");
    return read_attention_head(r, inst, r.matrix(inst + "/X"), inst + "/X", s);
}

// Any file in the attention input schema (reports/SCHEMA.md, "Attention input files").
std::vector<std::pair<std::string, Head>> load_heads(const std::string& path) {
    AttentionHeads in = load_attention_heads(path);
    std::vector<std::pair<std::string, Head>> out;
    for (std::size_t h = 0; h < in.size(); ++h) {
        Head& head = in.heads[h];
        head.b_Q.resize(0), head.b_K.resize(0), head.b_V.resize(0);  // bias-free: the paper's form
        out.emplace_back(std::move(in.names[h]), std::move(head));
    }
    return out;
}

CheckRun run_attention_check(const RunOptions& opt, const std::string& name,
                             const std::string& claim, const std::string& headline,
                             long per_default, const std::function<CheckResult(const Head&)>& fn) {
    RunLoop loop(opt, name, claim, headline);
    const auto regimes = attention_regimes(opt);
    std::vector<std::string> names;
    names.reserve(regimes.size());
    for (const auto& reg : regimes) names.push_back(reg.name());
    const long per = loop.per_regime(names, per_default, 4 * per_default);
    std::vector<std::pair<std::string, Head>> embedded;  // the --regime filter applied
    if (!opt.embedded_heads.empty())
        for (auto& nh : load_heads(opt.embedded_heads))
            if (loop.selected("embedded/" + nh.first)) embedded.push_back(std::move(nh));
    loop.expect(long(embedded.size()));
    std::uint64_t i = 0;
    for (const auto& reg : regimes) {
        const std::string rname = reg.name();
        for (long t = 0; t < per && !loop.stopped(); ++t, ++i) {
            if (loop.skip(i, rname)) continue;
            const std::uint64_t seed = loop.seed(i);
            loop.submit(rname, seed, [&fn, reg, seed] { return fn(draw_head(reg, seed)); });
        }
    }
    for (const auto& [name, h] : embedded)  // `embedded` outlives the evaluation in finish()
        loop.submit("embedded/" + name, 0, [&fn, &h = h] { return fn(h); });
    return loop.finish();
}

}  // namespace attnspec::proofs
