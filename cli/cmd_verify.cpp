// attnspec verify: run theorem checks from the proofs/ registry (or replay one stored instance),
// print verdicts, write the report and the counterexample files (io/check_records.hpp).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "attnspec/io/check_records.hpp"
#include "attnspec/io/report_writer.hpp"
#include "attnspec/proofs/registry.hpp"
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
    "  attnspec verify thm3.8-informal --instance "
    "reports/out/counterexamples/thm3.8-informal-<seed>.h5\n"
    "\nViolated instances are also written as replayable files to <report dir>/counterexamples/\n"
    "(none with --no-report).\n";

struct VerifyOptions {
    CommonOptions common;
    std::vector<std::string> names;
    bool all = false, list = false, quiet = false;
    std::string shape, fail_on = "inconclusive", instance, record;
    proofs::RunOptions run;
};

// Declares the verify options, bound to `o` (the shared group gives --seed --out --no-report
// --json).
void declare(po::options_description& desc, VerifyOptions& o) {
    o.common.seed = o.run.seed;
    o.run.embedded_heads = proofs::default_embedded_heads();
    // clang-format off
    desc.add_options()
        ("check", po::value(&o.names)->multitoken(), "checks to run (positional), e.g. thm3.5")
        ("all", po::bool_switch(&o.all), "run every registered check")
        ("list", po::bool_switch(&o.list), "list the registered checks and exit")
        ("trials", count_value(&o.run.trials, "--trials", 1, 2147483647),
         "exactly N instances per check (N >= 1), spread over the R regimes it runs (those "
         "--regime keeps; the first N mod R draw one more); the attention checks add one "
         "instance per embedded head, and a draw with nothing to check (infsa: all scores <= 0) "
         "is skipped. Default: each check's own grid, 28 to 650")
        ("shape", po::value(&o.shape), "fix the shape instead of the shape grid, AxB: W is AxB "
         "(thm3.5, lemma3.7, thm3.8), D = A, d = B, N = 2A (attention checks), N = A (infsa "
         "checks); e.g. 64x16")
        ("regime", po::value(&o.run.regimes)->multitoken(),
         "only regimes whose name contains this text")
        ("time-budget", real_value(&o.run.time_budget_s, "--time-budget", 0, 1e9, true),
         "seconds (> 0) per check after which no new instance is drawn: a check ends within "
         "one instance's time of it")
        ("thorough", po::bool_switch(&o.run.thorough), "more instances and larger shapes")
        ("quiet,q", po::bool_switch(&o.quiet), "no progress on stderr")
        ("fail-on", po::value(&o.fail_on)->default_value(o.fail_on),
         "exit non-zero on: violated | inconclusive | never")
        ("instance", po::value(&o.instance),
         "replay one stored instance (an instance file, or a report: its first violated record)")
        ("record", po::value(&o.record),
         "with --instance on a report: the record group, e.g. instance_12")
        ("kappa-lambda", po::value(&o.run.kappa_lambda)->default_value(o.run.kappa_lambda),
         "thm3.4: convention for kappa(Lambda): nz (rtol N^2 eps) or strict (= inf: vacuous bound)")
        ("embedded", po::value(&o.run.embedded_heads),
         "input file whose heads join the attention checks as regimes embedded/<name> "
         "(default: datasets/embedded/attention_heads.h5 of the source tree; '' for none)")
        ("search-budget", real_value(&o.run.search_budget_s, "--search-budget", 0, 1e9),
         "thm3.4: seconds of counterexample search (default 8, --thorough 120)");
    // clang-format on
    add_common_options(desc, o.common, "verify.h5");
}

// The checks named on the command line (or all of them), in the order given.
std::vector<const proofs::CheckInfo*> selected_checks(const VerifyOptions& o) {
    if (o.all && !o.names.empty()) fail_usage("give check names or --all, not both");
    if (!o.all && o.names.empty())
        fail_usage("name at least one check or use --all (see 'attnspec verify --list')");
    std::vector<const proofs::CheckInfo*> todo;
    if (o.all)
        for (const auto& c : proofs::registry()) todo.push_back(&c);
    for (const auto& n : o.names) {
        const auto* c = proofs::find_check(n);
        if (!c) fail_usage("unknown check '" + n + "' (see 'attnspec verify --list')");
        todo.push_back(c);
    }
    return todo;
}

int replay(const VerifyOptions& o) {
    if (o.all || o.names.size() != 1)
        fail_usage("--instance replays one check: attnspec verify CHECK --instance F.h5");
    const auto* c = proofs::find_check(o.names[0]);
    if (!c) fail_usage("unknown check '" + o.names[0] + "' (see 'attnspec verify --list')");
    if (!c->replay) fail_usage("check '" + c->name + "' cannot replay stored instances");
    H5Reader r(o.instance);
    const std::string group = find_replay_record(r, c->name, o.record);
    const CheckResult res = proofs::replay_record(*c, r, group);
    if (o.common.json)
        print_replay_json(std::cout, res, o.instance, group);
    else
        print_record_human(std::cout, res);
    CheckRun one;
    one.results.push_back(res);
    one.summarize();
    return verify_exit_code({one}, o.fail_on);
}

// Runs one check with a progress bar on stderr (unless quiet).
CheckRun run_one(const proofs::CheckInfo& c, proofs::RunOptions opt, bool quiet) {
    Progress bar(c.name, 1, !quiet);
    opt.progress = [&](long done, long total) {
        bar.set_total(total);
        bar.update(done);
    };
    CheckRun run = c.run(opt);
    bar.done();
    return run;
}

// <report dir>/counterexamples
std::string counterexample_dir(const std::string& report) {
    const auto slash = report.find_last_of('/');
    return (slash == std::string::npos ? "." : report.substr(0, slash)) + "/counterexamples";
}

}  // namespace

int run_verify(const Invocation& inv) {
    po::options_description desc("verify options");
    VerifyOptions o;
    declare(desc, o);
    po::positional_options_description pos;
    pos.add("check", -1);
    po::variables_map vm;
    if (!parse(inv, "verify", "CHECK... | --all [options]", kExamples, desc, vm, &pos)) return 0;
    if (o.list) {
        for (const auto& c : proofs::registry())
            std::cout << c.name << "\t" << c.summary << "  [" << c.statement_file << "]\n";
        return 0;
    }
    if (o.fail_on != "violated" && o.fail_on != "inconclusive" && o.fail_on != "never")
        fail_usage("--fail-on must be violated, inconclusive or never, got '" + o.fail_on + "'");
    if (!o.instance.empty()) return replay(o);
    const auto todo = selected_checks(o);
    o.run.seed = o.common.seed;
    if (!o.shape.empty()) o.run.shape = parse_dims(o.shape, 2, "--shape");
    proofs::check_run_options(o.run);

    // Open the report first: an unwritable target fails (73) before any work is done.
    const std::string target = report_target(o.common, "verify.h5");
    std::unique_ptr<ReportWriter> writer;
    if (!target.empty())
        writer = std::make_unique<ReportWriter>(target, provenance(inv, o.run.seed));
    std::vector<CheckRun> runs;
    for (const auto* c : todo) {
        runs.push_back(run_one(*c, o.run, o.quiet));
        if (!writer) continue;
        for (const auto& path : write_counterexample_files(
                 runs.back(), counterexample_dir(writer->target()), provenance(inv, o.run.seed)))
            if (!o.quiet)
                log("counterexample written: " + path + " (replay: attnspec verify " + c->name +
                    " --instance " + path + ")");
    }
    if (writer) {
        write_check_runs(writer->root(), runs);
        writer->commit();
    }
    const std::string shown = writer ? writer->target() : "";
    if (o.common.json)
        print_runs_json(std::cout, runs, shown);
    else
        print_runs_human(std::cout, runs, shown);
    return verify_exit_code(runs, o.fail_on);
}

}  // namespace attnspec::cli
