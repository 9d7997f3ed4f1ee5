#include "attnspec/report/experiment_output.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "attnspec/base/format.hpp"

namespace attnspec {

namespace {
std::string num(double x) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.4g", x);
    return buf;
}

// Index of the column named `name` among the axes (-1 when absent).
int axis(const ExperimentTable& t, const std::string& name) {
    const auto it = std::find(t.axis_names.begin(), t.axis_names.end(), name);
    return it == t.axis_names.end() ? -1 : int(it - t.axis_names.begin());
}
int column(const ExperimentTable& t, const std::string& name) {
    const auto it = std::find(t.value_names.begin(), t.value_names.end(), name);
    return it == t.value_names.end() ? -1 : int(it - t.value_names.begin());
}

// Rows shown by `verify` / `report show`: lambda = 10 when the table has a lambda axis.
std::vector<size_t> rows_at_10(const ExperimentTable& t) {
    std::vector<size_t> rows;
    const int l = axis(t, "lambda");
    for (size_t i = 0; i < t.rows(); ++i)
        if (l < 0 || t.axes[size_t(l)][i] == "10") rows.push_back(i);
    return rows;
}

// Tables of more rows than this (the real-model experiments: one row per head) are not printed
// by `verify` and `report show`; the report, --json and `report render` hold them.
constexpr size_t kMaxRowsShown = 40;

// What the text output shows of a table: the rows at lambda = 10, all rows, or none.
std::string shown_rows(const ExperimentTable& t, const std::vector<size_t>& rows) {
    if (axis(t, "lambda") >= 0)
        return "rows at lambda = 10 of " + std::to_string(t.rows()) +
               " (every lambda: the report or --json)";
    return std::to_string(t.rows()) + " rows" +
           (rows.size() > kMaxRowsShown ? " (not shown: the report or --json)" : "");
}

// Fixed-width text table of `rows`: axes left-aligned, values right-aligned.
std::string text_table(const ExperimentTable& t, const std::vector<size_t>& rows) {
    std::vector<size_t> w;
    for (size_t a = 0; a < t.axes.size(); ++a) {
        size_t m = t.axis_names[a].size();
        for (size_t i : rows) m = std::max(m, t.axes[a][i].size());
        w.push_back(m);
    }
    std::ostringstream os;
    os << " ";
    for (size_t a = 0; a < t.axes.size(); ++a)
        os << " " << t.axis_names[a] << std::string(w[a] - t.axis_names[a].size(), ' ');
    for (const auto& v : t.value_names)
        os << " " << std::string(v.size() < 10 ? 10 - v.size() : 0, ' ') << v;
    os << "\n";
    for (size_t i : rows) {
        os << " ";
        for (size_t a = 0; a < t.axes.size(); ++a)
            os << " " << t.axes[a][i] << std::string(w[a] - t.axes[a][i].size(), ' ');
        for (size_t v = 0; v < t.values.size(); ++v) {
            const std::string x = num(t.values[v][i]);
            const size_t width = std::max<size_t>(10, t.value_names[v].size());
            os << " " << std::string(width > x.size() ? width - x.size() : 0, ' ') << x;
        }
        os << "\n";
    }
    return os.str();
}

// "lambda = 10 lowers kappa(J) in a of n instances (...); saturates the softmax in b of n".
std::string finding(const ExperimentTable& t) {
    const int n = column(t, "instances"), lo = column(t, "n_lowered"),
              sat = column(t, "n_saturated");
    if (n < 0 || lo < 0 || sat < 0) {  // other experiments state their finding themselves
        for (const auto& [name, text] : t.attributes)
            if (name == "finding") return text;
        return "";
    }
    double total = 0, lowered = 0, saturated = 0;
    std::string where;
    for (size_t i : rows_at_10(t)) {
        total += t.values[size_t(n)][i];
        lowered += t.values[size_t(lo)][i];
        saturated += t.values[size_t(sat)][i];
        if (t.values[size_t(lo)][i] > 0) {
            std::string cell;
            for (size_t a = 0; a + 1 < t.axes.size(); ++a) cell += (a ? "/" : "") + t.axes[a][i];
            where += (where.empty() ? "" : ", ") + cell + " (" + num(t.values[size_t(lo)][i]) +
                     "/" + num(t.values[size_t(n)][i]) + ")";
        }
    }
    return "On these random, untrained heads, lambda = 10 lowers kappa(J) (proved by enclosures) "
           "in " +
           num(lowered) + " of " + num(total) + " curves" + (where.empty() ? "" : ": " + where) +
           "; the softmax is saturated (max probability > 1 - 1e-6) in " + num(saturated) + " of " +
           num(total) +
           ". The sweep does not test trained weights nor training (the real-model analysis "
           "measures "
           "trained heads)";
}

std::string attribute(const ExperimentTable& t, const std::string& name) {
    for (const auto& [n, text] : t.attributes)
        if (n == name) return text;
    return "";
}
}  // namespace

std::string experiment_measures(const ExperimentTable& t) {
    const std::string weights = attribute(t, "weights");
    if (weights.empty()) return "";  // the real-model experiments state it in their question
    std::string out = "What it measures: kappa(J) on " + weights;
    const std::string correction = attribute(t, "correction"), tokens = attribute(t, "tokens");
    if (!correction.empty()) out += "; " + correction;
    const int l = axis(t, "lambda");
    if (l >= 0 && t.rows() > 0) {
        std::vector<double> lambdas;
        for (const auto& x : t.axes[size_t(l)]) lambdas.push_back(std::atof(x.c_str()));
        const auto [lo, hi] = std::minmax_element(lambdas.begin(), lambdas.end());
        out += ", lambda from " + num(*lo) + " to " + num(*hi);
    }
    if (!tokens.empty()) out += "; token scales " + tokens;
    return out + ".";
}

void print_experiment_human(std::ostream& os, const CheckRun& run) {
    os << run.check << ": experiment, no verdict  (" << run.claim << ")\n";
    if (!run.source.empty()) os << "  source: " << run.source << "\n";
    const std::string measures = experiment_measures(run.table);
    if (!measures.empty()) os << "  " << measures << "\n";
    const auto rows = rows_at_10(run.table);
    if (rows.size() <= kMaxRowsShown) os << text_table(run.table, rows);
    os << "  " << finding(run.table) << "\n";
    os << "  " << shown_rows(run.table, rows) << "; " << run.results.size() << " curves in "
       << format_duration(run.seconds) << ", seed " << run.seed << "\n\n";
}

void json_experiment_run(JsonWriter& j, const CheckRun& run) {
    const ExperimentTable& t = run.table;
    j.begin_object();
    j.kv("name", run.check).kv("kind", run.kind).kv("claim", run.claim);
    if (!run.source.empty()) j.kv("source", run.source);
    j.kv("instances", static_cast<int>(run.results.size()));
    j.kv("seed", run.seed).kv("seconds", run.seconds);
    j.key("axes").begin_array();
    for (const auto& a : t.axis_names) j.value(a);
    j.end_array();
    j.key("columns").begin_array();
    for (const auto& v : t.value_names) j.value(v);
    j.end_array();
    j.key("rows").begin_array();
    for (size_t i = 0; i < t.rows(); ++i) {
        j.begin_object();
        for (size_t a = 0; a < t.axes.size(); ++a) j.kv(t.axis_names[a], t.axes[a][i]);
        for (size_t v = 0; v < t.values.size(); ++v) j.kv(t.value_names[v], t.values[v][i]);
        j.end_object();
    }
    j.end_array();
    j.kv("finding", finding(t));
    j.end_object();
}

void print_experiment_record(std::ostream& os, const CheckResult& r) {
    os << r.check << ": experiment record, no verdict  (" << r.claim << ")\n";
    if (!r.regime.empty()) os << "  regime " << r.regime << ", seed " << r.seed << "\n";
    for (const auto& [k, v] : r.values) os << "  " << k << " = " << num(v) << "\n";
    for (const auto& [k, v] : r.conventions) os << "  convention " << k << ": " << v << "\n";
    for (const auto& [name, m] : r.instance) {
        if (name != "sweep") continue;
        os << "  curve (rows of instance/sweep):\n";
        for (Eigen::Index i = 0; i < m.rows(); ++i) {
            os << "   ";
            for (Eigen::Index c = 0; c < m.cols(); ++c) os << " " << num(m(i, c));
            os << "\n";
        }
    }
}

std::string render_experiment_text(const StoredExperiment& e) {
    std::ostringstream os;
    os << e.name << ": experiment over " << e.instances << " curves in "
       << format_duration(e.seconds) << ", no verdict\n  question: " << e.claim << "\n";
    if (!e.source.empty()) os << "  source: " << e.source << "\n";
    const std::string measures = experiment_measures(e.table);
    if (!measures.empty()) os << "  " << measures << "\n";
    const auto rows = rows_at_10(e.table);
    if (rows.size() <= kMaxRowsShown) os << text_table(e.table, rows);
    os << "  " << finding(e.table) << "\n";
    if (rows.size() > kMaxRowsShown) os << "  " << shown_rows(e.table, rows) << "\n";
    return os.str();
}

std::string experiment_finding(const ExperimentTable& t) { return finding(t); }

}  // namespace attnspec
