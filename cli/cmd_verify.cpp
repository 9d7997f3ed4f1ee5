// attnspec verify: run theorem checks from the proofs/ registry (or replay one stored instance),
// print verdicts, write the report and the counterexample files (report/check_records.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "attnspec/base/parallel.hpp"
#include "attnspec/io/model_input.hpp"
#include "attnspec/io/provenance.hpp"
#include "attnspec/io/report_writer.hpp"
#include "attnspec/proofs/registry.hpp"
#include "attnspec/report/check_output.hpp"
#include "attnspec/report/check_records.hpp"
#include "attnspec/report/experiment_output.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "memory_option.hpp"
#include "verify_mpi.hpp"
#include "verify_output.hpp"
#include "verify_shard.hpp"

namespace attnspec::cli {
namespace {

const char* kExamples =
    "examples:\n"
    "  attnspec verify --all          every check -> reports/out/verify-all.h5\n"
    "  attnspec verify thm3.5 --trials 400 --seed 7 --json\n";

struct VerifyOptions {
    CommonOptions common;
    std::vector<std::string> names;
    bool all = false, list = false, quiet = false, mpi = false;
    std::string shape, fail_on = "inconclusive", instance, record, max_memory, shard;
    proofs::RunOptions run;
};

// Declares the verify options, bound to `o` (the shared group gives --seed --out --no-report
// --json).
void declare(po::options_description& desc, VerifyOptions& o) {
    o.common.seed = o.run.seed;
    o.run.embedded_heads = proofs::default_embedded_heads();
    o.run.dataset = proofs::default_model_dataset();
    o.run.threads = available_threads();
    // clang-format off
    desc.add_options()
        ("check", po::value(&o.names)->multitoken(), "checks to run (positional), e.g. thm3.5")
        ("all", po::bool_switch(&o.all), "run every registered check")
        ("list", po::bool_switch(&o.list), "list the registered checks (or those named) and exit")
        ("trials", count_value(&o.run.trials, "--trials", 1, 2147483647),
         "exactly N instances per check (default: its grid)")
        ("shape", po::value(&o.shape), "fix the shape AxB instead of the grid, e.g. 64x16")
        ("regime", po::value(&o.run.regimes)->multitoken(),
         "only regimes whose name contains this text")
        ("time-budget", real_value(&o.run.time_budget_s, "--time-budget", 0, 1e9, true),
         "seconds per check after which no instance starts")
        ("threads", count_value(&o.run.threads, "--threads", 1, 4096),
         ("parallel workers, 1 = serial (default " + std::to_string(o.run.threads) +
          ": every core)").c_str())
        ("thorough", po::bool_switch(&o.run.thorough), "more instances and larger shapes")
        ("quiet,q", po::bool_switch(&o.quiet), "no progress on stderr")
        ("fail-on", po::value(&o.fail_on)->default_value(o.fail_on),
         "exit non-zero on: violated | inconclusive | never, of a theorem; add ',readings' "
         "(e.g. violated,readings; readings alone = inconclusive,readings) to count the "
         "readings' verdicts too")
        ("instance", po::value(&o.instance),
         "replay one stored instance (instance file or report)")
        ("record", po::value(&o.record),
         "with --instance on a report: the record group")
        ("kappa-lambda", po::value(&o.run.kappa_lambda)->default_value(o.run.kappa_lambda),
         "thm3.4: kappa(Lambda) convention, nz or strict")
        ("embedded", po::value(&o.run.embedded_heads),
         "heads file joining the attention checks ('' none)")
        ("dataset", po::value(&o.run.dataset),
         "real-model dataset NAME[:l[:h[:s]]] ('' skips it)")
        ("search-evals", count_value(&o.run.search_evals, "--search-evals", 0, kMaxDim),
         "thm3.4: search evaluations (default 3600, 0: none)")
        ("search-seconds", real_value(&o.run.search_seconds, "--search-seconds", 0, 1e9, true),
         "thm3.4: wall-clock cap on the searches")
        ("search-budget", real_value(&o.run.search_budget_s, "--search-budget", 0, 1e9),
         "deprecated: --search-evals 0 or --search-seconds")
        ("shard", po::value(&o.shard),
         "i/n: run part i of n of the checks (report merge)")
        ("mpi", po::bool_switch(&o.mpi),
         "under mpirun: spread the instances over the ranks");
    // clang-format on
    add_memory_option(desc, o.max_memory);
    add_common_options(desc, o.common, "verify-<checks>.h5");
}

// The checks named on the command line (or all of them), in the order given.
std::vector<const proofs::CheckInfo*> selected_checks(const VerifyOptions& o) {
    if (o.all && !o.names.empty()) fail_usage("give check names or --all, not both");
    if (!o.all && o.names.empty())
        fail_usage("name at least one check or use --all (see 'attnspec verify --list')");
    std::vector<const proofs::CheckInfo*> todo;
    if (o.all)  // the real-model analysis only with a dataset (--dataset '' skips it)
        for (const auto& c : proofs::registry())
            if (!c.needs_dataset || !o.run.dataset.empty()) todo.push_back(&c);
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
    check_output_target(o.common.out, {o.instance});  // a replay writes nothing: never the input
    H5Reader r(o.instance);
    check_replay_schema(r);  // the schema versions `report show` reads
    const std::string group = find_replay_record(r, c->name, o.record);
    // the estimate from the declared shapes, before any read (replay_record checks it again)
    if (const std::string estimate = check_replay_size(r, group); !o.quiet && !estimate.empty())
        log(estimate);
    const CheckResult res = proofs::replay_record(*c, r, group);
    const std::string kind = proofs::to_string(c->kind);
    if (c->kind == proofs::CheckKind::experiment) {  // a curve, no verdict: exit 0
        if (o.common.json)
            print_replay_json(std::cout, res, o.instance, group, kind, c->source);
        else
            print_experiment_record(std::cout, res);
        return 0;
    }
    if (o.common.json)
        print_replay_json(std::cout, res, o.instance, group, kind, c->source);
    else
        print_record_human(std::cout, res, kind, c->source);
    CheckRun one;
    one.kind = kind;  // a replayed reading decides the exit code only with --fail-on ...,readings
    one.results.push_back(res);
    one.summarize();
    return verify_exit_code({one}, o.fail_on);
}

// Runs `mine` (proofs::run_checks: side by side with --threads N > 1, the runs in `mine` order)
// with a progress bar per check on stderr (unless quiet).
std::vector<CheckRun> run_with_progress(const std::vector<const proofs::CheckInfo*>& mine,
                                        const proofs::RunOptions& opt, bool quiet) {
    std::vector<Progress> bars;
    bars.reserve(mine.size());
    for (const auto* c : mine) bars.emplace_back(c->name, 1, !quiet);
    proofs::CheckEvents events;  // called one at a time: the bars never draw at once
    events.progress = [&bars](std::size_t i, long done, long total) {
        bars[i].set_total(total);
        bars[i].update(done);
    };
    events.finished = [&bars](std::size_t i, const CheckRun&) { bars[i].done(); };
    return proofs::run_checks(mine, opt, events);
}

// The default report name: verify-all.h5, or the sorted check names joined by '+'
// (verify-thm3.4+thm3.5.h5), or verify-<n>-checks-<hash>.h5 when that passes 60 characters.
std::string default_report_name(const std::vector<const proofs::CheckInfo*>& todo, bool all) {
    if (all) return "verify-all.h5";
    std::vector<std::string> names;
    names.reserve(todo.size());
    for (const auto* c : todo) names.push_back(c->name);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    std::string joined;
    for (const auto& n : names) joined += (joined.empty() ? "" : "+") + n;
    if (joined.size() <= 60) return "verify-" + joined + ".h5";
    std::uint32_t h = 2166136261u;  // FNV-1a of the joined names
    for (unsigned char ch : joined) h = (h ^ ch) * 16777619u;
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", h);
    return "verify-" + std::to_string(names.size()) + "-checks-" + hex + ".h5";
}

// Writes the runs and their counterexample files into `w` (committed by the caller).
void write_runs(ReportWriter& w, const std::vector<CheckRun>& runs, const Provenance& prov,
                bool quiet) {
    write_verify_runs(w, runs, prov, [quiet](const std::string& line) {
        if (!quiet) log(line);
    });
}

// verify --mpi in instance mode: every rank runs `todo` with its share of the instances
// (verify_mpi.hpp); rank 0 opens the report first (an unwritable target fails before any work)
// and writes it once every rank has succeeded. --threads is per rank; by default the node's cores
// shared among the ranks on it.
int run_spread(VerifyOptions& o, const std::vector<const proofs::CheckInfo*>& todo,
               const std::string& target, const Provenance& prov, bool threads_given) {
    return run_verify_mpi_spread(
        [&](proofs::InstanceSpread& spread, int local_ranks, bool quiet) {
            if (!threads_given) o.run.threads = std::max(1, available_threads() / local_ranks);
            o.run.spread = &spread;
            std::shared_ptr<ReportWriter> writer;
            if (spread.rank() == 0) {
                writer = std::make_shared<ReportWriter>(target, prov);
                writer->companion_staging();
            }
            auto runs =
                std::make_shared<std::vector<CheckRun>>(run_with_progress(todo, o.run, quiet));
            SpreadOutcome out;
            out.verdict = verify_exit_code(*runs, o.fail_on);
            if (writer)
                out.commit = [&o, &prov, &target, writer, runs] {
                    write_runs(*writer, *runs, prov, o.quiet);
                    writer->commit();
                    print_runs_human(std::cout, *runs, target);
                };
            return out;
        },
        o.quiet);
}

// Runs the checks of `todo` that shard `s` holds (all of them when not sharded) and writes the
// report `target` ("" = none; a shard report carries the shard attributes).
std::vector<CheckRun> run_and_write(const VerifyOptions& o,
                                    const std::vector<const proofs::CheckInfo*>& todo,
                                    const ShardSpec& s, const std::string& target,
                                    const Provenance& prov, bool quiet) {
    std::vector<const proofs::CheckInfo*> mine = todo;
    if (s.active()) {
        mine.clear();
        const auto plan = plan_shards(todo, o.run, s.count);
        for (size_t i : plan[static_cast<size_t>(s.index)]) mine.push_back(todo[i]);
        if (mine.empty() && !quiet)
            log("shard " + std::to_string(s.index) + "/" + std::to_string(s.count) +
                " holds no check (" + std::to_string(todo.size()) + " checks over " +
                std::to_string(s.count) + " shards): it writes an empty shard");
    }
    std::unique_ptr<ReportWriter> writer;
    if (!target.empty()) writer = std::make_unique<ReportWriter>(target, prov);
    if (writer) writer->companion_staging();  // the old companion directory goes at commit
    std::vector<CheckRun> runs = run_with_progress(mine, o.run, quiet);
    if (!writer) return runs;
    write_runs(*writer, runs, prov, quiet);
    if (s.active()) {
        std::vector<std::string> all, held;
        for (const auto* c : todo) all.push_back(c->name);
        for (const auto* c : mine) held.push_back(c->name);
        write_shard_attributes(writer->root(), s, all, held, shard_options_text(o.run));
    }
    writer->commit();
    return runs;
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
    apply_memory_option(o.max_memory);
    if (o.list) {  // with CHECK names: those checks only (an unknown name is usage, 64)
        for (const auto& n : o.names)
            if (!proofs::find_check(n))
                fail_usage("unknown check '" + n + "' (see 'attnspec verify --list')");
        for (const auto& c : proofs::registry())
            if (o.names.empty() ||
                std::find(o.names.begin(), o.names.end(), c.name) != o.names.end())
                std::cout << c.name << "\treconstructed (" << c.source << ")\t"
                          << proofs::to_string(c.kind) << "\t" << c.summary << "  ["
                          << c.statement_file << "]\n";
        return 0;
    }
    parse_fail_on(o.fail_on);  // Usage on a value it does not know
    if (!o.instance.empty() && (!o.shard.empty() || o.mpi))
        fail_usage("--instance replays one record: not with --shard or --mpi");
    if (!o.instance.empty()) return replay(o);
    const auto todo = selected_checks(o);
    o.run.seed = o.common.seed;
    if (!o.shape.empty()) o.run.shape = parse_dims(o.shape, 2, "--shape");
    proofs::check_run_options(o.run);

    const ShardSpec shard = o.shard.empty() ? ShardSpec{} : parse_shard(o.shard);
    if (o.mpi && (shard.active() || o.common.no_report || o.common.json))
        fail_usage(
            "--mpi splits the run itself and writes one report: not with --shard, "
            "--no-report or --json (read it with 'attnspec report show R --json')");

    // Open the report first: an unwritable target fails (73) before any work is done.
    const std::string model_file =  // an output that is the model dataset is refused (64)
        o.run.dataset.empty() ? "" : find_dataset(DatasetSelector::parse(o.run.dataset).name).path;
    std::string name = default_report_name(todo, o.all);
    if (shard.active()) name = shard_report_name(name, shard);
    const std::string target = report_target(o.common, name, {o.run.embedded_heads, model_file});
    Provenance prov = provenance(inv, o.run.seed);
    prov.extra.emplace_back("statements", statements_note());
    const bool clocked =
        o.run.time_budget_s > 0 || o.run.search_seconds > 0 || o.run.search_budget_s > 0;
    if (o.mpi && !clocked)
        return run_spread(o, todo, target, prov, vm.count("threads") && !vm["threads"].defaulted());
    if (o.mpi)
        return run_verify_mpi(
            target, inv.command_line,
            [&](const ShardSpec& s, const std::string& path, bool quiet) {
                return verify_exit_code(run_and_write(o, todo, s, path, prov, quiet), o.fail_on);
            },
            o.quiet);
    const auto runs = run_and_write(o, todo, shard, target, prov, o.quiet);
    if (o.common.json)
        print_runs_json(std::cout, runs, target);
    else
        print_runs_human(std::cout, runs, target);
    return verify_exit_code(runs, o.fail_on);
}

}  // namespace attnspec::cli
