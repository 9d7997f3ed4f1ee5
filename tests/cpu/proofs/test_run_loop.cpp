// proofs::RunLoop: --trials N draws exactly N over the kept regimes, the progress total is right
// from the start and never passed, the time budget stops the evaluation at once (any --threads).
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "attnspec/proofs/registry.hpp"
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
