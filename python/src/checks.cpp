// The theorem checks (proofs/registry.hpp): the table `attnspec verify --list` prints, runs of
// checks through proofs::run_checks (the scheduler of `verify --threads`), and the replay of a
// stored record (`verify CHECK --instance FILE`: report/check_records.hpp find_replay_record, then
// proofs::replay_record). Results go back as dicts and numpy arrays that python/attnspec/checks.py
// turns into objects and tables; the per-instance table has the columns of a report's
// /checks/<check>/instances (report/check_records.cpp). The runs release the GIL.
#include <nanobind/eigen/dense.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/parallel.hpp"
#include "attnspec/io/h5.hpp"
#include "attnspec/io/provenance.hpp"
#include "attnspec/io/report_writer.hpp"
#include "attnspec/proofs/registry.hpp"
#include "attnspec/report/check_records.hpp"
#include "bindings.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace attnspec::python {
namespace {

nb::dict info_dict(const proofs::CheckInfo& c) {
    nb::dict d;
    d["name"] = c.name, d["summary"] = c.summary, d["statement"] = c.statement_file;
    d["source"] = c.source, d["kind"] = std::string(proofs::to_string(c.kind));
    d["needs_dataset"] = c.needs_dataset, d["replayable"] = static_cast<bool>(c.replay);
    return d;
}

nb::list list_checks() {
    nb::list l;
    for (const proofs::CheckInfo& c : proofs::registry()) l.append(info_dict(c));
    return l;
}

nb::dict comparison_dict(const Comparison& c) {
    nb::dict d;
    d["name"] = c.name, d["relation"] = std::string(to_string(c.rel));
    d["lhs_name"] = c.lhs_name, d["lhs"] = c.lhs, d["lhs_lo"] = c.lhs_enc.lo;
    d["lhs_hi"] = c.lhs_enc.hi, d["rhs_name"] = c.rhs_name, d["rhs"] = c.rhs;
    d["rhs_lo"] = c.rhs_enc.lo, d["rhs_hi"] = c.rhs_enc.hi, d["margin"] = c.margin;
    d["ratio"] = c.ratio, d["verdict"] = std::string(to_string(c.verdict));
    d["basis"] = c.basis, d["attainable"] = c.attainable;
    return d;
}

// One record, every field but the stored input matrices (instance/*, what replay reads).
nb::dict result_dict(const CheckResult& r) {
    nb::dict d;
    d["check"] = r.check, d["claim"] = r.claim, d["regime"] = r.regime;
    d["seed"] = r.seed, d["verdict"] = std::string(to_string(r.verdict)), d["note"] = r.note;
    nb::list hyp, cmp, tol;
    for (const Hypothesis& h : r.hypotheses) hyp.append(nb::make_tuple(h.name, h.met, h.detail));
    for (const Comparison& c : r.comparisons) cmp.append(comparison_dict(c));
    for (const Tolerance& t : r.tolerances) tol.append(nb::make_tuple(t.name, t.value, t.reason));
    d["hypotheses"] = hyp, d["comparisons"] = cmp, d["tolerances"] = tol;
    nb::dict conv, values;
    for (const auto& [k, v] : r.conventions) conv[k.c_str()] = v;
    for (const auto& [k, v] : r.values) values[k.c_str()] = v;
    d["conventions"] = conv, d["values"] = values;
    return d;
}

Eigen::VectorXd vec(const std::vector<double>& v) {
    return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
}

// The per-instance table of a report's /checks/<check>/instances: the headline comparison of each
// record (NaN where a record lacks it), as write_check_run writes it.
nb::dict instance_table(const CheckRun& run) {
    std::vector<std::string> regime, verdict;
    std::vector<std::uint64_t> seed;
    std::vector<double> lhs, rhs, margin, ratio;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (const CheckResult& r : run.results) {
        regime.push_back(r.regime), verdict.emplace_back(to_string(r.verdict));
        seed.push_back(r.seed);
        const Comparison* c = r.comparison(run.headline);
        lhs.push_back(c ? c->lhs : nan), rhs.push_back(c ? c->rhs : nan);
        margin.push_back(c ? c->margin : nan), ratio.push_back(c ? c->ratio : nan);
    }
    nb::dict t;
    t["regime"] = nb::cast(regime), t["verdict"] = nb::cast(verdict);
    t["seed"] = nb::cast(seed), t["lhs"] = vec(lhs), t["rhs"] = vec(rhs);
    t["margin"] = vec(margin), t["ratio"] = vec(ratio);
    return t;
}

nb::dict experiment_dict(const ExperimentTable& t) {
    nb::dict d, cols;
    for (std::size_t a = 0; a < t.axis_names.size(); ++a)
        cols[t.axis_names[a].c_str()] = nb::cast(t.axes[a]);
    for (std::size_t v = 0; v < t.value_names.size(); ++v)
        cols[t.value_names[v].c_str()] = vec(t.values[v]);
    nb::dict attrs;
    for (const auto& [k, v] : t.attributes) attrs[k.c_str()] = v;
    d["columns"] = cols, d["axis_names"] = nb::cast(t.axis_names);
    d["value_names"] = nb::cast(t.value_names), d["attributes"] = attrs;
    return d;
}

nb::dict run_dict(const CheckRun& run) {
    nb::dict d;
    d["check"] = run.check, d["claim"] = run.claim, d["seed"] = run.seed;
    d["headline"] = run.headline, d["verdict"] = std::string(to_string(run.verdict));
    d["kind"] = run.kind, d["source"] = run.source, d["seconds"] = run.seconds;
    d["search_effort"] = run.search_effort;
    nb::list regimes, records;
    for (const RegimeSummary& s : run.regimes)
        regimes.append(nb::make_tuple(s.regime, s.counts[0], s.counts[1], s.counts[2], s.counts[3],
                                      s.worst_ratio, s.median_ratio));
    for (const CheckResult& r : run.results) records.append(result_dict(r));
    d["regimes"] = regimes, d["records"] = records, d["instances"] = instance_table(run);
    if (run.kind == "experiment") d["table"] = experiment_dict(run.table);
    return d;
}

struct RunArgs {
    std::vector<std::string> names, regimes;
    std::vector<long> shape;
    long trials = 0;
    std::uint64_t seed = 20251;
    bool thorough = false;
    int threads = 0;
    double time_budget = 0;
    std::string dataset, embedded;
    nb::object progress;  // None, or progress(check, done, total), called with the GIL held
};

// The checks `names` name (every check when empty, as `verify --all`: the real-model ones only
// with a dataset), in the order given; Usage naming an unknown check.
std::vector<const proofs::CheckInfo*> selected(const RunArgs& a) {
    std::vector<const proofs::CheckInfo*> todo;
    if (a.names.empty())
        for (const proofs::CheckInfo& c : proofs::registry())
            if (!c.needs_dataset || !a.dataset.empty()) todo.push_back(&c);
    for (const std::string& n : a.names) {
        const proofs::CheckInfo* c = proofs::find_check(n);
        if (!c) fail_usage("unknown check '" + n + "' (attnspec.checks.list())", "names");
        todo.push_back(c);
    }
    return todo;
}

// The runs of one run_checks call, kept in C++ so that Python can write them as the verify
// report (Results.to_report) without a round trip through dicts.
struct RunSet {
    std::vector<CheckRun> runs;
    std::uint64_t seed = 0;
};

nb::tuple run_checks(const RunArgs& a) {
    proofs::RunOptions o;
    o.trials = static_cast<int>(a.trials), o.seed = a.seed, o.thorough = a.thorough;
    o.threads = a.threads > 0 ? a.threads : available_threads();
    o.time_budget_s = a.time_budget, o.shape = a.shape, o.regimes = a.regimes;
    o.dataset = a.dataset, o.embedded_heads = a.embedded;
    if (a.trials < 0 || a.trials > 2147483647)
        fail_usage("trials must be in [0, 2147483647], got " + std::to_string(a.trials), "trials");
    const std::vector<const proofs::CheckInfo*> todo = selected(a);
    proofs::check_run_options(o);
    proofs::CheckEvents events;  // called one at a time (under the runner lock)
    if (!a.progress.is_none())
        events.progress = [&a, &todo](std::size_t i, long done, long total) {
            nb::gil_scoped_acquire locked;
            try {
                a.progress(todo[i]->name, done, total);
            } catch (nb::python_error& e) {  // a failing callback must not end the run
                e.discard_as_unraisable("attnspec progress callback");
            }
        };
    std::vector<CheckRun> runs;
    {
        nb::gil_scoped_release unlocked;
        runs = proofs::run_checks(todo, o, events);
    }
    nb::list l;
    for (const CheckRun& r : runs) l.append(run_dict(r));
    return nb::make_tuple(RunSet{std::move(runs), a.seed}, l);
}

// `attnspec verify`'s report of these runs (write_verify_runs): written atomically, with the
// counterexample files in its companion directory; `command` is the provenance command line.
void write_report(const RunSet& s, const std::string& path, const std::string& command) {
    Provenance prov;
    prov.command_line = command;
    prov.seed = s.seed;
    prov.extra.emplace_back("statements", statements_note());  // as `attnspec verify`
    nb::gil_scoped_release unlocked;
    ReportWriter w(path, prov);
    write_verify_runs(w, s.runs, prov);
    w.commit();
}

// The replay of `verify CHECK --instance FILE [--record R]`: the schema major version checked
// (check_replay_schema), the record found (find_replay_record), the memory estimated before any
// read (replay_record).
nb::dict replay(const std::string& path, const std::string& check, const std::string& record) {
    const proofs::CheckInfo* c = proofs::find_check(check);
    if (!c) fail_usage("unknown check '" + check + "' (attnspec.checks.list())", "check");
    H5Reader r(path);
    check_replay_schema(r);
    const std::string group = find_replay_record(r, c->name, record);
    CheckResult res;
    {
        nb::gil_scoped_release unlocked;
        res = proofs::replay_record(*c, r, group);
    }
    nb::dict d = result_dict(res);
    d["file"] = path, d["group"] = group, d["kind"] = std::string(proofs::to_string(c->kind));
    d["source"] = c->source;
    return d;
}

// The check an instance file holds (its root attribute `check`), "" for a report.
std::string instance_check(const std::string& path) {
    H5Reader r(path);
    return r.has_attr("/", "check") ? r.attr_as_text("/", "check") : std::string();
}

}  // namespace

void bind_checks(nb::module_& m) {
    nb::class_<RunSet>(m, "RunSet", "The CheckRuns of one run_checks call (C++ side).")
        .def("__len__", [](const RunSet& s) { return s.runs.size(); });
    m.def("write_check_report", &write_report, "runs"_a, "path"_a, "command"_a,
          "Writes runs as `attnspec verify` writes its report (atomic; counterexample files in "
          "the companion directory <path without .h5>.counterexamples/).");
    m.def("list_checks", &list_checks,
          "The registry, in table order (what `attnspec verify --list` prints): one dict per "
          "check (name, summary, statement, source, kind, needs_dataset, replayable).");
    m.def(
        "run_checks",
        [](std::vector<std::string> names, long trials, std::uint64_t seed, bool thorough,
           int threads, std::vector<std::string> regimes, std::vector<long> shape,
           double time_budget, std::string dataset, std::string embedded, nb::object progress) {
            RunArgs a{std::move(names),
                      std::move(regimes),
                      std::move(shape),
                      trials,
                      seed,
                      thorough,
                      threads,
                      time_budget,
                      std::move(dataset),
                      std::move(embedded),
                      std::move(progress)};
            return run_checks(a);
        },
        "names"_a, "trials"_a, "seed"_a, "thorough"_a, "threads"_a, "regimes"_a, "shape"_a,
        "time_budget"_a, "dataset"_a, "embedded"_a, "progress"_a = nb::none(),
        "Runs the checks (all when names is empty) as `attnspec verify` does "
        "(proofs::run_checks): (RunSet, one dict per run in the order asked).");
    m.def("replay_check", &replay, "path"_a, "check"_a, "record"_a,
          "Re-runs a stored record (`attnspec verify CHECK --instance PATH [--record R]`).");
    m.def("instance_check", &instance_check, "path"_a,
          "The check an instance file holds (root attribute check); '' when it has none.");
    m.def("default_embedded_heads", &proofs::default_embedded_heads,
          "The embedded heads file the attention checks add as regimes ('' when absent).");
    m.def("default_model_dataset", &proofs::default_model_dataset,
          "The model dataset of the default run ('minilm-l6' when present, else '').");
}

}  // namespace attnspec::python
