// Experiment runs in a report (report/experiment_records.hpp; reports/SCHEMA.md, "Experiments").
#include "attnspec/report/experiment_records.hpp"

#include <set>
#include <sstream>

#include "attnspec/base/errors.hpp"

namespace attnspec {

namespace {
const char* const kKind = "experiment";

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
    return out;
}
std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
    return out;
}
}  // namespace

void write_experiment_run(H5Group& parent, const CheckRun& run) {
    H5Group g = parent.group(run.check);
    g.attr("kind", kKind);
    g.attr("check", run.check);
    g.attr("claim", run.claim);
    g.attr("seed", std::to_string(run.seed));
    g.attr("instances", static_cast<std::int64_t>(run.results.size()));
    g.attr("seconds", run.seconds);
    if (!run.source.empty()) g.attr("source", run.source);
    const ExperimentTable& t = run.table;
    g.attr("axes", joined(t.axis_names));
    g.attr("columns", joined(t.value_names));
    g.attr("rows", static_cast<std::int64_t>(t.rows()));
    {
        H5Group tg = g.group("table");
        for (size_t a = 0; a < t.axis_names.size(); ++a) tg.write(t.axis_names[a], t.axes[a]);
        for (size_t v = 0; v < t.value_names.size(); ++v) tg.write(t.value_names[v], t.values[v]);
        for (const auto& [name, text] : t.attributes) tg.attr(name, text);
    }
    // One example record (a whole curve, replayable) per regime without its first component.
    H5Group recs = g.group("records");
    std::set<std::string> seen;
    for (size_t i = 0; i < run.results.size() && seen.size() < 64; ++i) {
        const std::string& reg = run.results[i].regime;
        const auto slash = reg.find('/');
        if (!seen.insert(slash == std::string::npos ? reg : reg.substr(slash + 1)).second) continue;
        H5Group x = recs.group("instance_" + std::to_string(i));
        write_check_result(x, run.results[i]);
    }
}

bool is_experiment_group(const H5Reader& r, const std::string& path) {
    return r.has_attr(path, "kind") && r.attr_string(path, "kind") == kKind;
}

std::vector<StoredExperiment> read_experiment_runs(const H5Reader& r) {
    std::vector<StoredExperiment> out;
    const std::string root = std::string("/") + check_runs_group();
    if (!r.exists(root)) return out;
    for (const auto& name : r.children(root)) {
        const std::string p = root + "/" + name;
        if (!is_experiment_group(r, p)) continue;
        StoredExperiment e;
        e.name = name;
        e.claim = r.attr_string(p, "claim");
        e.seed = r.attr_string(p, "seed");
        e.instances = r.attr_count(p, "instances");
        e.seconds = r.attr_double(p, "seconds");
        if (r.has_attr(p, "source")) e.source = r.attr_string(p, "source");
        const auto rows = static_cast<size_t>(r.attr_count(p, "rows"));
        ExperimentTable& t = e.table;
        t.axis_names = split(r.attr_string(p, "axes"));
        t.value_names = split(r.attr_string(p, "columns"));
        for (const auto& a : t.axis_names) t.axes.push_back(r.strings(p + "/table/" + a));
        for (const auto& v : t.value_names) t.values.push_back(r.vector(p + "/table/" + v));
        for (const auto& a : r.attr_names(p + "/table"))
            t.attributes.emplace_back(a, r.attr_as_text(p + "/table", a));
        for (const auto& col : t.axes)
            if (col.size() != rows) fail_data(r.path() + ": " + p + "/table has a short column");
        for (const auto& col : t.values)
            if (col.size() != rows) fail_data(r.path() + ": " + p + "/table has a short column");
        const std::string recs = p + "/records";
        if (r.exists(recs))
            for (const auto& rec : r.children(recs))
                e.records.push_back(read_check_record(r, recs + "/" + rec));
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace attnspec
