// The registry of executable checks, listed by `attnspec verify --list` and run by `--all` in
// table order. CPU only. The convention, one check = three files with one stem:
//   proofs/<stem>.md                          statement, conventions, slack, planted violation
//   proofs/<stem>.cpp                         check_<stem>(...) -> CheckResult (pure, one
//                                             instance) and run_<stem>(RunOptions) -> CheckRun
//   proofs/include/attnspec/proofs/<stem>.hpp both, opening with what it checks and the .md
// (thm_3_8.* also holds lemma3.7; infsa_checks.* holds infsa.neumann and infsa.perron;
// attention_instances.* the regimes of thm3.3 and thm3.4 and the head storage). A check is
// registered by one line in the explicit table of registry.cpp, which reads like the command
// table of cli/cli.cpp: {name, summary, statement file, run_<stem>, replay_<stem>, source, kind}.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attnspec/base/check.hpp"
#include "attnspec/base/random.hpp"

namespace attnspec {
class H5Reader;  // io/h5.hpp: only the replay entries need it, so <hdf5.h> stays out of checks
}  // namespace attnspec

namespace attnspec::proofs {

class InstanceSpread;  // instance_spread.hpp

struct RunOptions {
    int trials = 0;              // 0: the check's default for the run (quick or thorough)
    std::uint64_t seed = 20251;  // master seed; instance i uses a seed derived from it
    bool thorough = false;       // go deeper (more trials, larger shapes)
    double time_budget_s = 0;    // 0: no limit; no instance starts past it (RunLoop)
    // Workers evaluating a check's instances (verify --threads; 1: serial on the caller's thread).
    // Results are gathered in instance order: the run is bit-identical for any count.
    int threads = 1;
    std::vector<long> shape;           // optional fixed shape (e.g. D, d), empty: the regime grid
    std::vector<std::string> regimes;  // optional filter on regime names (substring match)
    std::function<void(long done, long total)> progress;  // may be empty
    std::string kappa_lambda = "nz";  // thm3.4: convention for kappa(Lambda), "nz" or "strict"
    long search_evals = -1;           // thm3.4 search evaluations; < 0: the check's default
    double search_seconds = 0;        // thm3.4 search wall-clock cap; 0: none (reproducible)
    double search_budget_s = -1;      // deprecated: 0 = search_evals 0, > 0 = search_seconds
    // Embedded input file (datasets/embedded/attention_heads.h5 layout): its heads are added to
    // the attention checks as regimes "embedded/<name>". Empty: none.
    std::string embedded_heads;
    // Model dataset selector NAME[:layer[:head[:sentence]]] (io/model_input.hpp) of the real-model
    // analysis (the checks with CheckInfo::needs_dataset). Empty: those checks are skipped.
    std::string dataset;
    // verify --mpi: RunLoop evaluates only this process's share of each batch and exchanges the
    // results through it (instance_spread.hpp); null: every instance here. Not with a time budget
    // (the processes' clocks would disagree on where to stop): RunLoop refuses that (Usage).
    InstanceSpread* spread = nullptr;
};

// verify runs several checks side by side (--threads N > 1; cli/cmd_verify.cpp). A check's runner
// code (its run function outside its instances: plans, dataset and file reads, bookkeeping) then
// holds this process-wide lock, and lets it go only while its instances run (RunLoop::evaluate,
// the thm3.4 searches), so runner code, which may call HDF5 (not thread-safe in Debian's build),
// never runs beside other runner code nor beside an instance's HDF5 reads (load_unit_head takes
// it too). A runner must let it go (RunnerUnlock) around every parallel pool it starts: a worker
// waiting for the lock holds a slot of the pool cap (base/parallel.hpp ParallelSlots).
// RunnerLock takes it unless this thread holds it already; RunnerUnlock lets it go while this
// thread holds it and takes it back at its end. Outside a concurrent verify they cost a lock.
class RunnerLock {
  public:
    RunnerLock();
    ~RunnerLock();
    RunnerLock(const RunnerLock&) = delete;
    RunnerLock& operator=(const RunnerLock&) = delete;

  private:
    bool took_;
};
class RunnerUnlock {
  public:
    RunnerUnlock();
    ~RunnerUnlock();
    RunnerUnlock(const RunnerUnlock&) = delete;
    RunnerUnlock& operator=(const RunnerUnlock&) = delete;

  private:
    bool released_;
};

// The embedded dataset shipped with the source tree (compile-time path), or "" if it is absent.
std::string default_embedded_heads();
// The model dataset of the default run: "minilm-l6" when find_dataset finds it, else "".
std::string default_model_dataset();

// What a check is (docs/SOURCES.md, "Per check"). Written as the `kind` attribute of its report
// group (reports/SCHEMA.md) and given by `verify --list`, the console, --json and the page.
//   theorem     a reconstructed statement of a paper (or one it rests on): its violations are
//               findings, and only theorems decide verify's exit code by default
//   reading     an alternative reading of an informal claim, tested to map where it holds (a
//               violation is a map of where the reading fails, not a finding against the paper);
//               it decides the exit code only with --fail-on ...,readings
//   experiment  a table, no verdict; never decides the exit code
enum class CheckKind { theorem, reading, experiment };
const char* to_string(CheckKind k);  // "theorem", "reading", "experiment"

// What one check cost in `verify --all --seed 20251 --threads 1` (2 cores, idle, OpenBLAS with
// the kernels attnspec picks, 2026-12-01): seconds and instances. Only the ratios between checks
// matter: they order the shards of --shard and the side-by-side checks of --threads, costliest
// first (cli/verify_shard.cpp). A check with no measurement (seconds 0) counts 1 s.
struct RunCost {
    double seconds = 0;
    double instances = 0;
};

struct CheckInfo {
    std::string name;            // "thm3.5"
    std::string summary;         // one line
    std::string statement_file;  // proofs/<file>.md
    std::function<CheckRun(const RunOptions&)> run;
    // Re-runs the check on a stored instance: `group` holds instance/<matrices> and values/ attrs
    // (a record of a report, or the root of an instance file). Empty when not replayable.
    std::function<CheckResult(const H5Reader&, const std::string& group)> replay;
    // Where the statement comes from (docs/SOURCES.md), e.g. "SC summary, Thm 3.5". Every
    // statement is reconstructed from a summary of its paper, not quoted from the paper.
    std::string source;
    CheckKind kind = CheckKind::theorem;
    bool needs_dataset = false;  // runs on RunOptions::dataset; --all skips it when that is ""
    RunCost cost;                // measured, for scheduling (RunCost)
};

// The explicit table, in statement order (the order of `verify --all` and of the report).
const std::vector<CheckInfo>& registry();
const CheckInfo* find_check(const std::string& name);  // nullptr when unknown

// Runs `c` with the options' --regime filter applied to it: a filter that matches no regime of
// the check is a usage error (RunLoop::finish); search regimes ("search/...", thm3.4) run only
// when a filter value contains "search" (they start from the random instances the other values
// select). Cost: the check's run, less the search when the filter does not name it.
CheckRun run_check(const CheckInfo& c, RunOptions opt);

// Re-runs `c` on the record `group` of `r` (io/check_records.hpp: find_replay_record) and gives
// the result the record's seed and regime. Cost: one instance of the check. Errors: Usage when the
// check cannot replay, DataError when the record lacks an input.
CheckResult replay_record(const CheckInfo& c, const H5Reader& r, const std::string& group);

// Rejects options no check can run with: trials < 0, time_budget_s < 0, kappa_lambda other than
// "nz" / "strict", a dataset selector that does not parse (Usage) or names no dataset (NoInput).
// Throws Error(Usage, message, parameter name). With a fixed shape A x B, refuses
// (DataError, parameter "max_bytes") when a lower bound of any check's memory at that shape,
// 8 min(4 A B, A^2) bytes, exceeds memory_limit_bytes().
void check_run_options(const RunOptions& opt);

// The bookkeeping every runner shares: the run's header, the regime filter, the time budget,
// instance seeds, progress, the parallel evaluation, and the closing summary with its timing.
//
// A runner queues its instances with submit() in instance order; evaluate() (called by finish(),
// and by submit() whenever a batch of max(64, 16 x threads) is queued, max(256, 64 x processes)
// under a spread, so a huge --trials never queues more) runs the queue on RunOptions::threads
// workers, each with a single-threaded BLAS, and adds the results in the order they were queued, so
// verdicts, numbers and records do not depend on the thread count. The time budget is checked as
// each instance starts: none starts once it is spent, and the run keeps the instances that started
// before, a prefix of the queue in instance order (with more threads, more of them); without a
// budget a batch starts longest first (submit's cost). Progress is reported under a lock as
// instances end.
class RunLoop {
  public:
    // One instance, run on a worker: its result, or nothing when the draw has nothing to check
    // (the progress total drops it). It must not call HDF5 but under a lock (load_unit_head: a
    // build without thread safety would corrupt its state) nor write state another instance reads.
    using Instance = std::function<std::optional<CheckResult>()>;
    // Runs on the caller's thread, in instance order: whether a result enters the run; it may set
    // r.regime (used when submit() was given an empty regime).
    using Keep = std::function<bool(CheckResult&)>;

    RunLoop(const RunOptions& opt, const std::string& check, const std::string& claim,
            const std::string& headline);
    // Instances per regime: the check's default (quick or thorough), or with --trials N the
    // largest share of N spread over `regimes` (the first N mod regimes get one more; skip()
    // enforces each share, so the run draws exactly N). Also sets the progress total.
    long per_regime(long regimes, long quick, long thorough);
    // The same over named regimes, in loop order: --trials N is spread over those --regime keeps
    // (all N go to them) and the progress total counts only them from the start.
    long per_regime(const std::vector<std::string>& regimes, long quick, long thorough);
    // --regime filter (substring); remembers the regimes offered for the no-match error.
    bool selected(const std::string& regime) const;
    bool out_of_time() const;  // --time-budget spent
    // Whether instance `i` (= regime index * per_regime + t) is not drawn: beyond its regime's
    // share of --trials, or its regime filtered out (the progress total drops it).
    bool skip(std::uint64_t i, const std::string& regime);
    // The time budget stopped an evaluation: submit() queues nothing more, loops may end.
    bool stopped() const { return stopped_; }
    void drop();              // a planned instance that is not drawn (progress total - 1)
    void expect(long extra);  // instances beyond the regime grid (progress total + extra)
    std::uint64_t seed(std::uint64_t i) const;  // instance_seed(master, i)
    // Queues an instance (evaluating the queue when a batch is full; nothing once stopped());
    // its record gets `regime` (or the one `keep` sets) and `seed`. `cost` (optional, any unit
    // increasing with the work, e.g. tokens) orders the start: without --time-budget a batch
    // starts its costliest instances first (longest_first, base/parallel.hpp), so no long one
    // starts last while the other workers idle; results are gathered in queue order all the same.
    void submit(const std::string& regime, std::uint64_t seed, Instance fn, Keep keep = {},
                double cost = 0);
    // Evaluates the queue as described above and empties it. Exceptions: the first instance (in
    // queue order) that threw rethrows here, after every started instance has ended.
    void evaluate();
    CheckRun& run() { return run_; }
    double elapsed() const;
    // Evaluate what is queued, summarize, time, hand the run over. Throws Error(Usage) when a
    // --regime filter selected none of the regimes offered to selected(), naming the filter and
    // listing them.
    CheckRun finish();

  private:
    struct Queued {
        std::string regime;
        std::uint64_t seed;
        Instance fn;
        Keep keep;
        double cost;
    };
    // evaluate() under RunOptions::spread: this process's share, then every process's results.
    void evaluate_spread(std::vector<Queued>& queue, const std::vector<double>& cost,
                         std::vector<std::optional<CheckResult>>& out);
    const RunOptions& opt_;
    CheckRun run_;
    std::vector<Queued> queue_;
    long total_ = 0, done_ = 0, per_ = 1, regimes_ = 1;
    bool stopped_ = false;
    std::vector<long> share_;  // per named regime: instances to draw (0 when filtered out)
    mutable std::vector<std::string> offered_;  // regimes seen by selected(), in order
    mutable bool any_selected_ = false;
    double t0_ = 0;
};

// The weight-shape grid of the single-matrix checks (thm3.5, lemma3.7, thm3.8): square 16x16,
// tall 48x12, wide 12x48, plus `large` with --thorough; --shape AxB replaces it by "given".
struct WeightShape {
    std::string name;
    long D, d;
};
std::vector<WeightShape> weight_shapes(const RunOptions& opt, WeightShape large);

using attnspec::instance_seed;  // base/random.hpp

}  // namespace attnspec::proofs
