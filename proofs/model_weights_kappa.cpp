// model-weights-kappa: kappa of a real model's W_Q, W_K, W_V before and after lambda I and the SVD
// correction (proofs/model_weights_kappa.md). Symbols: W (D x d), C the correction, s1 =
// sigma_1(W).
#include "attnspec/proofs/model_weights_kappa.hpp"

#include <cmath>
#include <limits>

#include "attnspec/attention/attention.hpp"
#include "attnspec/attention/corrections.hpp"
#include "attnspec/proofs/model_run.hpp"
#include "attnspec/spectral/svd.hpp"

namespace attnspec::proofs {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const char* const kMatrixNames[] = {"Q", "K", "V"};
const char* const kKappaText =
    "strict: sigma_1/sigma_r, r = min(D, d); inf when W (or W + C) is numerically rank-deficient "
    "at rtol = max(D, d) eps";
}  // namespace

const std::vector<std::string>& model_weight_corrections() {
    static const std::vector<std::string> list = {"none",     "lambda:0.5", "lambda:1",
                                                  "lambda:2", "lambda:10",  "svd"};
    return list;
}

namespace {
// kappa_strict with the whole-decomposition (Weyl) enclosure: the per-triplet refinement would
// tighten intervals that are already ~1e-15 relative on these well-conditioned weights, at 3x the
// cost.
Kappa strict_kappa(const Eigen::MatrixXd& M, SvdResult* out = nullptr) {
    SvdOptions o;
    o.refine = false;
    SvdResult s = svd(M, o);
    Kappa k = kappa(s, M.rows(), M.cols(), KappaConvention::strict);
    if (out) *out = std::move(s);
    return k;
}
}  // namespace

Eigen::MatrixXd weight_kappa_rows(const Eigen::MatrixXd& W) {
    SvdResult s;
    const Kappa before = strict_kappa(W, &s);
    const double s1 = s.sigma[0];
    const auto& corrections = model_weight_corrections();
    Eigen::MatrixXd rows(Eigen::Index(corrections.size()), kWkCols);
    for (Eigen::Index i = 0; i < rows.rows(); ++i) {
        const CorrectionSpec spec = CorrectionSpec::parse(corrections[size_t(i)]);
        Kappa after = before;
        if (spec.kind == CorrectionKind::lambda)
            after = strict_kappa(W + lambda_correction(W.rows(), W.cols(), spec.lambda));
        else if (spec.kind == CorrectionKind::svd)
            after = strict_kappa(W + svd_correction(W, s));
        const bool lam = spec.kind == CorrectionKind::lambda;
        const bool applies = lam && spec.lambda > s1;
        const bool decided =
            spec.kind != CorrectionKind::none &&
            (after.enclosure.hi < before.enclosure.lo || after.enclosure.lo > before.enclosure.hi);
        rows.row(i) << s1, s.sigma[s.sigma.size() - 1], before.value, after.value,
            after.value / before.value, lam ? spec.lambda : kNaN,
            applies ? (spec.lambda + s1) / (spec.lambda - s1) : kNaN, applies ? 1.0 : 0.0,
            after.value < before.value ? 1.0 : 0.0, decided ? 1.0 : 0.0;
    }
    return rows;
}

CheckResult model_weights_kappa(const Eigen::MatrixXd& W_Q, const Eigen::MatrixXd& W_K,
                                const Eigen::MatrixXd& W_V) {
    const Eigen::MatrixXd* W[] = {&W_Q, &W_K, &W_V};
    const auto n = Eigen::Index(model_weight_corrections().size());
    Eigen::MatrixXd rows(3 * n, 2 + kWkCols);
    for (Eigen::Index m = 0; m < 3; ++m) {
        rows.block(m * n, 2, n, kWkCols) = weight_kappa_rows(*W[m]);
        for (Eigen::Index c = 0; c < n; ++c)
            rows(m * n + c, 0) = double(m), rows(m * n + c, 1) = double(c);
    }
    return experiment_record(
        "model-weights-kappa",
        "experiment: kappa(W) before and after lambda I and the SVD correction",
        {{"kappa", kKappaText},
         {"bias_form", "bias-independent (weights only)"},
         {"rows",
          "matrix (0 Q, 1 K, 2 V), correction index (none, lambda:0.5, lambda:1, "
          "lambda:2, lambda:10, svd), sigma_1, sigma_min, kappa_before, kappa_after, "
          "ratio, lambda, weyl_bound, weyl_applies, helped, decided"}},
        "rows", rows);
}

ExperimentTable model_weights_kappa_table(const std::vector<CheckResult>& results) {
    ExperimentTable t;
    ModelTableRows out{t, false};
    out.begin({"matrix", "correction"},
              {"sigma_1", "sigma_min", "kappa_before", "kappa_after", "ratio", "lambda",
               "weyl_bound", "weyl_applies", "helped", "decided"});
    const auto& corrections = model_weight_corrections();
    struct Tally {
        long helped = 0, hurt = 0, applies = 0;
    };
    std::vector<Tally> tally(corrections.size());
    long matrices = 0;
    for (const auto& r : results) {
        const Eigen::MatrixXd& rows = r.instance.back().second;
        for (Eigen::Index i = 0; i < rows.rows(); ++i) {
            const auto c = size_t(rows(i, 1));
            const Eigen::RowVectorXd v = rows.row(i).tail(kWkCols);
            out.row(r, {kMatrixNames[size_t(rows(i, 0))], corrections[c]},
                    std::vector<double>(v.data(), v.data() + v.size()));
            matrices += c == 0;
            tally[c].helped += v[kWkHelped] > 0;
            tally[c].hurt += v[kWkAfter] > v[kWkBefore];
            tally[c].applies += v[kWkWeylApplies] > 0;
        }
    }
    std::string finding;
    for (size_t c = 1; c < corrections.size(); ++c)
        finding += (c > 1 ? "; " : "") + corrections[c] + " helps " +
                   std::to_string(tally[c].helped) + ", hurts " + std::to_string(tally[c].hurt) +
                   " of " + std::to_string(matrices) +
                   (corrections[c] == "svd"
                        ? ""
                        : " (lambda > sigma_1 in " + std::to_string(tally[c].applies) + ")");
    t.attributes = {{"kappa", kKappaText},
                    {"bias_form", "bias-independent (weights only)"},
                    {"finding", finding + " weight matrices"}};
    return t;
}

CheckRun run_model_weights_kappa(const RunOptions& opt) {
    const ModelPlan plan = model_plan(opt, "model-weights-kappa", false);
    CheckRun run = run_model_units(
        opt, plan, "model-weights-kappa",
        "which heads of " + plan.info.name +
            " does lambda I (lambda 0.5, 1, 2, 10) or the SVD correction make better "
            "conditioned?",
        "", 1L << 30, [&](const ModelUnit& u) {
            const Head h = load_unit_head(plan, u, false);
            return model_weights_kappa(h.W_Q, h.W_K, h.W_V);
        });
    run.kind = "experiment";
    run.table = model_weights_kappa_table(run.results);
    return run;
}

}  // namespace attnspec::proofs
