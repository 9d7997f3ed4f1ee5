// thm3.4-model: check_thm_3_4 on the heads of a real model, bias-free, J by the Gram route
// (proofs/thm_3_4_model.md).
#include "attnspec/proofs/thm_3_4_model.hpp"

#include "attnspec/proofs/model_run.hpp"

namespace attnspec::proofs {

CheckResult check_thm_3_4_model(const Head& h0, const Thm34Options& o0) {
    Head h = h0;
    const std::string form = set_bias_form(h, BiasForm::drop);
    Thm34Options o = o0;
    o.j_route = Thm34JRoute::gram;
    CheckResult r = check_thm_3_4(h, o);
    r.check = "thm3.4-model";
    r.conventions.emplace_back("bias_form", form);
    return r;
}

CheckRun run_thm_3_4_model(const RunOptions& opt) {
    Thm34Options o;
    o.kappa_lambda = opt.kappa_lambda == "strict" ? KappaConvention::strict : KappaConvention::nz;
    const ModelPlan plan = model_plan(opt, "thm3.4-model", true);
    return run_model_units(opt, plan, "thm3.4-model",
                           "kappa(J) <= kappa(X)^3 kappa(Lambda) kappa(W_V)(kappa(W_Q)+kappa(W_K)) "
                           "+ kappa(X) kappa(S) on the heads of " +
                               plan.info.name + " (bias-free, s of the model)",
                           "bound", heads_per_sentence(plan), [&](const ModelUnit& u) {
                               return check_thm_3_4_model(load_unit_head(plan, u, true), o);
                           });
}

}  // namespace attnspec::proofs
