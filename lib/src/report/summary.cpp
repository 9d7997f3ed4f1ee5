#include "attnspec/report/summary.hpp"

#include <sstream>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/format.hpp"
#include "attnspec/report/check_output.hpp"
#include "attnspec/report/experiment_output.hpp"

namespace attnspec {

namespace {
std::string num(double x) { return format_number(x, 6); }
}  // namespace

bool replays_from_seed(const StoredRecord& rec) {
    return rec.regime.rfind("search/", 0) != 0 && !rec.seed.empty() && rec.seed != "0";
}

std::string stored_records_heading(const CheckRunSummary& c) {
    long seeded = 0;
    for (const auto& rec : c.records) seeded += replays_from_seed(rec) ? 1 : 0;
    const long files = static_cast<long>(c.records.size()) - seeded;
    const std::string replay = "`attnspec verify " + c.name +
                               " --instance <report> --record instance_<i>` replays each from its "
                               "stored inputs";
    if (files == 0) return "Stored records (replayable from their seeds; " + replay + "):";
    if (seeded == 0)
        return "Stored records (" + replay +
               "; none is drawn by a seed: search results or heads read from an input):";
    return "Stored records (" + replay + "; " + std::to_string(seeded) +
           " also replay from their seeds, " + std::to_string(files) +
           " marked 'from its file only' do not: search results or heads read from an input):";
}

std::string stored_record_lines(const CheckRunSummary& c) {
    std::ostringstream os;
    for (const auto& rec : c.records) {
        const std::string label = rec.verdict == "violated"
                                      ? robustness_label(rec.violation_robust, rec.sigma_ratio)
                                      : "";
        os << "[" << rec.verdict << "] regime " << rec.regime << ", seed " << rec.seed
           << (rec.is_worst ? " (tightest)" : "") << (label.empty() ? "" : ", " + label)
           << (replays_from_seed(rec) ? "" : ", from its file only") << "\n";
        for (const auto& cm : rec.comparisons)
            os << "    " << cm.name << ": " << cm.lhs_name << " = " << num(cm.lhs) << " "
               << cm.relation << " " << cm.rhs_name << " = " << num(cm.rhs) << " -> " << cm.verdict
               << " (" << cm.basis << ")\n";
    }
    return os.str();
}

namespace {
// The regime table of every check run: each column a 1-D numeric dataset with one value per name
// in regimes/regime (read_check_runs indexes them by regime), checked before anything is read.
void check_regime_tables(const H5Reader& r) {
    const std::string root = std::string("/") + check_runs_group();
    if (!r.exists(root)) return;
    for (const auto& name : r.children(root)) {
        const std::string t = root + "/" + name + "/regimes";
        if (!r.exists(t + "/regime")) continue;  // read_check_runs names what is missing
        const auto rows = r.shape(t + "/regime");
        if (rows.size() != 1) fail_data(r.path() + ": '" + t + "/regime' is not 1-D");
        std::vector<std::string> columns{"worst_ratio", "median_ratio"};
        for (int v = 0; v < 4; ++v)
            columns.push_back(std::string("n_") + to_string(static_cast<Verdict>(v)));
        for (const auto& c : columns) {
            const std::string d = t + "/" + c;
            if (!r.exists(d)) fail_data(r.path() + ": no dataset '" + d + "'");
            const auto dims = r.shape(d);
            const std::string type = r.dtype(d);
            if (type.rfind("float", 0) != 0 && type.rfind("int", 0) != 0 &&
                type.rfind("uint", 0) != 0)
                fail_data(r.path() + ": dataset '" + d + "' is " + type + ", expected numbers");
            if (dims.size() != 1 || dims[0] != rows[0]) {
                std::string shape;
                for (size_t i = 0; i < dims.size(); ++i)
                    shape += (i ? ", " : "") + std::to_string(dims[i]);
                fail_data(r.path() + ": dataset '" + d + "' has shape (" + shape +
                          (dims.size() == 1 ? ",)" : ")") + ", expected (" +
                          std::to_string(rows[0]) + ",): one value per row of '" + t + "/regime'");
            }
        }
    }
}
}  // namespace

namespace {
// The `convention:<name>` attributes of the stored records of every run under /checks.
std::map<std::string, std::vector<std::pair<std::string, std::string>>> read_conventions(
    const H5Reader& r) {
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> out;
    const std::string root = std::string("/") + check_runs_group(), prefix = "convention:";
    if (!r.exists(root)) return out;
    for (const auto& run : r.children(root)) {
        const std::string recs = root + "/" + run + "/records";
        if (!r.exists(recs) || !r.is_group(recs)) continue;
        std::map<std::string, std::string> seen;
        for (const auto& rec : r.children(recs))
            for (const auto& a : r.attr_names(recs + "/" + rec)) {
                if (a.rfind(prefix, 0) != 0) continue;
                const std::string v = r.attr_as_text(recs + "/" + rec, a);
                auto [it, fresh] = seen.emplace(a.substr(prefix.size()), v);
                if (!fresh && it->second != v) it->second = "varies by record";
            }
        out[run].assign(seen.begin(), seen.end());
    }
    return out;
}
}  // namespace

ReportSummary read_report_summary(const H5Reader& r) {
    check_regime_tables(r);
    ReportSummary s;
    for (const auto& a : r.attr_names("/")) s.provenance.emplace_back(a, r.attr_as_text("/", a));
    for (const auto& g : r.children("/"))
        if (g != check_runs_group()) s.other_groups.push_back(g);
    s.checks = read_check_runs(r);
    s.experiments = read_experiment_runs(r);
    s.conventions = read_conventions(r);
    return s;
}

std::string render_checks_text(const ReportSummary& s) {
    std::ostringstream os;
    for (const auto& c : s.checks) {
        os << c.name << ": " << c.verdict << " over " << c.instances << " instances (holds "
           << c.counts[0] << ", violated " << c.counts[1] << ", inconclusive " << c.counts[2]
           << ", not applicable " << c.counts[3] << ") in " << format_duration(c.seconds) << "\n";
        os << "  claim: " << c.claim << "\n";
        for (const auto& r : c.regimes)
            os << "  " << r.regime << ": " << r.counts[0] << "/" << r.counts[1] << "/"
               << r.counts[2] << "/" << r.counts[3] << "  worst ratio " << num(r.worst_ratio)
               << ", median " << num(r.median_ratio) << "\n";
        std::istringstream lines(stored_record_lines(c));
        for (std::string l; std::getline(lines, l);) os << "  " << l << "\n";
    }
    for (const auto& e : s.experiments) os << render_experiment_text(e);
    for (const auto& g : s.other_groups) os << "group /" << g << " (see --tree)\n";
    return os.str();
}

std::string render_show_text(const std::string& file, const ReportSummary& s,
                             const std::string& body) {
    std::ostringstream os;
    os << "report " << file << "\n";
    for (const auto& [k, v] : s.provenance) os << "  " << k << ": " << v << "\n";
    os << "\n" << (body.empty() ? render_checks_text(s) : body);
    return os.str();
}

std::string render_tree(const H5Reader& r) {
    std::ostringstream os;
    for (const H5TreeEntry& e : r.tree(kMaxTreeDepth)) {
        os << std::string(2 * e.depth, ' ') << e.name;
        switch (e.kind) {
            case H5TreeEntry::Group:
                os << "/\n";
                break;
            case H5TreeEntry::Dataset:
                os << "  (";
                for (size_t i = 0; i < e.dims.size(); ++i) os << (i ? ", " : "") << e.dims[i];
                os << (e.dims.size() == 1 ? ",)" : ")") << "\n";
                break;
            case H5TreeEntry::Repeat:
                os << "  -> " << e.first_path << " (listed above; a link cycle is not followed)\n";
                break;
            case H5TreeEntry::External:
                os << "  (external link: not followed)\n";
                break;
            case H5TreeEntry::TooDeep:
                os << "... (deeper than " << kMaxTreeDepth << " levels: not shown)\n";
                break;
            case H5TreeEntry::Other:
                os << "  (dangling link or other object)\n";
                break;
        }
    }
    return os.str();
}

void json_report_summary(JsonWriter& j, const ReportSummary& s) {
    j.key("provenance").begin_object();
    for (const auto& [k, v] : s.provenance) j.kv(k, v);
    j.end_object();
    j.key("checks").begin_array();
    for (const auto& c : s.checks) {
        j.begin_object().kv("name", c.name).kv("kind", c.kind).kv("verdict", c.verdict);
        j.kv("claim", c.claim);
        if (!c.source.empty()) j.kv("source", c.source);
        j.kv("instances", c.instances).kv("n_holds", c.counts[0]).kv("n_violated", c.counts[1]);
        j.kv("n_inconclusive", c.counts[2]).kv("n_not_applicable", c.counts[3]).end_object();
    }
    j.end_array();
    j.key("experiments").begin_array();
    for (const auto& e : s.experiments)
        j.begin_object()
            .kv("name", e.name)
            .kv("kind", "experiment")
            .kv("source", e.source)
            .kv("claim", e.claim)
            .kv("instances", e.instances)
            .kv("rows", static_cast<std::int64_t>(e.table.rows()))
            .end_object();
    j.end_array();
}

}  // namespace attnspec
