// model-infsa: InfSA on a trained head's real Q, K (proofs/model_infsa.md).
#include "attnspec/proofs/model_infsa.hpp"

#include <cmath>
#include <string>

#include "attnspec/infsa/affinity.hpp"
#include "attnspec/infsa/fidelity.hpp"
#include "attnspec/infsa/neumann.hpp"
#include "attnspec/infsa/perron.hpp"
#include "attnspec/proofs/model_run.hpp"

namespace attnspec::proofs {

namespace {
const char* const kAffinityText =
    "relu: Â = ReLU(Q K^T / d_h) / (||ReLU(Q K^T / d_h)||_F + 1e-6), d_h = d (the public code's "
    "form); gamma = 0.95; Linear-InfSA weights a with q~ = q / sqrt(d_h), eps = 1e-6";
}  // namespace

void model_qk(const Head& h, Eigen::MatrixXd& Q, Eigen::MatrixXd& K) {
    h.validate("model-infsa");
    const Forward<double> f = attention_forward<double>(h);
    Q = f.Q;
    K = f.K;
}

CheckResult model_infsa(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K) {
    const double gamma = kModelInfsaGamma;
    const Affinity A = affinity(Q, K);
    const Interval norm2 = norm2_enclosure(A.A_hat);
    const Fidelity f = fidelity_dense(Q, K, gamma);
    const double min_R = (1.0 - gamma * A.A_hat.rowwise().sum().array()).minCoeff();
    Eigen::MatrixXd row(1, kMiCols);
    row << double(Q.rows()), f.left.rho, min_R,
        double(truncation_order(gamma, norm2.hi, kModelInfsaTarget)), f.cos_left, f.cos_right,
        f.rho_hat.lo, f.rho_hat.hi, norm2.hi, f.cos_katz_in, min_R >= 0 ? 1.0 : 0.0;
    return experiment_record("model-infsa", "experiment: InfSA on a trained head's real Q, K",
                             {{"affinity", kAffinityText},
                              {"row columns",
                               "N, rho, min_R, K_1e-6, cos_left, cos_right, rho_lo, rho_hi, "
                               "norm2_hi, cos_katz_in, probabilistic"}},
                             "row", row);
}

ExperimentTable model_infsa_table(const std::vector<CheckResult>& results) {
    ExperimentTable t;
    ModelTableRows out{t, true};
    out.begin({}, {"N", "rho", "min_R", "K_1e-6", "cos_left", "cos_right", "rho_lo", "rho_hi",
                   "norm2_hi", "cos_katz_in", "probabilistic"});
    std::vector<double> left, right, K;
    long negative_R = 0;
    for (const auto& r : results) {
        const Eigen::RowVectorXd v = r.instance.back().second.row(0);
        out.row(r, {}, std::vector<double>(v.data(), v.data() + v.size()));
        left.push_back(v[kMiCosLeft]);
        right.push_back(v[kMiCosRight]);
        K.push_back(v[kMiK]);
        negative_R += v[kMiMinR] < 0;
    }
    t.attributes = {
        {"affinity", kAffinityText},
        {"bias_form", records_bias_form(results)},
        {"finding", "cos_left: " + distribution_text(left, kModelInfsaFidelity) +
                        "; cos_right: " + distribution_text(right, kModelInfsaFidelity) +
                        "; min R < 0 (no absorbing-chain reading) in " +
                        std::to_string(negative_R) + " of " + std::to_string(results.size()) +
                        "; K_1e-6: " + distribution_text(K, std::nan(""))}};
    return t;
}

CheckRun run_model_infsa(const RunOptions& opt) {
    const ModelPlan plan = model_plan(opt, "model-infsa", true);
    const long all = plan.units.empty() ? 0 : static_cast<long>(plan.units[0].size());
    CheckRun run = run_model_units(
        opt, plan, "model-infsa",
        "how close is Linear-InfSA to the Perron vectors of Â on the real activations of " +
            plan.info.name + " (the summary's 0.985)?",
        "", all, [&](const ModelUnit& u) {
            Head h = load_unit_head(plan, u, true);
            Eigen::MatrixXd Q, K;
            model_qk(h, Q, K);
            CheckResult r = model_infsa(Q, K);
            r.conventions.emplace_back("bias_form", set_bias_form(h, BiasForm::keep));
            return r;
        });
    run.kind = "experiment";
    run.table = model_infsa_table(run.results);
    return run;
}

}  // namespace attnspec::proofs
