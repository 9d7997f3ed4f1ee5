// attnspec verify: run theorem checks from the proofs/ registry, print verdicts, write a report.
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "attnspec/proofs/registry.hpp"
#include "attnspec/io/report_writer.hpp"
#include "attnspec/io/check_records.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "verify_output.hpp"

namespace attnspec::cli {
namespace {

const char* kExamples =
    "Checks are listed by 'attnspec verify --list'. Each draws seeded random instances over its\n"
    "regimes (shapes, scales, spectra), evaluates hypotheses and claims with enclosures, and\n"
    "returns holds / violated / inconclusive / not_applicable per instance.\n\n"
    "exit status: 0 every instance holds (or is not applicable); 1 a check proved a claim false\n"
    "(a finding, not a crash: the violating instances are in the report and replay from their\n"
    "seeds); 2 some instance is inconclusive. --fail-on violated makes inconclusive exit 0;\n"
    "--fail-on never exits 0 whenever the run completed.\n\n"
    "examples:\n"
    "  attnspec verify --all                       every check, default regimes (< 2 min)\n"
    "  attnspec verify thm3.5 --trials 400 --seed 7 --json\n"
    "  attnspec verify thm3.5 --shape 64x16 --out /tmp/t35.h5\n"
    "  attnspec verify --all --thorough --time-budget 600\n"
    "  attnspec verify thm3.8-informal --instance reports/out/counterexamples/thm3.8-informal-<seed>.h5\n"
    "\nViolated instances are also written as replayable files to <report dir>/counterexamples/.\n";

// Violating instances become replayable instance files beside the report:
// <report dir>/counterexamples/<check>-<seed>.h5 (at most 4 per check).
void save_counterexamples(const CheckRun& run, const std::string& report, const Invocation& inv,
                          bool quiet) {
    int saved = 0;
    const auto slash = report.find_last_of('/');
    const std::string dir = (slash == std::string::npos ? "." : report.substr(0, slash)) + "/counterexamples";
    for (const auto& r : run.results) {
        if (r.verdict != Verdict::violated || saved >= 4) continue;
        ::mkdir(dir.c_str(), 0755);
        const std::string path = dir + "/" + run.check + "-" + std::to_string(r.seed) + ".h5";
        write_instance_file(path, r, provenance(inv, r.seed));
        if (!quiet) log("counterexample written: " + path + " (replay: attnspec verify " + run.check +
                        " --instance " + path + ")");
        ++saved;
    }
}

int replay(const std::vector<std::string>& names, bool all, const std::string& file,
           const std::string& record, bool json, const std::string& fail_on) {
    if (all || names.size() != 1) fail_usage("--instance replays one check: attnspec verify CHECK --instance F.h5");
    const auto* c = proofs::find_check(names[0]);
    if (!c) fail_usage("unknown check '" + names[0] + "' (see 'attnspec verify --list')");
    if (!c->replay) fail_usage("check '" + c->name + "' cannot replay stored instances");
    H5Reader r(file);
    std::string group;
    if (r.has_attr("/", "kind") && r.attr_string("/", "kind") == "attnspec-instance") {
        if (r.attr_string("/", "check") != c->name)
            fail_data(file + " holds an instance of '" + r.attr_string("/", "check") + "', not '" + c->name + "'");
        group = "/record";
    } else {
        const std::string recs = "/checks/" + c->name + "/records";
        if (!r.exists(recs)) fail_data(file + " has no stored records of check '" + c->name + "'");
        if (!record.empty()) {
            group = recs + "/" + record;
            if (!r.exists(group)) fail_data(file + ": no record '" + record + "' under " + recs);
        } else {
            for (const auto& n : r.children(recs))
                if (group.empty() || r.attr_string(recs + "/" + n, "verdict") == "violated") {
                    const bool first_violation = r.attr_string(recs + "/" + n, "verdict") == "violated";
                    group = recs + "/" + n;
                    if (first_violation) break;
                }
        }
    }
    CheckResult res = c->replay(r, group);
    if (r.has_attr(group, "seed")) res.seed = std::stoull(r.attr_string(group, "seed"));
    if (r.has_attr(group, "regime")) res.regime = r.attr_string(group, "regime");
    if (json) {
        JsonWriter j(std::cout);
        j.begin_object();
        json_header(j, "verify --instance");
        j.kv("file", file).kv("group", group);
        j.key("record");
        json_check_result(j, res);
        j.end_object();
        j.finish();
    } else {
        print_record_human(std::cout, res);
    }
    CheckRun one;
    one.results.push_back(res);
    one.summarize();
    return verify_exit_code({one}, fail_on);
}

}  // namespace

int run_verify(const Invocation& inv) {
    po::options_description desc("verify options");
    std::vector<std::string> names, regimes;
    bool all = false, list = false, json = false, thorough = false, quiet = false;
    int trials = 0;
    std::uint64_t seed = 20251;
    double budget = 0;
    std::string shape, out, fail_on = "inconclusive", instance, record, kappa_lambda = "nz";
    double search_budget = -1;
    std::string embedded = proofs::default_embedded_heads();
    desc.add_options()
        ("check", po::value(&names)->multitoken(), "checks to run (positional), e.g. thm3.5")
        ("all", po::bool_switch(&all), "run every registered check")
        ("list", po::bool_switch(&list), "list the registered checks and exit")
        ("trials", po::value(&trials), "instances per check, spread over its regimes (default: each check's own grid, 28 to 650)")
        ("seed", po::value(&seed)->default_value(seed), "master seed; instance seeds derive from it")
        ("shape", po::value(&shape), "fix the shape instead of the shape grid, AxB: W is AxB (thm3.5, lemma3.7, thm3.8), "
         "D = A, d = B, N = 2A (attention checks), N = A (infsa checks); e.g. 64x16")
        ("regime", po::value(&regimes)->multitoken(), "only regimes whose name contains this text")
        ("time-budget", po::value(&budget), "seconds per check after which no new instance is drawn")
        ("thorough", po::bool_switch(&thorough), "more instances and larger shapes")
        ("out", po::value(&out), "report path (default reports/out/verify.h5)")
        ("json", po::bool_switch(&json), "one JSON document on stdout")
        ("quiet,q", po::bool_switch(&quiet), "no progress on stderr")
        ("fail-on", po::value(&fail_on)->default_value(fail_on),
         "exit non-zero on: violated | inconclusive | never")
        ("instance", po::value(&instance),
         "replay one stored instance (an instance file, or a report: its first violated record)")
        ("record", po::value(&record), "with --instance on a report: the record group, e.g. instance_12")
        ("kappa-lambda", po::value(&kappa_lambda)->default_value(kappa_lambda),
         "thm3.4: convention for kappa(Lambda): nz (rtol N^2 eps) or strict (= inf: vacuous bound)")
        ("embedded", po::value(&embedded),
         "input file whose heads join the attention checks as regimes embedded/<name> "
         "(default: datasets/embedded/attention_heads.h5 of the source tree; '' for none)")
        ("search-budget", po::value(&search_budget),
         "thm3.4: seconds of counterexample search (default 8, --thorough 120)");
    po::positional_options_description pos;
    pos.add("check", -1);
    po::variables_map vm;
    if (!parse(inv, "verify", "CHECK... | --all [options]", kExamples, desc, vm, &pos)) return 0;
    if (list) {
        for (const auto& c : proofs::registry())
            std::cout << c.name << "\t" << c.summary << "  [" << c.statement_file << "]\n";
        return 0;
    }
    if (fail_on != "violated" && fail_on != "inconclusive" && fail_on != "never")
        fail_usage("--fail-on must be violated, inconclusive or never, got '" + fail_on + "'");
    if (!instance.empty()) return replay(names, all, instance, record, json, fail_on);
    if (all && !names.empty()) fail_usage("give check names or --all, not both");
    if (!all && names.empty()) fail_usage("name at least one check or use --all (see 'attnspec verify --list')");
    if (trials < 0) fail_usage("--trials must be >= 0");
    if (budget < 0) fail_usage("--time-budget must be >= 0");
    std::vector<const proofs::CheckInfo*> todo;
    if (all)
        for (const auto& c : proofs::registry()) todo.push_back(&c);
    for (const auto& n : names) {
        const auto* c = proofs::find_check(n);
        if (!c) fail_usage("unknown check '" + n + "' (see 'attnspec verify --list')");
        todo.push_back(c);
    }
    proofs::RunOptions opt;
    opt.trials = trials;
    opt.seed = seed;
    opt.thorough = thorough;
    opt.time_budget_s = budget;
    opt.regimes = regimes;
    if (!shape.empty()) opt.shape = parse_dims(shape, 2, "--shape");
    if (kappa_lambda != "nz" && kappa_lambda != "strict")
        fail_usage("--kappa-lambda must be nz or strict, got '" + kappa_lambda + "'");
    opt.kappa_lambda = kappa_lambda;
    opt.search_budget_s = search_budget;
    opt.embedded_heads = embedded;

    // Open the report first: an unwritable target fails (73) before any work is done.
    ReportWriter writer(report_path(out, "verify.h5"), provenance(inv, seed));
    H5Group checks = writer.root().group("checks");
    std::vector<CheckRun> runs;
    for (const auto* c : todo) {
        Progress bar(c->name, 1, !quiet);
        long last_total = 0;
        opt.progress = [&](long done, long total) {
            if (total != last_total) bar = Progress(c->name, total, !quiet), last_total = total;
            bar.update(done);
        };
        CheckRun run = c->run(opt);
        bar.done();
        save_counterexamples(run, writer.target(), inv, quiet);
        write_check_run(checks, run);
        runs.push_back(std::move(run));
    }
    writer.commit();
    if (json)
        print_runs_json(std::cout, runs, writer.target());
    else
        print_runs_human(std::cout, runs, writer.target());
    return verify_exit_code(runs, fail_on);
}


}  // namespace attnspec::cli
