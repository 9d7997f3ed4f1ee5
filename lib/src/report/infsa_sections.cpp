// The `/neumann` and `/fidelity` report sections and their JSON forms (reports/SCHEMA.md).
#include "attnspec/report/infsa_sections.hpp"

#include <cstdint>
#include <vector>

#include "attnspec/io/h5.hpp"
#include "attnspec/report/names.hpp"

namespace attnspec {

namespace {

namespace nn = names::neumann;
namespace fn = names::fidelity;

std::vector<double> vec(const Eigen::VectorXd& v) {
    return std::vector<double>(v.data(), v.data() + v.size());
}

}  // namespace

void write_neumann_section(H5Group& root, const NeumannAnalysis& a, const NeumannSource& src) {
    const NeumannInvariants& iv = a.invariants;
    const Centralities& c = a.centralities;
    H5Group G = root.group(nn::kGroup);
    G.attr(nn::kSource, src.source), G.attr(nn::kAffinity, src.affinity);
    const std::string input = "input:";
    if (src.source.compare(0, input.size(), input) == 0)  // the stored type of the array read
        G.attr("input_dtype", H5Reader(src.source.substr(input.size()))
                                  .dtype(src.affinity == "given" ? "A_hat" : "Q"));
    G.attr(nn::kN, std::int64_t(a.n)), G.attr(nn::kGamma, a.gamma), G.attr("eps", src.eps);
    G.attr("frobenius", a.norms.frob), G.attr("frob_plus", src.frob_plus);
    G.attr("norm2_lo", a.norms.norm2.lo), G.attr(nn::kNorm2Hi, a.norms.norm2.hi);
    G.attr(nn::kRhoLo, c.left.rho_enc.lo), G.attr(nn::kRhoHi, c.left.rho_enc.hi);
    H5Group I = G.group(nn::kInvariants);
    I.attr("residual", iv.residual), I.attr("residual_bound", iv.residual_bound);
    I.attr("lu_growth", iv.lu_growth), I.attr("min_entry", iv.min_entry);
    I.attr("min_diag_minus_1", iv.min_diag_minus_1), I.attr("min_offdiag", iv.min_offdiag);
    I.attr("commutator", iv.commutator), I.attr("entry_tol", iv.entry_tol);
    I.attr("kappa_F", iv.kappa_F);
    H5Group T = G.group(nn::kTruncation);
    std::vector<std::int64_t> ks;
    std::vector<double> b, e;
    for (const auto& r : a.truncation)
        ks.push_back(r.K), b.push_back(r.bound), e.push_back(r.error);
    T.write(nn::kK, ks), T.write(nn::kBound, b), T.write(nn::kError, e);
    T.attr(nn::kTarget, a.target), T.attr(nn::kKForTarget, std::int64_t(a.K_for_target));
    H5Group C = G.group(nn::kCentralities);
    C.write("katz_out", vec(c.katz_out)), C.write("katz_in", vec(c.katz_in));
    C.write("leak", vec(c.leak)), C.write("expected_steps", vec(c.expected_steps));
    C.write("perron_left", vec(c.left.vec)), C.write("perron_right", vec(c.right.vec));
    C.attr(nn::kMinLeak, c.min_leak), C.attr(nn::kProbabilistic, c.probabilistic ? "yes" : "no");
    if (a.closure_times_V.size()) G.write("closure_times_V", a.closure_times_V);
}

void write_neumann_json(JsonWriter& j, const NeumannAnalysis& a, const NeumannSource& src) {
    const NeumannInvariants& iv = a.invariants;
    const Centralities& c = a.centralities;
    j.kv("source", src.source).kv("N", std::int64_t(a.n)).kv("gamma", a.gamma).kv("eps", src.eps);
    j.kv("frobenius", a.norms.frob).key("norm2").begin_array();
    j.value(a.norms.norm2.lo).value(a.norms.norm2.hi).end_array();
    j.key("rho").begin_array().value(c.left.rho_enc.lo).value(c.left.rho_enc.hi).end_array();
    j.key("invariants").begin_object().kv("residual", iv.residual);
    j.kv("residual_bound", iv.residual_bound).kv("residual_ok", iv.residual <= iv.residual_bound);
    j.kv("min_entry", iv.min_entry).kv("min_diag_minus_1", iv.min_diag_minus_1);
    j.kv("entry_tol", iv.entry_tol).kv("commutator", iv.commutator).end_object();
    j.key("truncation").begin_array();
    for (const auto& r : a.truncation)
        j.begin_object()
            .kv("K", r.K)
            .kv("bound", r.bound)
            .kv("error", r.error)
            .kv("holds", r.holds())
            .end_object();
    j.end_array();
    j.kv("target", a.target).kv("K_for_target", a.K_for_target);
    j.key("centralities").begin_object().kv("katz_in_max", c.katz_in.maxCoeff());
    j.kv("katz_out_max", c.katz_out.maxCoeff());
    j.kv("expected_steps_max", c.expected_steps.maxCoeff()).kv("min_leak", c.min_leak);
    j.kv("probabilistic", c.probabilistic).kv("perron_left_converged", c.left.converged);
    j.kv("cos_left_katz_in", cosine(c.left.vec, c.katz_in)).end_object();
    if (a.closure_times_V.size()) j.kv("closure_times_V_norm", a.closure_times_V.norm());
}

void write_fidelity_section(H5Group& root, const FidelityTable& t, const FidelitySpec& spec,
                            const std::string& input_dtype) {
    H5Group G = root.group(fn::kGroup);
    if (!input_dtype.empty()) G.attr("input_dtype", input_dtype);
    G.attr(fn::kGamma, spec.gamma), G.attr("eps", spec.eps), G.attr("mu", spec.mu);
    G.attr("d_h", std::int64_t(spec.d_h));
    G.attr(fn::kMode, spec.matrix_free ? "matrix-free" : "dense");
    G.attr(fn::kAffinity, "relu: ReLU(QK^T/d_h)/(||.||_F + eps)");
    G.attr(fn::kWeights, "Linear-InfSA a_j = s_j/(sum s + eps)");
    std::vector<std::string> fam;
    std::vector<std::int64_t> N, head, draw, sd, iters;
    std::vector<double> cols[4], rlo, rhi;
    for (const auto& r : t.records) {
        fam.push_back(r.family), N.push_back(r.N), head.push_back(r.head), draw.push_back(r.draw);
        sd.push_back(std::int64_t(r.seed)), iters.push_back(r.f.left.iterations);
        for (int m = 0; m < 4; ++m) cols[m].push_back(fidelity_metric(r.f, m));
        rlo.push_back(r.f.rho_hat.lo), rhi.push_back(r.f.rho_hat.hi);
    }
    G.write(fn::kFamily, fam), G.write(fn::kN, N), G.write("head", head), G.write("draw", draw);
    G.write("seed", sd), G.write("perron_iterations", iters);
    G.write("rho_hat_lo", rlo), G.write("rho_hat_hi", rhi);
    for (int m = 0; m < 4; ++m) G.write(kFidelityMetrics[m], cols[m]);
}

void write_fidelity_json(JsonWriter& j, const FidelityTable& t, const FidelitySpec& spec) {
    j.kv("mode", spec.matrix_free ? "matrix-free" : "dense").kv("gamma", spec.gamma);
    j.kv("eps", spec.eps).kv("mu", spec.mu).kv("d_h", std::int64_t(spec.d_h));
    j.key("summary").begin_array();
    for (const auto& g : t.groups) {
        j.begin_object().kv("family", g.family).kv("N", std::int64_t(g.N));
        j.kv("count", std::int64_t(g.records.size()));
        for (int m = 0; m < 4; ++m) {
            const FidelityStats& s = g.stats[m];
            j.key(kFidelityMetrics[m]).begin_object().kv("min", s.min).kv("median", s.median);
            j.kv("mean", s.mean).kv("max", s.max).end_object();
        }
        j.end_object();
    }
    j.end_array();
    j.key("records").begin_array();
    for (const auto& r : t.records) {
        j.begin_object().kv("family", r.family).kv("N", std::int64_t(r.N));
        j.kv("head", std::int64_t(r.head)).kv("draw", std::int64_t(r.draw)).kv("seed", r.seed);
        for (int m = 0; m < 4; ++m) j.kv(kFidelityMetrics[m], fidelity_metric(r.f, m));
        j.key("rho_hat").begin_array().value(r.f.rho_hat.lo).value(r.f.rho_hat.hi).end_array();
        j.kv("perron_converged", r.f.left.converged).kv("perron_vec_error", r.f.left.vec_error);
        j.end_object();
    }
    j.end_array();
}

}  // namespace attnspec
