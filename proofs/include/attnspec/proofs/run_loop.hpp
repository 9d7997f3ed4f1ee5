// How checks run: the options of a run (RunOptions), the loop every runner drives (RunLoop: the
// regime filter, --trials, the time budget, seeds, progress, the parallel evaluation of the
// instances), the runner lock that lets several checks run side by side, and the scheduler that
// runs them so (run_side_by_side, verify --threads). The spread over processes (verify --mpi) is
// instance_spread.hpp, which RunLoop drives. CPU only.
//
// The checks' headers include this one; the check table (registry.hpp) includes it too and adapts
// its rows to the scheduler (run_checks). This header knows no check and never includes
// registry.hpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attnspec/base/check.hpp"
#include "attnspec/base/random.hpp"

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

// The embedded dataset shipped with the source tree (compile-time path), or "" if it is absent.
std::string default_embedded_heads();
// The model dataset of the default run: "minilm-l6" when find_dataset finds it, else "".
std::string default_model_dataset();

// Rejects options no check can run with: trials < 0, time_budget_s < 0, kappa_lambda other than
// "nz" / "strict", a dataset selector that does not parse (Usage) or names no dataset (NoInput).
// Throws Error(Usage, message, parameter name). With a fixed shape A x B, refuses
// (DataError, parameter "max_bytes") when a lower bound of any check's memory at that shape,
// 8 min(4 A B, A^2) bytes, exceeds memory_limit_bytes().
void check_run_options(const RunOptions& opt);

// Several checks run side by side (run_side_by_side). A check's runner code (its run function
// outside its instances: plans, dataset and file reads, bookkeeping) then holds this process-wide
// lock, and lets it go only while its instances run (RunLoop::evaluate, the thm3.4 searches:
// run_instances), so runner code, which may call HDF5 (not thread-safe in Debian's build), never
// runs beside other runner code nor beside an instance's HDF5 reads (load_unit_head takes it
// too). A runner must let it go (RunnerUnlock) around every parallel pool it starts: a worker
// waiting for the lock holds a slot of the pool cap (base/parallel.hpp ParallelSlots).
// RunnerLock takes it unless this thread holds it already; RunnerUnlock lets it go while this
// thread holds it and takes it back at its end. Outside a concurrent run they cost a lock.
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

// While one lives, in any thread, the BLAS runs one thread (base/blas_runtime.hpp: the count is
// process-wide): every instance runs the same single-threaded code for any --threads, so runs are
// bit-identical. The first holder sets it, the last one to end restores the count from before the
// first; holders nested or side by side (the scheduler's checks, their instance pools) share that
// one setting, so none restores a count while another still needs one thread.
class OneBlasThread {
  public:
    OneBlasThread();
    ~OneBlasThread();
    OneBlasThread(const OneBlasThread&) = delete;
    OneBlasThread& operator=(const OneBlasThread&) = delete;
};

// The pool every check's instances run on (RunLoop::evaluate, spread_evaluate, the thm3.4
// searches): parallel_for_in_order(order, threads, fn, stop) (base/parallel.hpp) with the runner
// lock let go (RunnerUnlock: other checks' runner code may run meanwhile) and one BLAS thread
// (OneBlasThread). Returns how many positions of `order` started; exceptions as that pool's.
std::size_t run_instances(const std::vector<std::size_t>& order, int threads,
                          const std::function<void(std::size_t)>& fn,
                          const std::function<bool()>& stop = {});

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

// One check for run_side_by_side: how to run it (a check's run function; registry.hpp's
// run_checks passes run_check on a table row) and its estimated cost (any unit increasing with
// the work, e.g. seconds).
struct CheckTask {
    std::function<CheckRun(const RunOptions&)> run;
    double cost = 1;
};

// What the caller hears while run_side_by_side runs, check by check (`i`: the position in the
// tasks). Calls are made one at a time (under one lock), from whichever thread runs the check.
// Either may be empty.
struct CheckEvents {
    // Check i's instances: done of total (RunOptions::progress of its run).
    std::function<void(std::size_t i, long done, long total)> progress;
    // Check i has ended with `run` (not called when it threw); under the runner lock too.
    std::function<void(std::size_t i, const CheckRun& run)> finished;
};

// Runs `tasks` and returns their runs in that order; each runs with `opt` (its progress replaced
// by `events.progress`) under the runner lock. With opt.threads N > 1 and several tasks, N runners
// take them, costliest first (a long check started last would run alone, and so would one whose
// units wait on the HDF5 lock, model-infsa), and run them side by side, while a process-wide cap
// keeps at most N instances running at once (ParallelSlots): a check's last instances no longer
// leave cores idle until the next check starts. Every instance still runs with one BLAS thread
// (the runner code too while checks run side by side: OneBlasThread) and its results are gathered
// in its check's instance order, so the runs are those of a serial run. One check at a time when
// a wall-clock limit (time_budget_s, search_seconds, search_budget_s > 0) shapes what runs, or
// under a spread (every process must make its exchanges in the same order).
// Errors: as a serial run, the first task in `tasks` order that throws rethrows, after the
// started tasks have ended: once task i threw, tasks after i do not start and those before it
// still run (one of them may throw first in that order).
std::vector<CheckRun> run_side_by_side(const std::vector<CheckTask>& tasks, const RunOptions& opt,
                                       const CheckEvents& events = {});

using attnspec::instance_seed;  // base/random.hpp

}  // namespace attnspec::proofs
