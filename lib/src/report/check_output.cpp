// Printing of check runs and records (report/check_output.hpp).
#include "attnspec/report/check_output.hpp"

#include <cmath>
#include <cstdio>

#include "attnspec/base/format.hpp"
#include "attnspec/io/provenance.hpp"
#include "attnspec/report/experiment_output.hpp"

namespace attnspec {

namespace {
std::string fmt(const char* f, double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, x);
    return buf;
}
const CheckResult* worst_record(const CheckRun& run) {
    const CheckResult* w = nullptr;
    for (const auto& r : run.results) {
        if (r.verdict == Verdict::violated) return &r;
        const Comparison* c = r.comparison(run.headline);
        if (r.verdict != Verdict::not_applicable && c && std::isfinite(c->ratio) &&
            (!w || c->ratio > w->comparison(run.headline)->ratio))
            w = &r;
    }
    return w;
}
// The kind and source line of a check on the console: what it is, and that it is reconstructed.
std::string kind_words(const std::string& kind) {
    if (kind == "reading")
        return "reading: an alternative reading, probed to map where it holds; decides the exit "
               "code only with --fail-on ...,readings";
    return kind;
}
}  // namespace

std::string robustness_label(double violation_robust, double sigma_ratio) {
    if (violation_robust == 1.0) return "robust violation";
    if (violation_robust == 0.0)
        return "fragile violation (sigma_min/sigma_max(J) = " + fmt("%.2g", sigma_ratio) +
               ": not violated at some rank tolerance up to 1e-8)";
    return "";
}

void print_runs_human(std::ostream& os, const std::vector<CheckRun>& runs,
                      const std::string& report) {
    char line[256];
    for (const auto& run : runs) {
        if (run.kind == "experiment") {  // a table, no verdict (report/experiment_output.hpp)
            print_experiment_human(os, run);
            continue;
        }
        os << run.check << ": " << to_string(run.verdict) << " (" << run.kind << ")  (" << run.claim
           << ")\n";
        os << "  " << kind_words(run.kind) << "; reconstructed statement"
           << (run.source.empty() ? std::string() : ", source: " + run.source) << "\n";
        std::snprintf(line, sizeof line, "  %-32s %6s %6s %6s %6s %6s %12s %12s\n", "regime", "n",
                      "holds", "viol", "incon", "n/a", "worst ratio", "median ratio");
        os << line;
        for (const auto& s : run.regimes) {
            int n = s.counts[0] + s.counts[1] + s.counts[2] + s.counts[3];
            std::snprintf(line, sizeof line, "  %-32s %6d %6d %6d %6d %6d %12.6g %12.6g\n",
                          s.regime.c_str(), n, s.counts[0], s.counts[1], s.counts[2], s.counts[3],
                          s.worst_ratio, s.median_ratio);
            os << line;
        }
        os << "  ratio = lhs/rhs of '" << run.headline << "'; " << run.results.size()
           << " instances in " << format_duration(run.seconds) << ", seed " << run.seed << "\n";
        if (!run.search_effort.empty()) os << "  search: " << run.search_effort << "\n";
        if (run.results.empty()) os << "  no instance ran: nothing was checked\n";
        if (const CheckResult* w = worst_record(run)) {
            os << "  "
               << (w->verdict == Verdict::violated ? "first violation" : "tightest instance")
               << ": regime " << w->regime << ", seed " << w->seed;
            const std::string label = w->verdict == Verdict::violated
                                          ? robustness_label(w->value("violation_robust"),
                                                             w->value("sigma_min/sigma_max(J)"))
                                          : "";
            os << (label.empty() ? "" : ", " + label) << "\n";
            for (const auto& c : w->comparisons)
                os << "    " << c.name << ": " << c.lhs_name << " = " << format_exact(c.lhs) << " "
                   << to_string(c.rel) << " " << c.rhs_name << " = " << format_exact(c.rhs)
                   << "  -> " << to_string(c.verdict) << " (" << c.basis << ", margin "
                   << fmt("%.3g", c.margin) << ")\n";
        }
        os << "\n";
    }
    if (!report.empty()) os << "report: " << report << "\n";
}

void print_record_human(std::ostream& os, const CheckResult& r, const std::string& kind,
                        const std::string& source) {
    os << r.check << ": " << to_string(r.verdict) << " (" << kind << ")  (" << r.claim << ")\n";
    os << "  " << kind_words(kind) << "; reconstructed statement"
       << (source.empty() ? std::string() : ", source: " + source) << "\n";
    if (r.verdict == Verdict::violated) {
        const std::string label =
            robustness_label(r.value("violation_robust"), r.value("sigma_min/sigma_max(J)"));
        if (!label.empty()) os << "  " << label << "\n";
    }
    if (!r.regime.empty()) os << "  regime " << r.regime << ", seed " << r.seed << "\n";
    for (const auto& h : r.hypotheses)
        os << "  hypothesis " << h.name << ": " << (h.met ? "met" : "NOT met") << " (" << h.detail
           << ")\n";
    for (const auto& c : r.comparisons)
        os << "  " << c.name << ": " << c.lhs_name << " = "
           << format_enclosure(c.lhs, c.lhs_enc.lo, c.lhs_enc.hi) << " " << to_string(c.rel) << " "
           << c.rhs_name << " = " << format_enclosure(c.rhs, c.rhs_enc.lo, c.rhs_enc.hi) << " -> "
           << to_string(c.verdict) << " (" << c.basis << ", margin " << fmt("%.3g", c.margin)
           << ")\n";
    for (const auto& [k, v] : r.values) os << "  " << k << " = " << format_exact(v) << "\n";
    for (const auto& t : r.tolerances)
        os << "  tolerance " << t.name << " = " << fmt("%.3g", t.value) << " (" << t.reason
           << ")\n";
    for (const auto& [k, v] : r.conventions) os << "  convention " << k << ": " << v << "\n";
    if (!r.note.empty()) os << "  note: " << r.note << "\n";
}

void json_check_result(JsonWriter& j, const CheckResult& r) {
    j.begin_object();
    j.kv("check", r.check)
        .kv("regime", r.regime)
        .kv("seed", r.seed)
        .kv("verdict", to_string(r.verdict));
    j.key("hypotheses").begin_array();
    for (const auto& h : r.hypotheses)
        j.begin_object().kv("name", h.name).kv("met", h.met).kv("detail", h.detail).end_object();
    j.end_array();
    j.key("comparisons").begin_array();
    for (const auto& c : r.comparisons) {
        j.begin_object().kv("name", c.name).kv("relation", to_string(c.rel));
        j.kv("lhs_name", c.lhs_name).kv("lhs", c.lhs);
        j.key("lhs_enclosure").values({c.lhs_enc.lo, c.lhs_enc.hi});
        j.kv("rhs_name", c.rhs_name).kv("rhs", c.rhs);
        j.key("rhs_enclosure").values({c.rhs_enc.lo, c.rhs_enc.hi});
        j.kv("margin", c.margin).kv("ratio", c.ratio).kv("verdict", to_string(c.verdict));
        j.kv("basis", c.basis).end_object();
    }
    j.end_array();
    j.key("tolerances").begin_array();
    for (const auto& t : r.tolerances)
        j.begin_object()
            .kv("name", t.name)
            .kv("value", t.value)
            .kv("reason", t.reason)
            .end_object();
    j.end_array();
    j.key("conventions").begin_object();
    for (const auto& [k, v] : r.conventions) j.kv(k, v);
    j.end_object();
    j.key("values").begin_object();
    for (const auto& [k, v] : r.values) j.kv(k, v);
    j.end_object();
    if (!r.note.empty()) j.kv("note", r.note);
    j.end_object();
}

void json_check_runs(JsonWriter& j, const std::vector<CheckRun>& runs, const std::string& report) {
    j.kv("statements", statements_note());
    if (!report.empty()) j.kv("report", report);
    j.key("checks").begin_array();
    for (const auto& run : runs) {
        if (run.kind == "experiment") {
            json_experiment_run(j, run);
            continue;
        }
        j.begin_object();
        j.kv("name", run.check)
            .kv("kind", run.kind)
            .kv("claim", run.claim)
            .kv("verdict", to_string(run.verdict));
        j.kv("instances", static_cast<int>(run.results.size()));
        for (int v = 0; v < 4; ++v)
            j.kv(std::string("n_") + to_string(static_cast<Verdict>(v)),
                 run.count(static_cast<Verdict>(v)));
        j.kv("seed", run.seed).kv("seconds", run.seconds).kv("headline_comparison", run.headline);
        if (!run.search_effort.empty()) j.kv("search_effort", run.search_effort);
        if (!run.source.empty()) j.kv("source", run.source);
        j.key("regimes").begin_array();
        for (const auto& s : run.regimes) {
            j.begin_object().kv("regime", s.regime);
            for (int v = 0; v < 4; ++v)
                j.kv(std::string("n_") + to_string(static_cast<Verdict>(v)), s.counts[v]);
            j.kv("worst_ratio", s.worst_ratio).kv("median_ratio", s.median_ratio).end_object();
        }
        j.end_array();
        if (const CheckResult* w = worst_record(run)) {
            j.key(w->verdict == Verdict::violated ? "first_violation" : "tightest_instance");
            json_check_result(j, *w);
        }
        j.end_object();
    }
    j.end_array();
}

void json_replay(JsonWriter& j, const CheckResult& r, const std::string& file,
                 const std::string& group, const std::string& kind, const std::string& source) {
    j.kv("file", file).kv("group", group).kv("kind", kind);
    if (!source.empty()) j.kv("source", source);
    if (r.verdict == Verdict::violated) {
        const double robust = r.value("violation_robust");
        if (robust == 0.0 || robust == 1.0) j.kv("robust", robust == 1.0);
    }
    j.key("record");
    json_check_result(j, r);
}

}  // namespace attnspec
