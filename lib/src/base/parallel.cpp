#include "attnspec/base/parallel.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

namespace attnspec {

int available_threads() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return hw > 0 ? static_cast<int>(hw) : 1;
}

namespace {
// ParallelSlots' state: the cap (0: none), the items running, the peak, under one mutex.
struct Slots {
    std::mutex m;
    std::condition_variable freed;
    int cap = 0, running = 0, peak = 0;
};
Slots& slots() {
    static Slots s;
    return s;
}
// Whether this thread runs inside an item (its nested pools run in that item's slot).
thread_local bool in_item = false;

// Holds a slot (when a cap lives and this thread is not nested in an item) while an item runs.
class SlotHold {
  public:
    explicit SlotHold(bool nested) : taken_(false), was_(in_item) {
        Slots& s = slots();
        if (!nested) {
            std::unique_lock<std::mutex> lock(s.m);
            if (s.cap > 0) {
                s.freed.wait(lock, [&] { return s.running < s.cap; });
                s.peak = std::max(s.peak, ++s.running);
                taken_ = true;
            }
        }
        in_item = true;
    }
    ~SlotHold() {
        in_item = was_;
        if (!taken_) return;
        Slots& s = slots();
        {
            std::lock_guard<std::mutex> lock(s.m);
            --s.running;
        }
        s.freed.notify_one();
    }
    SlotHold(const SlotHold&) = delete;
    SlotHold& operator=(const SlotHold&) = delete;

  private:
    bool taken_, was_;
};

// The shared state of one parallel_for_ordered call: the next index, the stop flag and the
// lowest-index exception, all under one mutex.
struct Queue {
    std::size_t n, next = 0;
    const std::function<bool()>& stop;
    std::mutex m;
    bool halted = false;
    std::size_t failed_at = 0;
    std::exception_ptr error;

    Queue(std::size_t count, const std::function<bool()>& s) : n(count), stop(s) {}

    // The next index to run, or false when none is left, an item threw, or stop() said so.
    bool take(std::size_t& i) {
        std::lock_guard<std::mutex> lock(m);
        if (halted || next >= n) return false;
        if (stop && stop()) {
            halted = true;
            return false;
        }
        i = next++;
        return true;
    }

    bool more() {
        std::lock_guard<std::mutex> lock(m);
        return !halted && next < n;
    }

    void fail(std::size_t i, std::exception_ptr e) {
        std::lock_guard<std::mutex> lock(m);
        halted = true;
        if (!error || i < failed_at) error = std::move(e), failed_at = i;
    }

    // Positions are taken in increasing order; position k runs item order[k] (k itself without
    // an order). A failure is ranked by position: the one a serial run would have hit first.
    // `nested`: the pool was started from inside an item (it runs in that item's slot).
    void work(const std::function<void(std::size_t)>& fn, const std::vector<std::size_t>* order,
              bool nested) {
        std::size_t k = 0;
        while (more()) {            // no wait for a slot when nothing is left to take
            SlotHold slot(nested);  // waits for a slot before the next index is handed out
            if (!take(k)) break;
            try {
                fn(order ? (*order)[k] : k);
            } catch (...) {
                fail(k, std::current_exception());
            }
        }
    }
};

std::size_t run_pool(std::size_t n, int threads, const std::function<void(std::size_t)>& fn,
                     const std::function<bool()>& stop, const std::vector<std::size_t>* order) {
    Queue q(n, stop);
    const bool nested = in_item;
    const std::size_t extra =  // n = 0 or 1 starts no thread
        threads > 1 && n > 1 ? std::min<std::size_t>(static_cast<std::size_t>(threads), n) - 1 : 0;
    std::vector<std::thread> pool;
    pool.reserve(extra);
    try {
        for (std::size_t t = 0; t < extra; ++t)
            pool.emplace_back([&] { q.work(fn, order, nested); });
    } catch (const std::system_error&) {
        // a thread that cannot start: those started and the caller do the work
    }
    q.work(fn, order, nested);
    for (auto& t : pool) t.join();
    if (q.error) std::rethrow_exception(q.error);
    return q.next;
}
}  // namespace

std::size_t parallel_for_ordered(std::size_t n, int threads,
                                 const std::function<void(std::size_t)>& fn,
                                 const std::function<bool()>& stop) {
    return run_pool(n, threads, fn, stop, nullptr);
}

std::size_t parallel_for_in_order(const std::vector<std::size_t>& order, int threads,
                                  const std::function<void(std::size_t)>& fn,
                                  const std::function<bool()>& stop) {
    std::vector<char> seen(order.size(), 0);
    for (std::size_t i : order) {
        if (i >= order.size() || seen[i])
            throw std::invalid_argument("parallel_for_in_order: order is not a permutation");
        seen[i] = 1;
    }
    return run_pool(order.size(), threads, fn, stop, &order);
}

ParallelSlots::ParallelSlots(int n) {
    if (n < 1) throw std::invalid_argument("ParallelSlots: slots must be >= 1");
    Slots& s = slots();
    std::lock_guard<std::mutex> lock(s.m);
    if (s.cap > 0) throw std::logic_error("ParallelSlots: a cap is already in place");
    s.cap = n;
    s.peak = 0;
}

ParallelSlots::~ParallelSlots() {
    Slots& s = slots();
    std::lock_guard<std::mutex> lock(s.m);
    s.cap = 0;
}

int ParallelSlots::peak() {
    Slots& s = slots();
    std::lock_guard<std::mutex> lock(s.m);
    return s.peak;
}

std::vector<std::size_t> longest_first(const std::vector<double>& cost) {
    std::vector<std::size_t> order(cost.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    auto key = [&](std::size_t i) { return std::isnan(cost[i]) ? 0.0 : std::max(0.0, cost[i]); };
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return key(a) > key(b); });
    return order;
}

}  // namespace attnspec
