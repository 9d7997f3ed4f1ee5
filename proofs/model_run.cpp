// The units of a model dataset a run visits and the loop over them (proofs/model_run.hpp).
#include "attnspec/proofs/model_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "attnspec/base/errors.hpp"

namespace attnspec::proofs {

namespace {
// The indices a selector part keeps: the one it names (checked against the count) or all.
std::vector<int> indices(const std::optional<int>& part, int count, const std::string& what,
                         const DatasetInfo& info) {
    if (part) {
        if (*part >= count)
            fail_data(what + " " + std::to_string(*part) + " out of range: " + info.name + " has " +
                      std::to_string(count) + " " + what + "s");
        return {*part};
    }
    std::vector<int> all(static_cast<size_t>(std::max(count, 0)));
    std::iota(all.begin(), all.end(), 0);
    return all;
}
}  // namespace

ModelPlan model_plan(const RunOptions& opt, const std::string& check, bool per_sentence) {
    if (opt.dataset.empty())
        fail_usage(check +
                   " runs on a model dataset: give --dataset NAME (e.g. minilm-l6; "
                   "'attnspec dataset list')");
    ModelPlan p;
    p.selector = DatasetSelector::parse(opt.dataset);
    p.info = find_dataset(p.selector.name);
    if (p.info.layout != "model")
        fail_data(check + ": dataset " + p.info.name + " is in the '" + p.info.layout +
                  "' layout; the real-model analysis needs the model layout (layers, heads, "
                  "sentences; reports/SCHEMA.md)");
    if (!per_sentence && p.selector.sentence)
        fail_usage(check + " reads weights only: --dataset '" + opt.dataset +
                   "' names a sentence (drop the sentence part)");
    const auto layers = indices(p.selector.layer, p.info.layers, "layer", p.info);
    const auto heads = indices(p.selector.head, p.info.heads, "head", p.info);
    std::vector<int> sentences = {-1};
    if (per_sentence) {
        sentences = indices(p.selector.sentence, p.info.sentences, "sentence", p.info);
        if (p.info.n_tokens.size() != static_cast<size_t>(p.info.sentences))
            fail_data(p.info.path + ": /sentences/n_tokens has " +
                      std::to_string(p.info.n_tokens.size()) + " entries for " +
                      std::to_string(p.info.sentences) + " sentences");
        std::stable_sort(sentences.begin(), sentences.end(), [&](int a, int b) {
            return p.info.n_tokens[size_t(a)] < p.info.n_tokens[size_t(b)];
        });
    }
    for (int l : layers) {
        p.regimes.push_back(p.info.name + "/L" + std::to_string(l));
        std::vector<ModelUnit> units;
        for (int s : sentences)
            for (int h : heads) units.push_back({l, h, s, s < 0 ? 0 : p.info.n_tokens[size_t(s)]});
        p.units.push_back(std::move(units));
    }
    return p;
}

long heads_per_sentence(const ModelPlan& plan) {
    if (plan.units.empty()) return 0;
    const auto& u = plan.units[0];
    return static_cast<long>(std::count_if(
        u.begin(), u.end(), [&](const ModelUnit& x) { return x.sentence == u[0].sentence; }));
}

CheckRun run_model_units(const RunOptions& opt, const ModelPlan& plan, const std::string& check,
                         const std::string& claim, const std::string& headline, long quick,
                         const std::function<CheckResult(const ModelUnit&)>& fn) {
    RunLoop loop(opt, check, claim, headline);
    const long all = plan.units.empty() ? 0 : static_cast<long>(plan.units[0].size());
    const long per = loop.per_regime(plan.regimes, std::min(quick, all), all);
    std::uint64_t i = 0;
    for (size_t r = 0; r < plan.regimes.size(); ++r) {
        const auto& units = plan.units[r];
        for (long t = 0; t < per && !loop.stopped(); ++t, ++i) {
            if (loop.skip(i, plan.regimes[r])) continue;
            if (t >= static_cast<long>(units.size())) {
                loop.drop();  // --trials asked for more units than the layer has
                continue;
            }
            const ModelUnit& unit = units[size_t(t)];
            loop.submit(
                plan.regimes[r], 0,
                [&fn, u = unit] {
                    CheckResult res = fn(u);
                    res.values.emplace_back("layer", u.layer);
                    res.values.emplace_back("head", u.head);
                    res.values.emplace_back("sentence", u.sentence);
                    return res;
                },
                {}, static_cast<double>(unit.n_tokens));  // units run shortest sentence first:
                                                          // a batch starts its longest ones first
        }
    }
    return loop.finish();
}

Head load_unit_head(const ModelPlan& plan, const ModelUnit& u, bool with_biases) {
    DatasetSelector sel;
    sel.name = plan.selector.name;
    sel.layer = u.layer;
    sel.head = u.head;
    if (u.sentence >= 0) sel.sentence = u.sentence;
    std::vector<SelectedHead> heads;
    {  // run_model_units calls this from its workers: HDF5 under the runner lock (any build;
       // verify's concurrent checks run their runner code, which reads HDF5, under it too)
        RunnerLock hdf5;
        heads = load_selected_heads(plan.info, sel, u.sentence >= 0);
    }
    if (heads.size() != 1)
        throw Error(ExitCode::Internal, "load_selected_heads(" + sel.describe() + ") returned " +
                                            std::to_string(heads.size()) + " heads, expected 1");
    Head h = std::move(heads[0].head_input);
    if (!with_biases) set_bias_form(h, BiasForm::drop);
    return h;
}

CheckResult experiment_record(const std::string& check, const std::string& claim,
                              std::vector<std::pair<std::string, std::string>> conventions,
                              const std::string& name, Eigen::MatrixXd m) {
    CheckResult res;
    res.check = check;
    res.claim = claim;
    res.conventions = std::move(conventions);
    res.instance.emplace_back(name, std::move(m));
    res.note = "experiment record: no claim is tested, so no verdict";
    res.verdict = Verdict::not_applicable;
    return res;
}

std::string set_bias_form(Head& h, BiasForm form) {
    std::vector<Head> one;
    one.push_back(std::move(h));
    std::string text = apply_bias_form(one, form);
    h = std::move(one[0]);
    return text;
}

std::string records_bias_form(const std::vector<CheckResult>& results) {
    if (!results.empty())
        for (const auto& [k, v] : results.front().conventions)
            if (k == "bias_form") return v;
    return "";
}

void ModelTableRows::begin(const std::vector<std::string>& extra_axes,
                           const std::vector<std::string>& columns) {
    table.axis_names = {"layer", "head"};
    if (with_sentence) table.axis_names.emplace_back("sentence");
    table.axis_names.insert(table.axis_names.end(), extra_axes.begin(), extra_axes.end());
    table.value_names = columns;
    table.axes.assign(table.axis_names.size(), {});
    table.values.assign(columns.size(), {});
}

void ModelTableRows::row(const CheckResult& r, const std::vector<std::string>& extra,
                         const std::vector<double>& values) {
    size_t a = 0;
    for (const char* k : {"layer", "head", "sentence"}) {
        if (std::string(k) == "sentence" && !with_sentence) continue;
        table.axes[a++].push_back(std::to_string(static_cast<long>(r.value(k))));
    }
    for (const auto& e : extra) table.axes[a++].push_back(e);
    for (size_t v = 0; v < values.size(); ++v) table.values[v].push_back(values[v]);
}

std::string distribution_text(std::vector<double> v, double threshold) {
    v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
    if (v.empty()) return "no values";
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    const double median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    const auto above = std::count_if(v.begin(), v.end(), [&](double x) { return x >= threshold; });
    char buf[200];
    std::snprintf(buf, sizeof buf, "min %.4g, median %.4g, max %.4g", v.front(), median, v.back());
    std::string out = buf;
    if (std::isnan(threshold)) return out;
    std::snprintf(buf, sizeof buf, "; %ld of %zu (%.1f%%) >= %g", static_cast<long>(above), n,
                  100.0 * double(above) / double(n), threshold);
    return out + buf;
}

}  // namespace attnspec::proofs
