// proofs::RunLoop: --trials N draws exactly N over the kept regimes, the progress total is right
// from the start and never passed, the time budget stops the evaluation at once (any --threads);
// the scheduler of checks side by side (run_side_by_side) and the one BLAS thread (OneBlasThread).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/proofs/registry.hpp"
#include "attnspec/proofs/run_loop.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::proofs;

namespace {
// The loop shape every runner uses: instance i = regime index * per + t.
struct Drive {
    long drawn = 0, iterations = 0, last_done = 0, last_total = -1, max_over = 0;
    std::vector<long> per_regime_count;
};
Drive drive(RunOptions opt, const std::vector<std::string>& names, long quick) {
    Drive d;
    opt.progress = [&](long done, long total) {
        d.last_done = done, d.last_total = total;
        d.max_over = std::max(d.max_over, done - total);
    };
    RunLoop loop(opt, "t", "claim", "h");
    const long per = loop.per_regime(names, quick, 4 * quick);
    d.per_regime_count.assign(names.size(), 0);
    std::uint64_t i = 0;
    for (std::size_t r = 0; r < names.size(); ++r)
        for (long t = 0; t < per && !loop.stopped(); ++t, ++i) {
            ++d.iterations;
            if (loop.skip(i, names[r])) continue;
            loop.submit(names[r], loop.seed(i), [] { return CheckResult{}; });
            ++d.per_regime_count[r], ++d.drawn;
        }
    const CheckRun run = loop.finish();
    CHECK(run.results.size() == static_cast<std::size_t>(d.drawn));
    return d;
}
}  // namespace

TEST_CASE("RunLoop: --trials N draws exactly N, spread over the kept regimes", "[check]") {
    const std::vector<std::string> names = {"a/x", "a/y", "b/x", "b/y", "c/x"};
    for (int n : {1, 2, 4, 5, 6, 13, 100}) {
        RunOptions opt;
        opt.trials = n;
        const Drive d = drive(opt, names, 7);
        INFO("trials " << n);
        CHECK(d.drawn == n);
        CHECK(d.last_done == n);
        CHECK(d.last_total == n);
        CHECK(d.max_over == 0);
        for (long c : d.per_regime_count) CHECK((c == n / 5 || c == n / 5 + 1));
        opt.regimes = {"/x"};  // 3 regimes kept: all N go to them
        const Drive f = drive(opt, names, 7);
        CHECK(f.drawn == n);
        CHECK(f.last_total == n);
        CHECK(f.per_regime_count[1] == 0);
        CHECK(f.per_regime_count[3] == 0);
    }
    RunOptions def;  // no --trials: the check's default per kept regime
    def.regimes = {"b/"};
    const Drive d = drive(def, names, 7);
    CHECK(d.drawn == 14);
    CHECK(d.last_total == 14);
}

TEST_CASE("RunLoop: the time budget ends the evaluation within one instance", "[check]") {
    for (int threads : {1, 3}) {
        RunOptions opt;
        opt.trials = 1000;
        opt.time_budget_s = 0.05;
        opt.threads = threads;
        RunLoop loop(opt, "t", "claim", "h");
        const std::vector<std::string> names = {"a", "b", "c"};
        const long per = loop.per_regime(names, 1, 1);
        const auto t0 = std::chrono::steady_clock::now();
        std::uint64_t i = 0;
        for (std::size_t r = 0; r < names.size(); ++r)
            for (long t = 0; t < per; ++t, ++i) {
                if (loop.skip(i, names[r])) continue;
                loop.submit(names[r], loop.seed(i), [] {
                    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // one "instance"
                    return CheckResult{};
                });
            }
        const CheckRun run = loop.finish();
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        INFO("threads " << threads);
        CHECK(loop.stopped());
        CHECK(s < 0.05 + 0.5);
        CHECK(run.results.size() < 100);
        // what a budget-cut run keeps: the instances that started, a prefix in instance order
        for (std::size_t k = 0; k < run.results.size(); ++k)
            CHECK(run.results[k].seed == loop.seed(k));
    }
}

// The scheduling costs live in the check table (one home: --shard and --threads read them there):
// a check added without its measured cost would be scheduled as 1 s, wherever it really falls.
TEST_CASE("every check in the table carries its measured run cost", "[check]") {
    for (const auto& c : attnspec::proofs::registry()) {
        INFO(c.name);
        CHECK(c.cost.seconds > 0);
        CHECK(c.cost.instances >= 1);
    }
}

namespace {
// The most callers that were ever inside a section at once (an RAII probe around it).
struct Overlap {
    std::atomic<int> now{0}, peak{0};
};
struct Inside {
    explicit Inside(Overlap& o) : o_(o) {
        const int n = ++o_.now;
        for (int p = o_.peak.load(); n > p && !o_.peak.compare_exchange_weak(p, n);) {
        }
    }
    ~Inside() { --o_.now; }
    Inside(const Inside&) = delete;
    Inside& operator=(const Inside&) = delete;
    Overlap& o_;
};
}  // namespace

TEST_CASE("run_side_by_side: runs in task order, runner code one at a time, events one at a time",
          "[check]") {
    for (int threads : {1, 3}) {
        RunOptions opt;
        opt.threads = threads;
        Overlap runner, events;
        std::atomic<int> blas_not_one{0};
        std::vector<int> finished(6, 0), progressed(6, 0);
        std::vector<CheckTask> tasks;
        for (int i = 0; i < 6; ++i)
            tasks.push_back({[&, i](const RunOptions& o) {
                                 Inside in(runner);  // the runner lock keeps others out
                                 if (threads > 1 && attnspec::blas_threads() != 1) ++blas_not_one;
                                 std::this_thread::sleep_for(std::chrono::milliseconds(5));
                                 if (o.progress) o.progress(1, 1);
                                 CheckRun run;
                                 run.check = "task" + std::to_string(i);
                                 return run;
                             },
                             static_cast<double>(i % 3)});
        CheckEvents ev;
        ev.progress = [&](std::size_t i, long done, long total) {
            Inside in(events);
            progressed[i] += static_cast<int>(done == 1 && total == 1);
        };
        ev.finished = [&](std::size_t i, const CheckRun& run) {
            Inside in(events);
            finished[i] += static_cast<int>(run.check == "task" + std::to_string(i));
        };
        const std::vector<CheckRun> runs = run_side_by_side(tasks, opt, ev);
        INFO("threads " << threads);
        REQUIRE(runs.size() == tasks.size());
        for (std::size_t i = 0; i < runs.size(); ++i) {
            CHECK(runs[i].check == "task" + std::to_string(i));
            CHECK(finished[i] == 1);
            CHECK(progressed[i] == 1);
        }
        CHECK(runner.peak.load() == 1);  // planted: without the runner lock, 3 runners overlap
        CHECK(events.peak.load() == 1);
        CHECK(blas_not_one.load() == 0);  // side by side, runner code runs one BLAS thread too
    }
}

TEST_CASE("run_side_by_side: the first task in task order that throws rethrows, any thread count",
          "[check]") {
    for (int threads : {1, 2, 4}) {
        RunOptions opt;
        opt.threads = threads;
        std::vector<CheckTask> tasks;
        for (int i = 0; i < 4; ++i)
            tasks.push_back({[i](const RunOptions&) {
                                 if (i >= 1)  // the costliest (3) starts first and throws first
                                     throw Error(ExitCode::DataError, "task" + std::to_string(i));
                                 return CheckRun{};
                             },
                             static_cast<double>(i)});
        INFO("threads " << threads);
        const Error e = test::error_of([&] { run_side_by_side(tasks, opt); });
        CHECK(std::string(e.what()).find("task1") != std::string::npos);
    }
}

TEST_CASE(
    "OneBlasThread: holders nested or side by side share one setting, restored after the last",
    "[check]") {
    const int before = attnspec::blas_threads();
    attnspec::set_blas_threads(2);  // a count to come back to (a BLAS without control stays 1)
    const int two = attnspec::blas_threads();
    {
        OneBlasThread outer;
        CHECK(attnspec::blas_threads() == 1);
        std::thread other([] { OneBlasThread beside; });  // ends first: must not restore 2
        other.join();
        { OneBlasThread nested; }
        CHECK(attnspec::blas_threads() == 1);
    }
    CHECK(attnspec::blas_threads() == two);
    attnspec::set_blas_threads(before);
}
