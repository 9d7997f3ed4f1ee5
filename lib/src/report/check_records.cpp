// Check records, check runs and instance files (report/check_records.hpp; reports/SCHEMA.md).
#include "attnspec/report/check_records.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

#include "attnspec/base/errors.hpp"
#include "attnspec/io/report_writer.hpp"
#include "attnspec/report/experiment_records.hpp"

namespace attnspec {

namespace {
const char* const kChecks = "checks";
const char* const kRecords = "records";
const char* const kInstanceKind = "attnspec-instance";

std::string verdict_count_name(int v) {
    return std::string("n_") + to_string(static_cast<Verdict>(v));
}
// "/a" + "/b" without a doubled slash when the group is the root.
std::string under(const std::string& group, const std::string& rel) {
    return (group == "/" ? "" : group) + "/" + rel;
}
}  // namespace

// ---------------------------------------------------------------- checks
void write_check_result(H5Group& g, const CheckResult& r) {
    g.attr("check", r.check);
    g.attr("claim", r.claim);
    g.attr("regime", r.regime);
    g.attr("seed", std::to_string(r.seed));
    g.attr("verdict", to_string(r.verdict));
    if (!r.note.empty()) g.attr("note", r.note);
    for (const auto& [k, v] : r.conventions) g.attr("convention:" + k, v);
    {
        H5Group h = g.group("hypotheses");
        for (const auto& hy : r.hypotheses) {
            H5Group x = h.group(hy.name);
            x.attr("met", static_cast<std::int64_t>(hy.met));
            x.attr("detail", hy.detail);
        }
    }
    {
        H5Group c = g.group("comparisons");
        for (const auto& cm : r.comparisons) {
            H5Group x = c.group(cm.name);
            x.attr("relation", to_string(cm.rel));
            x.attr("lhs_name", cm.lhs_name);
            x.attr("rhs_name", cm.rhs_name);
            x.attr("lhs", cm.lhs);
            x.attr("rhs", cm.rhs);
            x.write("lhs_enclosure", std::vector<double>{cm.lhs_enc.lo, cm.lhs_enc.hi});
            x.write("rhs_enclosure", std::vector<double>{cm.rhs_enc.lo, cm.rhs_enc.hi});
            x.attr("margin", cm.margin);
            x.attr("ratio", cm.ratio);
            x.attr("verdict", to_string(cm.verdict));
            x.attr("basis", cm.basis);
            x.attr("attainable", static_cast<std::int64_t>(cm.attainable));
        }
    }
    {
        H5Group t = g.group("tolerances");
        for (const auto& tol : r.tolerances) {
            H5Group x = t.group(tol.name);
            x.attr("value", tol.value);
            x.attr("reason", tol.reason);
        }
    }
    {
        H5Group v = g.group("values");
        for (const auto& [k, x] : r.values) v.attr(k, x);
    }
    {
        H5Group in = g.group("instance");
        for (const auto& [k, m] : r.instance) {
            if (k.rfind("b_", 0) == 0 && m.cols() == 1)  // a bias: shape (d,) as in the inputs
                in.write(k, std::vector<double>(m.data(), m.data() + m.size()));
            else
                in.write(k, m);
        }
    }
}

void write_check_run(H5Group& parent, const CheckRun& run, const CounterexampleFiles* files) {
    H5Group g = parent.group(run.check);
    g.attr("kind", run.kind);
    if (files) {
        g.attr("counterexample_files", static_cast<std::int64_t>(files->names.size()));
        g.attr("counterexample_cap", static_cast<std::int64_t>(files->cap));
        g.attr("counterexample_dir", files->dir);
    }
    g.attr("check", run.check);
    g.attr("claim", run.claim);
    g.attr("verdict", to_string(run.verdict));
    g.attr("seed", std::to_string(run.seed));
    g.attr("instances", static_cast<std::int64_t>(run.results.size()));
    for (int v = 0; v < 4; ++v) g.attr(verdict_count_name(v), run.count(static_cast<Verdict>(v)));
    g.attr("headline_comparison", run.headline);
    g.attr("seconds", run.seconds);
    if (!run.search_effort.empty()) g.attr("search_effort", run.search_effort);
    if (!run.source.empty()) g.attr("source", run.source);

    // Per-instance table (one row per instance).
    std::vector<std::string> regime, verdict, seeds;
    std::vector<double> lhs, rhs, margin, ratio;
    for (const auto& r : run.results) {
        regime.push_back(r.regime);
        verdict.emplace_back(to_string(r.verdict));
        seeds.push_back(std::to_string(r.seed));
        const Comparison* c = r.comparison(run.headline);
        const double nan = std::numeric_limits<double>::quiet_NaN();
        lhs.push_back(c ? c->lhs : nan);
        rhs.push_back(c ? c->rhs : nan);
        margin.push_back(c ? c->margin : nan);
        ratio.push_back(c ? c->ratio : nan);
    }
    {
        H5Group t = g.group("instances");
        t.write("regime", regime);
        t.write("verdict", verdict);
        t.write("seed", seeds);
        t.write("lhs", lhs);
        t.write("rhs", rhs);
        t.write("margin", margin);
        t.write("ratio", ratio);
    }
    {
        H5Group t = g.group("regimes");
        std::vector<std::string> names;
        std::vector<std::int64_t> cnt[4];
        std::vector<double> worst, median;
        for (const auto& s : run.regimes) {
            names.push_back(s.regime);
            for (int v = 0; v < 4; ++v) cnt[v].push_back(s.counts[v]);
            worst.push_back(s.worst_ratio);
            median.push_back(s.median_ratio);
        }
        t.write("regime", names);
        for (int v = 0; v < 4; ++v) t.write(verdict_count_name(v), cnt[v]);
        t.write("worst_ratio", worst);
        t.write("median_ratio", median);
    }
    // Full records: every violated / inconclusive instance, plus the instance with the worst
    // headline ratio (so the tightest case can be replayed even when everything holds).
    H5Group recs = g.group(kRecords);
    int worst = -1;
    double worst_ratio = -std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < run.results.size(); ++i) {
        const Comparison* c = run.results[i].comparison(run.headline);
        if (c && std::isfinite(c->ratio) && c->ratio > worst_ratio &&
            run.results[i].verdict != Verdict::not_applicable) {
            worst_ratio = c->ratio;
            worst = static_cast<int>(i);
        }
    }
    int written = 0;
    for (size_t i = 0; i < run.results.size(); ++i) {
        const auto& r = run.results[i];
        const bool keep = static_cast<int>(i) == worst || r.verdict == Verdict::violated ||
                          r.verdict == Verdict::inconclusive;
        if (!keep || written >= 64) continue;
        H5Group x = recs.group("instance_" + std::to_string(i));
        if (static_cast<int>(i) == worst) x.attr("is_worst", static_cast<std::int64_t>(1));
        write_check_result(x, r);
        ++written;
    }
}

void write_check_runs(H5Group& root, const std::vector<CheckRun>& runs,
                      const std::vector<CounterexampleFiles>* files) {
    if (files && files->size() != runs.size())
        throw Error(ExitCode::Internal, "write_check_runs: one CounterexampleFiles per run");
    H5Group checks = root.group(kChecks);
    for (size_t i = 0; i < runs.size(); ++i)
        if (runs[i].kind == "experiment")
            write_experiment_run(checks, runs[i]);  // report/experiment_records.hpp
        else
            write_check_run(checks, runs[i], files ? &(*files)[i] : nullptr);
}

void write_instance_file(const std::string& path, const CheckResult& r, const Provenance& prov) {
    ReportWriter w(path, prov);
    w.root().attr("kind", kInstanceKind);
    w.root().attr("check", r.check);
    H5Group g = w.root().group("record");
    write_check_result(g, r);
    w.commit();
}

CounterexampleFiles write_counterexample_files(const CheckRun& run, const std::string& dir,
                                               const Provenance& prov, int max_files) {
    CounterexampleFiles out;
    out.cap = max_files;
    for (size_t i = 0; i < run.results.size(); ++i) {
        const CheckResult& r = run.results[i];
        if (r.verdict != Verdict::violated) continue;
        ++out.violated;
        if (static_cast<int>(out.names.size()) >= max_files) continue;
        const std::string name = run.check + "-instance_" + std::to_string(i) + ".h5";
        Provenance p = prov;
        p.seed = r.seed;
        write_instance_file(dir + "/" + name, r, p);
        out.names.push_back(name);
    }
    return out;
}

void write_verify_runs(ReportWriter& w, const std::vector<CheckRun>& runs, const Provenance& prov,
                       const std::function<void(const std::string&)>& note) {
    std::vector<CounterexampleFiles> files;
    files.reserve(runs.size());
    for (const CheckRun& run : runs) {
        CounterexampleFiles f = write_counterexample_files(run, w.companion_staging(), prov);
        f.dir = w.companion_dir().substr(w.companion_dir().find_last_of('/') + 1);
        if (note && f.violated > 0)
            note(run.check + ": " + std::to_string(f.violated) + " violated, " +
                 std::to_string(f.names.size()) + " written (cap " + std::to_string(f.cap) +
                 ") to " + w.companion_dir() + "/ (replay: attnspec verify " + run.check +
                 " --instance " + w.companion_dir() + "/" + f.names.front() + ")");
        files.push_back(std::move(f));
    }
    write_check_runs(w.root(), runs, &files);
}

// ---------------------------------------------------------------- reading
StoredRecord read_check_record(const H5Reader& r, const std::string& group) {
    StoredRecord s;
    s.group = group;
    auto optional = [&](const char* name) {
        return r.has_attr(group, name) ? r.attr_string(group, name) : std::string();
    };
    s.check = optional("check");
    s.regime = optional("regime");
    s.seed = optional("seed");
    if (!s.seed.empty()) {  // a decimal integer that fits 64 bits, nothing else
        errno = 0;
        char* end = nullptr;
        const bool digits =
            s.seed.size() <= 20 && s.seed.find_first_not_of("0123456789") == std::string::npos;
        if (digits) std::strtoull(s.seed.c_str(), &end, 10);
        if (!digits || errno == ERANGE || !end || *end != '\0')
            fail_data(r.path() + ": attribute 'seed' of " + group + " is '" + s.seed.substr(0, 40) +
                      (s.seed.size() > 40 ? "..." : "") +
                      "', expected a decimal integer below 2^64");
    }
    s.verdict = r.attr_string(group, "verdict");
    s.is_worst = r.has_attr(group, "is_worst");
    const std::string values = under(group, "values");
    if (r.exists(values)) {
        if (r.has_attr(values, "violation_robust"))
            s.violation_robust = r.attr_double(values, "violation_robust");
        if (r.has_attr(values, "sigma_min/sigma_max(J)"))
            s.sigma_ratio = r.attr_double(values, "sigma_min/sigma_max(J)");
    }
    const std::string comparisons = under(group, "comparisons");
    if (!r.exists(comparisons)) return s;
    for (const auto& name : r.children(comparisons)) {
        const std::string cp = comparisons + "/" + name;
        StoredComparison c;
        c.name = name;
        c.lhs_name = r.attr_string(cp, "lhs_name");
        c.lhs = r.attr_double(cp, "lhs");
        c.relation = r.attr_string(cp, "relation");
        c.rhs_name = r.attr_string(cp, "rhs_name");
        c.rhs = r.attr_double(cp, "rhs");
        c.verdict = r.attr_string(cp, "verdict");
        c.basis = r.attr_string(cp, "basis");
        s.comparisons.push_back(std::move(c));
    }
    return s;
}

const char* check_runs_group() { return kChecks; }

std::vector<CheckRunSummary> read_check_runs(const H5Reader& r) {
    std::vector<CheckRunSummary> out;
    const std::string root = std::string("/") + kChecks;
    if (!r.exists(root)) return out;
    for (const auto& name : r.children(root)) {
        const std::string p = root + "/" + name;
        if (is_experiment_group(r, p)) continue;  // read by read_experiment_runs
        CheckRunSummary c;
        c.name = name;
        c.claim = r.attr_string(p, "claim");
        c.verdict = r.attr_string(p, "verdict");
        c.headline = r.attr_string(p, "headline_comparison");
        c.instances = r.attr_count(p, "instances");
        c.seconds = r.attr_double(p, "seconds");
        if (r.has_attr(p, "search_effort")) c.search_effort = r.attr_string(p, "search_effort");
        if (r.has_attr(p, "source")) c.source = r.attr_string(p, "source");
        if (r.has_attr(p, "kind")) c.kind = r.attr_string(p, "kind");
        for (int v = 0; v < 4; ++v) c.counts[v] = r.attr_count(p, verdict_count_name(v));
        const auto names = r.strings(p + "/regimes/regime");
        std::vector<std::vector<double>> cnt(4);
        std::vector<double> worst, median;
        if (!names.empty()) {
            for (int v = 0; v < 4; ++v) cnt[v] = r.vector(p + "/regimes/" + verdict_count_name(v));
            worst = r.vector(p + "/regimes/worst_ratio");
            median = r.vector(p + "/regimes/median_ratio");
            for (const auto* col : {&cnt[0], &cnt[1], &cnt[2], &cnt[3], &worst, &median})
                if (col->size() != names.size())
                    throw Error(ExitCode::DataError,
                                r.path() + ": " + p + "/regimes holds columns of " +
                                    std::to_string(col->size()) + " rows beside " +
                                    std::to_string(names.size()) + " regimes");
        }
        for (size_t i = 0; i < names.size(); ++i) {
            StoredRegime row;
            row.regime = names[i];
            for (int v = 0; v < 4; ++v)
                row.counts[v] = r.count_value(cnt[v][i], p + "/regimes/" + verdict_count_name(v) +
                                                             " row " + std::to_string(i));
            row.worst_ratio = worst[i];
            row.median_ratio = median[i];
            c.regimes.push_back(row);
        }
        const std::string recs = p + "/" + kRecords;
        if (r.exists(recs))
            for (const auto& rec : r.children(recs))
                c.records.push_back(read_check_record(r, recs + "/" + rec));
        out.push_back(std::move(c));
    }
    return out;
}

void check_replay_schema(const H5Reader& r) {
    const auto major = [](const std::string& v) { return v.substr(0, v.find('.')); };
    if (!r.has_attr("/", "schema_version"))
        fail_data(r.path() +
                  " is HDF5 but not an attnspec report or instance file (no schema_version)");
    if (const std::string v = r.attr_as_text("/", "schema_version");
        major(v) != major(kSchemaVersion))
        fail_data(r.path() + ": schema_version '" + v.substr(0, 40) +
                  "'; this attnspec reads schema " + major(kSchemaVersion) + ".x (" +
                  kSchemaVersion + ")");
}

std::string find_replay_record(const H5Reader& r, const std::string& check,
                               const std::string& record) {
    const std::string& file = r.path();
    if (r.has_attr("/", "kind") && r.attr_string("/", "kind") == kInstanceKind) {
        if (r.attr_string("/", "check") != check)
            fail_data(file + " holds an instance of '" + r.attr_string("/", "check") + "', not '" +
                      check + "'");
        return "/record";
    }
    const std::string recs = std::string("/") + kChecks + "/" + check + "/" + kRecords;
    if (!r.exists(recs)) fail_data(file + " has no stored records of check '" + check + "'");
    if (!record.empty()) {
        std::string group = recs + "/" + record;
        if (!r.exists(group)) fail_data(file + ": no record '" + record + "' under " + recs);
        return group;
    }
    std::string first;
    for (const auto& n : r.children(recs)) {
        std::string group = recs + "/" + n;
        if (r.attr_string(group, "verdict") == "violated") return group;
        if (first.empty()) first = group;
    }
    if (first.empty()) fail_data(file + " has no stored records of check '" + check + "'");
    return first;
}

Eigen::MatrixXd stored_matrix(const H5Reader& r, const std::string& group,
                              const std::string& name) {
    return r.matrix(under(group, "instance/" + name));
}

std::string check_replay_size(const H5Reader& r, const std::string& group) {
    const std::string inst = under(group, "instance");
    if (!r.exists(inst) || !r.is_group(inst)) return "";  // the replay names what is missing
    double bytes = 0;
    std::string shapes;
    for (const std::string& name : r.children(inst)) {
        const std::string path = inst + "/" + name;
        if (r.is_group(path)) continue;
        const auto dims = r.shape(path);
        double n = 1;
        std::string t;
        for (auto k : dims) n *= double(k), t += (t.empty() ? "" : " x ") + std::to_string(k);
        bytes += 8.0 * 8.0 * n;
        if (name == "X" && !dims.empty()) bytes += 8.0 * 8.0 * double(dims[0]) * double(dims[0]);
        if (shapes.size() < 200) shapes += (shapes.empty() ? "" : ", ") + name + " " + t;
    }
    r.check_fits(bytes, "replaying '" + group + "' (" + shapes + ")");
    return "replaying '" + group + "' (" + shapes + "): estimate " + human_bytes(bytes) +
           " of memory";
}

bool has_stored_matrix(const H5Reader& r, const std::string& group, const std::string& name) {
    return r.exists(under(group, "instance/" + name));
}

double stored_value(const H5Reader& r, const std::string& group, const std::string& name) {
    return r.attr_double(under(group, "values"), name);
}

}  // namespace attnspec
