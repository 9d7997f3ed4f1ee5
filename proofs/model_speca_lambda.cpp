// model-speca-lambda: kappa(J) of SpecA on trained heads as lambda grows
// (proofs/model_speca_lambda.md). Symbols: J_lambda = J at W + lambda I (Q, K and V), biases kept.
#include "attnspec/proofs/model_speca_lambda.hpp"

#include <cmath>
#include <limits>

#include "attnspec/attention/jacobian_spectrum.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/memory.hpp"
#include "attnspec/proofs/model_run.hpp"

namespace attnspec::proofs {

namespace {
constexpr double kSaturated = 1 - 1e-6;  // max attention probability above which we say saturated
const char* const kKappaText =
    "kappa_J strict: sigma_1/sigma_r of J (Nd x 3Dd), r = Nd, inf when numerically "
    "rank-deficient (rtol = 3Dd eps); from J J^T with the extremes refined matrix-free";
const char* const kCorrectionText = "C_Q = C_K = C_V = lambda I_{D x d}, frozen; J at W + C";
}  // namespace

const std::vector<double>& model_speca_lambdas() {
    static const std::vector<double> grid = {0, 0.5, 1, 2, 10};
    return grid;
}

CheckResult model_speca_curve(const Head& base, const std::vector<double>& lambdas_in) {
    const std::vector<double>& lambdas = lambdas_in.empty() ? model_speca_lambdas() : lambdas_in;
    if (lambdas.front() != 0) fail_data("model-speca-lambda: the lambdas must start with 0");
    base.validate("model-speca-lambda");
    Head kept = base;
    const std::string form = set_bias_form(kept, BiasForm::keep);
    LargeSvdOptions so;
    so.mode = LargeSvdMode::full;
    so.certify.mode = CertifyMode::never;  // the engine's own enclosure, as in the reference run
    so.max_bytes = memory_limit_bytes();
    Eigen::MatrixXd curve(Eigen::Index(lambdas.size()), kScCols);
    for (Eigen::Index i = 0; i < curve.rows(); ++i) {
        Head h = base;
        h.C_Q = h.C_K = h.C_V = Eigen::MatrixXd();
        CorrectionSpec spec;
        spec.kind = CorrectionKind::lambda;
        spec.lambda = lambdas[size_t(i)];
        if (spec.lambda > 0) apply_correction(h, spec);
        const OperatorSpectrum s = jacobian_spectrum(h, so);
        const double max_prob = attention_forward<double>(h).S.maxCoeff();
        const Kappa& k = s.strict;
        curve.row(i) << spec.lambda, k.value, max_prob, k.enclosure.lo, k.enclosure.hi,
            k.value / curve(0, kScKappa),
            i > 0 && k.enclosure.hi < curve(0, kScKappaLo) ? 1.0 : 0.0,
            max_prob > kSaturated ? 1.0 : 0.0;
    }
    CheckResult res = experiment_record(
        "model-speca-lambda", "experiment: kappa(J) of SpecA on a trained head as lambda grows",
        {{"kappa", kKappaText},
         {"correction", kCorrectionText},
         {"bias_form", form},
         {"curve columns",
          "lambda, kappa_J, max_prob, kappa_lo, kappa_hi, ratio, lowered, "
          "saturated"}},
        "curve", curve);
    res.values = {{"N", double(base.N())}, {"s", base.s}};
    return res;
}

ExperimentTable model_speca_table(const std::vector<CheckResult>& results) {
    ExperimentTable t;
    ModelTableRows out{t, true};
    out.begin({}, {"lambda", "kappa_J", "max_prob", "kappa_lo", "kappa_hi", "ratio", "lowered",
                   "saturated"});
    const auto& grid = model_speca_lambdas();
    struct Tally {
        long n = 0, lowered = 0, saturated = 0;
    };
    std::vector<Tally> tally(grid.size());
    for (const auto& r : results) {
        const Eigen::MatrixXd& c = r.instance.back().second;
        for (Eigen::Index i = 0; i < c.rows(); ++i) {
            const Eigen::RowVectorXd v = c.row(i);
            out.row(r, {}, std::vector<double>(v.data(), v.data() + v.size()));
            for (size_t g = 0; g < grid.size(); ++g)
                if (grid[g] == v[kScLambda]) {
                    ++tally[g].n;
                    tally[g].lowered += v[kScLowered] > 0;
                    tally[g].saturated += v[kScSaturated] > 0;
                }
        }
    }
    std::string finding;
    for (size_t g = 1; g < grid.size(); ++g)
        finding += std::string(g > 1 ? "; " : "") + "lambda " + value_text(grid[g]) +
                   " lowers kappa(J) (proved) in " + std::to_string(tally[g].lowered) + " of " +
                   std::to_string(tally[g].n) + " heads, saturated " +
                   std::to_string(tally[g].saturated);
    t.attributes = {{"kappa", kKappaText},
                    {"correction", kCorrectionText},
                    {"bias_form", records_bias_form(results)},
                    {"finding", finding}};
    return t;
}

CheckRun run_model_speca_lambda(const RunOptions& opt) {
    const ModelPlan plan = model_plan(opt, "model-speca-lambda", true);
    CheckRun run = run_model_units(
        opt, plan, "model-speca-lambda",
        "does lambda I lower kappa(J) of SpecA on the trained heads of " + plan.info.name +
            " (biases kept, s of the model)?",
        "", heads_per_sentence(plan),
        [&](const ModelUnit& u) { return model_speca_curve(load_unit_head(plan, u, true)); });
    run.kind = "experiment";
    run.table = model_speca_table(run.results);
    return run;
}

}  // namespace attnspec::proofs
