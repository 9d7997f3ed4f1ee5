// proofs::InstanceSpread (verify --mpi's instance mode) without MPI: the byte image of a result
// is exact and refuses damage, and K "processes" played by K threads, each evaluating its share
// of every batch and exchanging through an in-memory share(), reproduce the serial run, thm3.4's
// spread searches included. Planted: an exchange that drops the other processes' results must
// make the runs differ, and an instance that throws on one process throws on every one.
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/proofs/instance_spread.hpp"
#include "attnspec/proofs/registry.hpp"
#include "attnspec/proofs/thm_3_4.hpp"
#include "attnspec/proofs/thm_3_5.hpp"
#include "attnspec/proofs/thm_3_8.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::proofs;

namespace {

CheckResult sample_result() {
    CheckResult r;
    r.check = "thm-x";
    r.claim = "kappa <= 2";
    r.regime = "tall/kappa-1e12";
    r.seed = 0xfedcba9876543210ULL;
    r.verdict = Verdict::violated;
    r.hypotheses = {{"full rank", true, "sigma_r > 0"}, {"square", false, ""}};
    Comparison c;
    c.name = "kappa";
    c.lhs_name = "kappa(W')";
    c.rhs_name = "2";
    c.lhs = 2.0000000000000004;
    c.rhs = 2;
    c.lhs_enc = {1.9999999999999998, 2.000000000000001};
    c.rhs_enc = Interval::point(2);
    c.rel = Relation::lt;
    c.attainable = true;
    c.verdict = Verdict::violated;
    c.margin = -0.0;
    c.ratio = std::numeric_limits<double>::infinity();
    c.basis = "proved by enclosures";
    r.comparisons = {c, Comparison{}};
    r.tolerances = {{"rank_tol", 1e-13, "N^2 eps"}};
    r.conventions = {{"kappa", "sigma_1/sigma_r"}};
    double payload_nan = 0;
    const std::uint64_t bits = 0x7ff800000000beefULL;  // a NaN with a payload
    std::memcpy(&payload_nan, &bits, sizeof bits);
    r.values = {{"nan", payload_nan}, {"tiny", 4.9e-324}, {"neg", -1e300}};
    Eigen::MatrixXd w(3, 2);
    w << 1, -2, 3.5, 1e-310, -0.0, 7;
    r.instance = {{"W", w}, {"empty", Eigen::MatrixXd(0, 4)}};
    r.note = std::string("with\0nul", 8);
    return r;
}

std::string bytes_of(const CheckResult& r) {
    std::string b;
    encode_check_result(r, b);
    return b;
}

std::string bytes_of(const CheckRun& run) {
    std::string b;
    for (const auto& r : run.results) encode_check_result(r, b);
    return b;
}

// K threads, one per "process": share() publishes this process's owned slots, waits for the
// others, and reads theirs (or, planted, drops them).
struct Exchange {
    explicit Exchange(int k) : size(k), posted(static_cast<size_t>(k)) {}
    void wait_all() {
        std::unique_lock<std::mutex> lock(m);
        const long gen = generation;
        if (++arrived == size) {
            arrived = 0;
            ++generation;
            cv.notify_all();
        } else {
            cv.wait(lock, [&] { return generation != gen; });
        }
    }
    int size;
    std::vector<std::string> posted;
    std::mutex m;
    std::condition_variable cv;
    int arrived = 0;
    long generation = 0;
};

class ThreadSpread final : public InstanceSpread {
  public:
    ThreadSpread(Exchange& ex, int rank, bool drop_others)
        : ex_(ex), rank_(rank), drop_(drop_others) {}
    int rank() const override { return rank_; }
    int size() const override { return ex_.size; }
    void share(std::vector<Slot>& slots) override {
        ++exchanges;
        for (const auto& s : slots) owned += s.owned ? 1 : 0;
        ex_.posted[static_cast<size_t>(rank_)] = encode_owned_slots(slots);
        ex_.wait_all();
        if (!drop_)
            for (int r = 0; r < ex_.size; ++r)
                if (r != rank_) decode_owned_slots(ex_.posted[static_cast<size_t>(r)], slots);
        ex_.wait_all();  // nobody posts the next batch before everyone has read this one
    }
    long exchanges = 0, owned = 0;

  private:
    Exchange& ex_;
    int rank_;
    bool drop_;
};

// Runs `fn(opt)` on K threads, each with its own spread (process r with `threads[r]` workers
// when given); returns each thread's run.
template <class Fn>
std::vector<CheckRun> run_spread(int k, const RunOptions& opt, Fn fn, bool drop_others,
                                 std::vector<long>* owned = nullptr,
                                 const std::vector<int>& threads = {}) {
    Exchange ex(k);
    std::vector<ThreadSpread> spreads;
    spreads.reserve(static_cast<size_t>(k));
    for (int r = 0; r < k; ++r) spreads.emplace_back(ex, r, drop_others);
    std::vector<CheckRun> runs(static_cast<size_t>(k));
    std::vector<std::thread> pool;
    pool.reserve(static_cast<size_t>(k));
    for (int r = 0; r < k; ++r)
        pool.emplace_back([&, r] {
            RunOptions mine = opt;
            mine.spread = &spreads[static_cast<size_t>(r)];
            if (!threads.empty()) mine.threads = threads[static_cast<size_t>(r)];
            runs[static_cast<size_t>(r)] = fn(mine);
        });
    for (auto& t : pool) t.join();
    if (owned)
        for (const auto& s : spreads) owned->push_back(s.owned);
    return runs;
}

}  // namespace

TEST_CASE("instance exchange: a result's bytes decode to the same result, bit for bit",
          "[spread]") {
    const CheckResult r = sample_result();
    const std::string b = bytes_of(r);
    const char* p = b.data();
    const CheckResult back = decode_check_result(&p, b.data() + b.size());
    CHECK(p == b.data() + b.size());
    CHECK(bytes_of(back) == b);  // every double by its bit pattern
    CHECK(back.seed == r.seed);
    CHECK(back.note == r.note);
    CHECK(back.comparisons[0].rel == Relation::lt);
    CHECK(std::signbit(back.comparisons[0].margin));
    CHECK(std::isnan(back.values[0].second));
    REQUIRE(back.instance.size() == 2);
    CHECK(back.instance[0].second == r.instance[0].second);
    CHECK(back.instance[1].second.rows() == 0);
    CHECK(back.instance[1].second.cols() == 4);
    // planted: one flipped mantissa bit is seen
    CheckResult moved = r;
    moved.comparisons[0].lhs = std::nextafter(moved.comparisons[0].lhs, 3.0);
    CHECK(bytes_of(moved) != b);
}

TEST_CASE("instance exchange: every truncation and a corrupt length are refused", "[spread]") {
    const std::string b = bytes_of(sample_result());
    for (std::size_t n = 0; n < b.size(); ++n) {
        const char* p = b.data();
        INFO("first " << n << " of " << b.size() << " bytes");
        CHECK_THROWS_AS(decode_check_result(&p, b.data() + n), Error);
    }
    std::string huge = b;  // the check name's length becomes 2^62: refused, nothing allocated
    huge[7] = 0x40;
    const char* p = huge.data();
    CHECK_THROWS_AS(decode_check_result(&p, huge.data() + huge.size()), Error);

    // a 2^63 x 0 matrix (no entries, but its row count is no Eigen::Index): refused (found by
    // fuzz_exchange)
    CheckResult empty_matrix;
    empty_matrix.instance = {{"X", Eigen::MatrixXd(0, 0)}};
    std::string e = bytes_of(empty_matrix);
    const std::size_t rows_at = e.size() - 8 /* note */ - 16 /* rows, cols */;
    e[rows_at + 7] = static_cast<char>(0x80);
    p = e.data();
    CHECK_THROWS_AS(decode_check_result(&p, e.data() + e.size()), Error);

    std::vector<InstanceSpread::Slot> slots(3);
    slots[1].owned = true;
    slots[1].result = sample_result();
    slots[1].numbers = {42, -0.0};
    slots[1].text = "search 2";
    const std::string msg = encode_owned_slots(slots);
    std::vector<InstanceSpread::Slot> other(3);
    decode_owned_slots(msg, other);
    REQUIRE(other[1].result);
    CHECK(bytes_of(*other[1].result) == bytes_of(*slots[1].result));
    CHECK(other[1].numbers == slots[1].numbers);
    CHECK(other[1].text == "search 2");
    CHECK(!other[0].result);
    other[1].owned = true;  // a message naming a slot this process owns is refused
    CHECK_THROWS_AS(decode_owned_slots(msg, other), Error);
    std::vector<InstanceSpread::Slot> fewer(1);  // an index past the batch is refused
    CHECK_THROWS_AS(decode_owned_slots(msg, fewer), Error);
}

TEST_CASE("instance spread: K processes reproduce the serial run, and a dropped exchange shows",
          "[spread]") {
    RunOptions opt;
    opt.trials = 24;
    opt.seed = 11;
    const CheckRun serial35 = run_thm_3_5(opt), serial38 = run_thm_3_8(opt);
    for (int k : {2, 3}) {
        INFO(k << " processes");
        std::vector<long> owned;
        const auto runs = run_spread(
            k, opt, [](const RunOptions& o) { return run_thm_3_5(o); }, false, &owned);
        long total = 0;
        for (int r = 0; r < k; ++r) {
            CHECK(bytes_of(runs[static_cast<size_t>(r)]) == bytes_of(serial35));
            CHECK(runs[static_cast<size_t>(r)].verdict == serial35.verdict);
            // each process evaluated its share only
            CHECK(owned[static_cast<size_t>(r)] <= 24 / k + 1);
            total += owned[static_cast<size_t>(r)];
        }
        CHECK(total == 24);
        for (const auto& run : run_spread(
                 k, opt, [](const RunOptions& o) { return run_thm_3_8(o); }, false))
            CHECK(bytes_of(run) == bytes_of(serial38));
    }
    // planted: processes that do not receive each other's results do not reproduce the run
    const auto dropped = run_spread(
        2, opt, [](const RunOptions& o) { return run_thm_3_5(o); }, true);
    CHECK(bytes_of(dropped[0]) != bytes_of(serial35));
    CHECK(dropped[0].results.size() < serial35.results.size());
}

TEST_CASE("instance spread: processes with different --threads still exchange the same batches",
          "[spread]") {
    // 300 instances: without a spread, 1 worker batches them by 64 and 8 workers by 128; the
    // processes of a spread must cut the same batches (a mismatch would pair different exchanges)
    RunOptions opt;
    opt.trials = 300;
    opt.seed = 5;
    const CheckRun serial = run_thm_3_5(opt);
    const auto runs = run_spread(2, opt, [](const RunOptions& o) { return run_thm_3_5(o); }, false,
                                 nullptr, {1, 8});
    for (const auto& run : runs) CHECK(bytes_of(run) == bytes_of(serial));
}

TEST_CASE("instance spread: thm3.4's searches are spread and give the serial records", "[spread]") {
    RunOptions opt;
    opt.trials = 6;
    opt.search_evals = 60;
    opt.seed = 3;
    const CheckRun serial = run_thm_3_4(opt);
    std::vector<long> owned;
    const auto runs = run_spread(
        2, opt, [](const RunOptions& o) { return run_thm_3_4(o); }, false, &owned);
    for (const auto& run : runs) {
        CHECK(bytes_of(run) == bytes_of(serial));
        CHECK(run.search_effort == serial.search_effort);
    }
    CHECK(serial.results.size() > 6);  // the searches added records
}

TEST_CASE("instance spread: an instance that throws on one process throws on every one",
          "[spread]") {
    RunOptions opt;
    auto run = [](const RunOptions& o) {
        RunLoop loop(o, "t", "claim", "h");
        for (int i = 0; i < 10; ++i)
            loop.submit("r", loop.seed(static_cast<std::uint64_t>(i)), [i] {
                if (i == 3 || i == 6)
                    throw Error(ExitCode::DataError, "instance " + std::to_string(i) + " refused");
                return std::optional<CheckResult>(CheckResult{});
            });
        return loop.finish();
    };
    std::string serial_error;
    try {
        run(opt);
    } catch (const Error& e) {
        serial_error = e.what();
    }
    CHECK(serial_error == "instance 3 refused");
    Exchange ex(2);
    std::vector<ThreadSpread> spreads = {ThreadSpread(ex, 0, false), ThreadSpread(ex, 1, false)};
    std::string got[2];
    int code[2] = {0, 0};
    std::vector<std::thread> pool;
    pool.reserve(2);
    for (int r = 0; r < 2; ++r)
        pool.emplace_back([&, r] {
            RunOptions mine = opt;
            mine.spread = &spreads[static_cast<size_t>(r)];
            try {
                run(mine);
            } catch (const Error& e) {
                got[r] = e.what();
                code[r] = static_cast<int>(e.code());
            }
        });
    for (auto& t : pool) t.join();
    for (int r = 0; r < 2; ++r) {
        CHECK(got[r] == serial_error);  // the first in queue order, wherever it ran
        CHECK(code[r] == static_cast<int>(ExitCode::DataError));
    }
}

TEST_CASE("instance spread: a time budget is refused", "[spread]") {
    RunOptions opt;
    opt.time_budget_s = 5;
    opt.trials = 4;
    Exchange ex(2);  // refused before any exchange: no partner thread is needed
    ThreadSpread a(ex, 0, false);
    opt.spread = &a;
    CHECK_THROWS_AS(run_thm_3_5(opt), Error);
}
