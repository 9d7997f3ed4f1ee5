// proofs/run_loop.hpp: the run options' checks and defaults, the runner lock, the instance pool,
// RunLoop, its spread over processes (instance_spread.hpp: spread_evaluate) and the scheduler of
// checks side by side.
#include "attnspec/proofs/run_loop.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>

#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/interrupt.hpp"
#include "attnspec/base/memory.hpp"
#include "attnspec/base/parallel.hpp"
#include "attnspec/io/model_input.hpp"
#include "attnspec/proofs/instance_spread.hpp"

namespace attnspec::proofs {

std::string default_embedded_heads() {
#ifdef ATTNSPEC_DEFAULT_EMBEDDED_HEADS
    if (::access(ATTNSPEC_DEFAULT_EMBEDDED_HEADS, R_OK) == 0)
        return ATTNSPEC_DEFAULT_EMBEDDED_HEADS;
#endif
    return "";
}

std::string default_model_dataset() {
    try {
        return find_dataset("minilm-l6").name;
    } catch (const Error&) {
        return "";  // absent (e.g. a trimmed source tree): the real-model analysis is skipped
    }
}

namespace {
std::string text(double x) {
    std::ostringstream os;
    os << x;
    return os.str();
}
}  // namespace

void check_run_options(const RunOptions& opt) {
    if (opt.trials < 0)
        throw Error(ExitCode::Usage, "trials = " + std::to_string(opt.trials) + " must be >= 0",
                    "trials");
    if (!(opt.time_budget_s >= 0) || !std::isfinite(opt.time_budget_s))
        throw Error(ExitCode::Usage,
                    "time_budget_s = " + text(opt.time_budget_s) + " s must be >= 0",
                    "time_budget_s");
    if (opt.shape.size() == 2) {  // before any check draws: a lower bound of what each needs
        const double A = double(opt.shape[0]), B = double(opt.shape[1]);
        // W, its correction, U and V of its SVD (weight checks: 4 A x B); Â of N = A tokens
        // (InfSA checks: A x A); the attention checks' J (2AB x 3AB) exceeds both.
        check_allocation(8.0 * std::min(4.0 * A * B, A * A), memory_limit_bytes(),
                         "--shape " + std::to_string(opt.shape[0]) + "x" +
                             std::to_string(opt.shape[1]) +
                             " (at least four A x B or one A x A matrix)",
                         "max_bytes");
    }
    if (opt.search_evals < -1)
        throw Error(ExitCode::Usage,
                    "search_evals = " + std::to_string(opt.search_evals) + " must be >= 0",
                    "search_evals");
    if (!(opt.search_seconds >= 0))
        throw Error(ExitCode::Usage,
                    "search_seconds = " + text(opt.search_seconds) + " s must be >= 0",
                    "search_seconds");
    if (!opt.dataset.empty())  // Usage on a malformed selector, NoInput on an unknown name
        find_dataset(DatasetSelector::parse(opt.dataset).name);
    if (opt.kappa_lambda != "nz" && opt.kappa_lambda != "strict")
        throw Error(ExitCode::Usage,
                    "kappa_lambda = '" + opt.kappa_lambda + "' must be nz or strict",
                    "kappa_lambda");
}

namespace {
double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::mutex& runner_mutex() {
    static std::mutex m;
    return m;
}
thread_local bool holds_runner_lock = false;

std::mutex& one_blas_mutex() {
    static std::mutex m;
    return m;
}
int one_blas_holders = 0;                  // under one_blas_mutex()
std::optional<BlasThreadsScope> one_blas;  // the one setting, while a holder lives
}  // namespace

RunnerLock::RunnerLock() : took_(!holds_runner_lock) {
    if (!took_) return;
    runner_mutex().lock();
    holds_runner_lock = true;
}

RunnerLock::~RunnerLock() {
    if (!took_) return;
    holds_runner_lock = false;
    runner_mutex().unlock();
}

RunnerUnlock::RunnerUnlock() : released_(holds_runner_lock) {
    if (!released_) return;
    holds_runner_lock = false;
    runner_mutex().unlock();
}

RunnerUnlock::~RunnerUnlock() {
    if (!released_) return;
    runner_mutex().lock();
    holds_runner_lock = true;
}

OneBlasThread::OneBlasThread() {
    std::lock_guard<std::mutex> lock(one_blas_mutex());
    if (one_blas_holders++ == 0) one_blas.emplace(1);
}

OneBlasThread::~OneBlasThread() {
    std::lock_guard<std::mutex> lock(one_blas_mutex());
    if (--one_blas_holders == 0) one_blas.reset();
}

std::size_t run_instances(const std::vector<std::size_t>& order, int threads,
                          const std::function<void(std::size_t)>& fn,
                          const std::function<bool()>& stop) {
    RunnerUnlock others;  // other checks' runner code may run meanwhile (RunnerLock)
    OneBlasThread blas;   // each instance runs single-threaded code, whatever --threads
    // check_interrupt before each instance: a host's cancellation (base/interrupt.hpp) ends the
    // run at the next instance, with the error of the first instance that saw it
    return parallel_for_in_order(
        order, threads,
        [&fn](std::size_t i) {
            check_interrupt();
            fn(i);
        },
        stop);
}

RunLoop::RunLoop(const RunOptions& opt, const std::string& check, const std::string& claim,
                 const std::string& headline)
    : opt_(opt), t0_(now_s()) {
    run_.check = check;
    run_.claim = claim;
    run_.seed = opt.seed;
    run_.headline = headline;
}

long RunLoop::per_regime(long regimes, long quick, long thorough) {
    regimes_ = std::max<long>(1, regimes);
    if (opt_.trials > 0) {
        per_ = (opt_.trials + regimes_ - 1) / regimes_;
        total_ = opt_.trials;
    } else {
        per_ = opt_.thorough ? thorough : quick;
        total_ = per_ * regimes_;
    }
    return per_;
}

long RunLoop::per_regime(const std::vector<std::string>& regimes, long quick, long thorough) {
    long kept = 0;
    for (const auto& r : regimes) kept += selected(r) ? 1 : 0;
    const long n = opt_.trials > 0 ? opt_.trials : (opt_.thorough ? thorough : quick) * kept;
    per_ = kept == 0         ? 0  // nothing to draw: the loops do not run
           : opt_.trials > 0 ? (n + kept - 1) / kept
                             : (opt_.thorough ? thorough : quick);
    share_.assign(regimes.size(), 0);
    long k = 0;  // the k-th kept regime draws n / kept, one more while k < n mod kept
    for (std::size_t r = 0; r < regimes.size(); ++r)
        if (selected(regimes[r])) share_[r] = n / kept + (k++ < n % kept ? 1 : 0);
    regimes_ = std::max<long>(1, static_cast<long>(regimes.size()));
    total_ = kept ? n : 0;
    return per_;
}

bool RunLoop::selected(const std::string& regime) const {
    if (opt_.regimes.empty()) return true;
    if (std::find(offered_.begin(), offered_.end(), regime) == offered_.end())
        offered_.push_back(regime);
    for (const auto& f : opt_.regimes)
        if (regime.find(f) != std::string::npos) return any_selected_ = true;
    return false;
}

bool RunLoop::out_of_time() const {
    return opt_.time_budget_s > 0 && elapsed() >= opt_.time_budget_s;
}

bool RunLoop::skip(std::uint64_t i, const std::string& regime) {
    if (stopped_) return true;
    if (!share_.empty()) {  // named regimes: shares and the filter are known
        if (per_ <= 0) return true;
        const auto r = static_cast<std::size_t>(i / static_cast<std::uint64_t>(per_));
        const auto t = static_cast<long>(i % static_cast<std::uint64_t>(per_));
        if (r >= share_.size() || t >= share_[r]) return true;
    } else if (opt_.trials >
               0) {  // regime r draws trials / regimes, one more for r < trials % regimes
        const auto r = static_cast<long>(i / static_cast<std::uint64_t>(per_));
        const auto t = static_cast<long>(i % static_cast<std::uint64_t>(per_));
        if (t >= opt_.trials / regimes_ + (r < opt_.trials % regimes_ ? 1 : 0)) return true;
    }
    if (share_.empty() && !selected(regime)) {
        drop();
        return true;
    }
    return false;
}

void RunLoop::drop() {
    total_ = std::max(done_, total_ - 1);
    if (opt_.progress) opt_.progress(done_, total_);
}

void RunLoop::expect(long extra) { total_ += extra; }

std::uint64_t RunLoop::seed(std::uint64_t i) const { return instance_seed(opt_.seed, i); }

double RunLoop::elapsed() const { return now_s() - t0_; }

void RunLoop::submit(const std::string& regime, std::uint64_t seed, Instance fn, Keep keep,
                     double cost) {
    if (stopped_) return;
    queue_.push_back({regime, seed, std::move(fn), std::move(keep), cost});
    // Evaluated in batches, so that a huge --trials never queues more than a batch and the
    // budget stops the submitting loops (stopped()); 16 instances per worker keep the idle time
    // at a batch's end small. Under a spread the batches must be the same on every process,
    // whose --threads may differ (nodes of different sizes): the size then depends on the number
    // of processes only.
    const int batch = opt_.spread != nullptr ? std::max(256, 64 * opt_.spread->size())
                                             : std::max(64, 16 * opt_.threads);
    if (queue_.size() >= static_cast<std::size_t>(batch)) evaluate();
}

void RunLoop::evaluate() {
    std::vector<Queued> queue = std::move(queue_);
    queue_.clear();
    std::vector<std::optional<CheckResult>> out(queue.size());
    std::mutex m;  // done_, total_ and the progress callback
    // Start order: longest first, unless a time budget may cut the batch (it keeps a prefix in
    // instance order). Every instance that starts is gathered below in queue order.
    std::vector<double> cost(queue.size());
    for (std::size_t k = 0; k < queue.size(); ++k) cost[k] = queue[k].cost;
    std::vector<std::size_t> order = longest_first(cost);
    if (opt_.time_budget_s > 0)
        for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::size_t started = 0;
    if (opt_.spread != nullptr && opt_.spread->size() > 1) {
        evaluate_spread(queue, cost, out);
        started = queue.size();
    } else {
        started = run_instances(
            order, opt_.threads,
            [&](std::size_t k) {
                out[k] = queue[k].fn();
                std::lock_guard<std::mutex> lock(m);
                if (out[k])
                    total_ = std::max(total_, ++done_);
                else
                    total_ = std::max(done_, total_ - 1);  // nothing to check: not drawn
                if (opt_.progress) opt_.progress(done_, total_);
            },
            [&] { return stopped_ || (stopped_ = out_of_time()); });  // under the pool's lock
    }
    // Without a budget every instance started (or one threw and nothing is gathered); with one,
    // the first `started` in queue order did.
    for (std::size_t k = 0; k < started; ++k) {
        if (!out[k]) continue;
        CheckResult& r = *out[k];
        if (queue[k].keep && !queue[k].keep(r)) continue;
        if (!queue[k].regime.empty()) r.regime = queue[k].regime;
        r.seed = queue[k].seed;
        run_.results.push_back(std::move(r));
    }
}

void RunLoop::evaluate_spread(std::vector<Queued>& queue, const std::vector<double>& cost,
                              std::vector<std::optional<CheckResult>>& out) {
    if (queue.empty()) return;  // the same on every process: no exchange
    if (opt_.time_budget_s > 0)
        throw Error(ExitCode::Usage,
                    "a time budget cannot be combined with instances spread over processes: the "
                    "processes' clocks would disagree on where the run stops",
                    "time_budget_s");
    auto count = [this](const InstanceSpread::Slot& s) {
        if (s.result)
            total_ = std::max(total_, ++done_);
        else
            total_ = std::max(done_, total_ - 1);  // nothing to check: not drawn
    };
    std::vector<InstanceSpread::Slot> slots = spread_evaluate(
        *opt_.spread, cost, opt_.threads,
        [&](InstanceSpread::Slot& slot, std::size_t i) { slot.result = queue[i].fn(); },
        [&](const InstanceSpread::Slot& slot) {
            count(slot);
            if (opt_.progress) opt_.progress(done_, total_);
        });
    for (std::size_t i = 0; i < slots.size(); ++i) {
        if (!slots[i].owned) count(slots[i]);
        out[i] = std::move(slots[i].result);
    }
    if (opt_.progress) opt_.progress(done_, total_);
}

CheckRun RunLoop::finish() {
    evaluate();
    if (!opt_.regimes.empty() && !any_selected_ && !offered_.empty()) {
        std::string filter, list;
        for (const auto& f : opt_.regimes) filter += (filter.empty() ? "'" : ", '") + f + "'";
        for (const auto& r : offered_) list += (list.empty() ? "" : ", ") + r;
        throw Error(ExitCode::Usage,
                    "regime filter " + filter + " matches no regime of " + run_.check +
                        "; its regimes: " + list,
                    "regimes");
    }
    run_.summarize();
    run_.seconds = elapsed();
    return std::move(run_);
}

std::vector<WeightShape> weight_shapes(const RunOptions& opt, WeightShape large) {
    if (opt.shape.size() == 2) return {{"given", opt.shape[0], opt.shape[1]}};
    std::vector<WeightShape> shapes = {{"square", 16, 16}, {"tall", 48, 12}, {"wide", 12, 48}};
    if (opt.thorough) shapes.push_back(std::move(large));
    return shapes;
}

std::vector<CheckRun> run_side_by_side(const std::vector<CheckTask>& tasks, const RunOptions& opt,
                                       const CheckEvents& events) {
    std::mutex events_lock;  // side-by-side checks report one at a time
    const auto run_one = [&](std::size_t i) {
        RunOptions mine = opt;
        mine.progress = nullptr;
        if (events.progress)
            mine.progress = [&events, &events_lock, i](long done, long total) {
                std::lock_guard<std::mutex> lock(events_lock);
                events.progress(i, done, total);
            };
        RunnerLock held;  // this check's runner code, until it ends
        CheckRun run = tasks[i].run(mine);
        if (events.finished) {
            std::lock_guard<std::mutex> lock(events_lock);
            events.finished(i, run);
        }
        return run;
    };
    const bool one_at_a_time = opt.time_budget_s > 0 || opt.search_seconds > 0 ||
                               opt.search_budget_s > 0 || opt.spread != nullptr;
    const std::size_t runners =
        one_at_a_time ? 1
                      : std::min<std::size_t>(tasks.size(), static_cast<std::size_t>(opt.threads));
    std::vector<CheckRun> runs(tasks.size());
    if (runners <= 1) {
        for (std::size_t i = 0; i < tasks.size(); ++i) runs[i] = run_one(i);
        return runs;
    }
    std::vector<double> cost(tasks.size());
    for (std::size_t i = 0; i < tasks.size(); ++i) cost[i] = tasks[i].cost;
    const std::vector<std::size_t> order = longest_first(cost);
    std::vector<std::exception_ptr> errors(tasks.size());
    std::atomic<std::size_t> next{0}, failed_at{tasks.size()};  // lowest index that threw
    auto runner = [&] {
        for (std::size_t k = next++; k < order.size(); k = next++) {
            const std::size_t i = order[k];
            if (i > failed_at) continue;  // a serial run would not have reached it
            try {
                runs[i] = run_one(i);
            } catch (...) {
                errors[i] = std::current_exception();
                for (std::size_t f = failed_at; i < f && !failed_at.compare_exchange_weak(f, i);) {
                }
            }
        }
    };
    {
        ParallelSlots cap(opt.threads);
        OneBlasThread blas;  // runner code too: no BLAS thread pool beside the instances
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

}  // namespace attnspec::proofs
