#include "attnspec/base/parallel.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
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

    void fail(std::size_t i, std::exception_ptr e) {
        std::lock_guard<std::mutex> lock(m);
        halted = true;
        if (!error || i < failed_at) error = std::move(e), failed_at = i;
    }

    // Positions are taken in increasing order; position k runs item order[k] (k itself without
    // an order). A failure is ranked by position: the one a serial run would have hit first.
    void work(const std::function<void(std::size_t)>& fn, const std::vector<std::size_t>* order) {
        std::size_t k = 0;
        while (take(k)) {
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
    const std::size_t extra =  // n = 0 or 1 starts no thread
        threads > 1 && n > 1 ? std::min<std::size_t>(static_cast<std::size_t>(threads), n) - 1 : 0;
    std::vector<std::thread> pool;
    pool.reserve(extra);
    try {
        for (std::size_t t = 0; t < extra; ++t) pool.emplace_back([&] { q.work(fn, order); });
    } catch (const std::system_error&) {
        // a thread that cannot start: those started and the caller do the work
    }
    q.work(fn, order);
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

std::vector<std::size_t> longest_first(const std::vector<double>& cost) {
    std::vector<std::size_t> order(cost.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    auto key = [&](std::size_t i) { return std::isnan(cost[i]) ? 0.0 : std::max(0.0, cost[i]); };
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return key(a) > key(b); });
    return order;
}

}  // namespace attnspec
