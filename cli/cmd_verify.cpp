// attnspec verify: run theorem checks from the proofs/ registry (or replay one stored instance),
// print verdicts, write the report and the counterexample files (io/check_records.hpp).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/base/parallel.hpp"
#include "attnspec/io/check_records.hpp"
#include "attnspec/io/model_input.hpp"
#include "attnspec/io/provenance.hpp"
#include "attnspec/io/report_writer.hpp"
#include "attnspec/proofs/registry.hpp"
#include "cli.hpp"
#include "commands.hpp"
#include "experiment_output.hpp"
#include "memory_option.hpp"
#include "verify_mpi.hpp"
#include "verify_output.hpp"
#include "verify_shard.hpp"

namespace attnspec::cli {
namespace {

const char* kExamples =
    "Checks are listed by 'attnspec verify --list'. Each draws seeded random instances over its\n"
    "regimes (shapes, scales, spectra), evaluates hypotheses and claims with enclosures, and\n"
    "returns holds / violated / inconclusive / not_applicable per instance. Every statement is\n"
    "reconstructed from a summary of its paper; --list names the source (docs/SOURCES.md).\n"
    "--list also gives each check's kind: theorem (a reconstructed statement of a paper),\n"
    "reading (an alternative reading of an informal claim, probed to map where it holds) or\n"
    "experiment (a table, no verdict, never changes the exit status).\n\n"
    "exit status, decided by the theorems only: 0 every instance holds (or is not applicable);\n"
    "1 a theorem was proved false (a finding, not a crash: the violating instances are in the\n"
    "report and replay from their seeds); 2 some instance of a theorem is inconclusive, or a\n"
    "theorem ran no instance or none applicable. A violated reading exits 0 by default.\n"
    "--fail-on violated makes inconclusive exit 0;\n"
    "--fail-on readings (or violated,readings / inconclusive,readings) lets the readings decide\n"
    "too, as the theorems do;\n"
    "--fail-on never exits 0 whenever the run completed.\n\n"
    "examples:\n"
    "  attnspec verify --all                       every check, default regimes (< 2 min)\n"
    "  attnspec verify thm3.5 --trials 400 --seed 7 --json\n"
    "  attnspec verify thm3.5 --shape 64x16 --out /tmp/t35.h5\n"
    "  attnspec verify --all --thorough --time-budget 600\n"
    "  attnspec verify --all --threads 1           serial: the same report, slower\n"
    "  attnspec verify --all --dataset ''          without the real-model analysis\n"
    "  attnspec verify --all --shard 1/4 --out /tmp/s1.h5    one of 4 parts (then 'attnspec report "
    "merge')\n"
    "  mpirun -n 2 --bind-to none attnspec verify --all --mpi   2 ranks, one report (as root add\n"
    "      --allow-run-as-root; more ranks than cores: --oversubscribe; README, 'Sweeps')\n"
    "  attnspec verify thm3.4-model model-kappa-J --dataset minilm-l6:0   layer 0 only\n"
    "  attnspec verify model-infsa --dataset minilm-l6:*:3 --regime L5   head 3 of layer 5\n"
    "  attnspec verify thm3.8-above-sigma1 --instance "
    "reports/out/verify-thm3.8-above-sigma1.counterexamples/thm3.8-above-sigma1-instance_<i>.h5\n\n"
    "The default report is reports/out/verify-<checks>.h5: verify-all.h5 for --all, else the\n"
    "sorted check names joined by '+' (verify-thm3.4+thm3.5.h5; verify-<n>-checks-<hash>.h5\n"
    "when that name would pass 60 characters). Every violated instance, up to 64 per check, is\n"
    "also written as a replayable file to the report's own directory <report "
    "stem>.counterexamples/\n"
    "(replaced with the report; none with --no-report). The report records per check how many\n"
    "were violated (n_violated) and written (counterexample_files, counterexample_cap).\n";

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
         "only regimes whose name contains this text; matching no regime of a check is a usage "
         "error; thm3.4 search/* regimes run only when a text contains 'search'")
        ("time-budget", real_value(&o.run.time_budget_s, "--time-budget", 0, 1e9, true),
         "seconds (> 0) per check after which no new instance starts: a check ends within "
         "one instance's time of it and keeps the instances started before, in instance order "
         "(more with more --threads)")
        ("threads", count_value(&o.run.threads, "--threads", 1, 4096),
         ("workers evaluating the checks' instances in parallel (default: every core this "
          "process may use, here " + std::to_string(o.run.threads) + "); 1 is a serial run. "
          "With several checks, up to N of them run side by side (never more than N instances "
          "at once), unless --time-budget or --search-seconds asks for one check at a time. "
          "Verdicts, numbers and records are the same for any N (each instance runs with one "
          "BLAS thread), e.g. --threads 1 and --threads 8 give reports equal under "
          "scripts/compare-reports.py").c_str())
        ("thorough", po::bool_switch(&o.run.thorough), "more instances and larger shapes")
        ("quiet,q", po::bool_switch(&o.quiet), "no progress on stderr")
        ("fail-on", po::value(&o.fail_on)->default_value(o.fail_on),
         "exit non-zero on: violated | inconclusive | never, of a theorem; add ',readings' "
         "(e.g. violated,readings; readings alone = inconclusive,readings) to count the "
         "readings' verdicts too")
        ("instance", po::value(&o.instance),
         "replay one stored instance (an instance file, or a report: its first violated record)")
        ("record", po::value(&o.record),
         "with --instance on a report: the record group, e.g. instance_12")
        ("kappa-lambda", po::value(&o.run.kappa_lambda)->default_value(o.run.kappa_lambda),
         "thm3.4: convention for kappa(Lambda): nz (rtol N^2 eps) or strict (= inf: vacuous bound)")
        ("embedded", po::value(&o.run.embedded_heads),
         "input file whose heads join the attention checks as regimes embedded/<name> "
         "(default: datasets/embedded/attention_heads.h5 of the source tree; '' for none)")
        ("dataset", po::value(&o.run.dataset),
         "model dataset of the real-model analysis (model-weights-kappa, thm3.4-model, "
         "model-kappa-J, model-speca-lambda, model-infsa): NAME[:layer[:head[:sentence]]], an "
         "omitted or '*' part meaning all, e.g. minilm-l6:2 (layer 2), minilm-l6:*:5:0 (head 5 "
         "of every layer, sentence 0). Default: minilm-l6 (datasets/embedded/minilm-l6.h5; "
         "'attnspec dataset list'), each analysis on its default units: thm3.4-model, "
         "model-kappa-J and model-speca-lambda every head on the shortest sentence, "
         "model-weights-kappa and model-infsa everything (--thorough: every sentence). '' skips "
         "the real-model analysis")
        ("search-evals", count_value(&o.run.search_evals, "--search-evals", 0, kMaxDim),
         "thm3.4: evaluations of the counterexample searches (default 3600, --thorough 7200; "
         "0: no search); a seed reproduces them")
        ("search-seconds", real_value(&o.run.search_seconds, "--search-seconds", 0, 1e9, true),
         "thm3.4: wall-clock cap on the searches (default none); the report says whether it "
         "was reached (then the run is not reproducible)")
        ("search-budget", real_value(&o.run.search_budget_s, "--search-budget", 0, 1e9),
         "deprecated: 0 = --search-evals 0, S > 0 = --search-seconds S")
        ("shard", po::value(&o.shard),
         "i/n (0 <= i < n): run only part i of n of the selected checks (whole checks, split by "
         "estimated cost; a part may hold none when n exceeds the checks) and write a shard "
         "report (default verify-<checks>.shard-i-of-n.h5); 'attnspec report merge' combines "
         "the n shards into the report of the whole run")
        ("mpi", po::bool_switch(&o.mpi),
         "under mpirun: every rank runs the checks and evaluates its share of each check's "
         "instances (--threads counts per rank; default: this node's cores over its ranks), the "
         "ranks exchange results and rank 0 writes the one report; with --time-budget or "
         "--search-seconds, rank r of K runs shard r/K instead and rank 0 merges the shards. "
         "Ranks whose build or BLAS kernels differ are refused (64). Needs an MPI build (exit 69 "
         "otherwise)");
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
    const std::string group = find_replay_record(r, c->name, o.record);
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

// Runs one check with a progress bar on stderr (unless quiet). Its runner code holds the runner
// lock (proofs/registry.hpp): checks that run side by side never run it at once.
CheckRun run_one(const proofs::CheckInfo& c, proofs::RunOptions opt, bool quiet) {
    static std::mutex stderr_lock;  // side-by-side checks draw their bars one at a time
    Progress bar(c.name, 1, !quiet);
    opt.progress = [&](long done, long total) {
        std::lock_guard<std::mutex> lock(stderr_lock);
        bar.set_total(total);
        bar.update(done);
    };
    proofs::RunnerLock runner;
    CheckRun run = proofs::run_check(c, opt);
    std::lock_guard<std::mutex> lock(stderr_lock);
    bar.done();
    return run;
}

// Runs `mine` and returns their runs in that order. With --threads N > 1 and several checks, N
// runners take the checks, costliest first (shard_cost_estimate: a long check started last would
// run alone, and so would one whose units wait on the HDF5 lock, model-infsa), and run them side
// by side, while a process-wide cap keeps at most N instances running at once (ParallelSlots): a
// check's last instances no longer leave cores idle until the next check starts. Every instance
// still runs with one BLAS thread and its results are gathered in its check's instance order,
// so the runs are those of a serial run, returned in `mine` order. One check at a time when a
// wall-clock limit (--time-budget, --search-seconds) shapes what runs, or under --mpi.
// Errors: as a serial run, the first check in `mine` order that throws rethrows, after the
// started checks have ended: once check i threw, checks after i do not start and those before it
// still run (one of them may throw first in that order).
std::vector<CheckRun> run_checks(const std::vector<const proofs::CheckInfo*>& mine,
                                 const proofs::RunOptions& opt, bool quiet) {
    // One check at a time under a clock, and under --mpi's instance spread (every rank must make
    // its exchanges in the same order).
    const bool one_at_a_time = opt.time_budget_s > 0 || opt.search_seconds > 0 ||
                               opt.search_budget_s > 0 || opt.spread != nullptr;
    const std::size_t runners =
        one_at_a_time ? 1
                      : std::min<std::size_t>(mine.size(), static_cast<std::size_t>(opt.threads));
    std::vector<CheckRun> runs(mine.size());
    if (runners <= 1) {
        for (std::size_t i = 0; i < mine.size(); ++i) runs[i] = run_one(*mine[i], opt, quiet);
        return runs;
    }
    std::vector<double> cost(mine.size());
    for (std::size_t i = 0; i < mine.size(); ++i) cost[i] = shard_cost_estimate(*mine[i], opt);
    const std::vector<std::size_t> order = longest_first(cost);
    std::vector<std::exception_ptr> errors(mine.size());
    std::atomic<std::size_t> next{0}, failed_at{mine.size()};  // lowest index that threw
    auto runner = [&] {
        for (std::size_t k = next++; k < order.size(); k = next++) {
            const std::size_t i = order[k];
            if (i > failed_at) continue;  // a serial run would not have reached it
            try {
                runs[i] = run_one(*mine[i], opt, quiet);
            } catch (...) {
                errors[i] = std::current_exception();
                for (std::size_t f = failed_at; i < f && !failed_at.compare_exchange_weak(f, i);) {
                }
            }
        }
    };
    {
        ParallelSlots cap(opt.threads);
        BlasThreadsScope one(1);  // runner code too: no BLAS thread pool beside the instances
        std::vector<std::thread> pool;
        pool.reserve(runners - 1);
        try {
            for (std::size_t t = 1; t < runners; ++t) pool.emplace_back(runner);
        } catch (const std::system_error&) {
            // a runner that cannot start: those started and this thread take the checks
        }
        runner();
        for (auto& t : pool) t.join();
    }
    for (auto& e : errors)
        if (e) std::rethrow_exception(e);
    return runs;
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

// Writes the violated records of `run` into the report's companion directory and logs them.
CounterexampleFiles write_counterexamples(ReportWriter& w, const CheckRun& run,
                                          const Provenance& prov, bool quiet) {
    CounterexampleFiles f = write_counterexample_files(run, w.companion_staging(), prov);
    f.dir = w.companion_dir().substr(w.companion_dir().find_last_of('/') + 1);
    if (!quiet && f.violated > 0)
        log(run.check + ": " + std::to_string(f.violated) + " violated, " +
            std::to_string(f.names.size()) + " written (cap " + std::to_string(f.cap) + ") to " +
            w.companion_dir() + "/ (replay: attnspec verify " + run.check + " --instance " +
            w.companion_dir() + "/" + f.names.front() + ")");
    return f;
}

// Writes the runs and their counterexample files into `w` (committed by the caller).
void write_runs(ReportWriter& w, const std::vector<CheckRun>& runs, const Provenance& prov,
                bool quiet) {
    std::vector<CounterexampleFiles> files;
    files.reserve(runs.size());
    for (const auto& r : runs) files.push_back(write_counterexamples(w, r, prov, quiet));
    write_check_runs(w.root(), runs, &files);
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
            auto runs = std::make_shared<std::vector<CheckRun>>(run_checks(todo, o.run, quiet));
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
    std::vector<CheckRun> runs = run_checks(mine, o.run, quiet);
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
    if (o.list) {
        for (const auto& c : proofs::registry())
            std::cout << c.name << "\treconstructed (" << c.source << ")\t"
                      << proofs::to_string(c.kind) << "\t" << c.summary << "  [" << c.statement_file
                      << "]\n";
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
