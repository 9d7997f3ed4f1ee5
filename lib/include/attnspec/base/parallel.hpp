// A small ordered thread pool for independent work items (issue 13, "every core, same answer").
// Items are numbered 0..n-1 and handed out in increasing order; the caller stores each item's
// result in slot i, so whatever order the items finish in, what it gathers is in index order and
// the same for any thread count. CPU only; threads start and end per call. The one piece of
// global state is an optional process-wide cap on the items running at once (ParallelSlots), so
// that several pools running side by side (verify's concurrent checks) share the cores.
#pragma once
#include <cstddef>
#include <functional>
#include <vector>

namespace attnspec {

// The cores this process may run on: sched_getaffinity's count (taskset, cgroups' cpusets), else
// std::thread::hardware_concurrency(), at least 1.
int available_threads();

// Calls fn(i) for i = 0 .. n-1 on min(threads, n) threads (the caller's thread is one of them;
// threads <= 1 runs everything on the caller's thread, in order). Indices start in increasing
// order: when index k starts, every index below k has started. `stop`, when given, is asked
// under a lock before each index is handed out; once it answers true no further index starts
// (the ones running finish). Returns how many indices started: they are exactly 0 .. k-1.
//
// Exceptions: after an item throws no further index starts; once every started item has ended,
// the exception of the lowest index that threw is rethrown in the caller (the one a serial run
// would have thrown first). No deadlock: every worker is joined before the call returns or throws.
// Cost: the items' work plus one thread start per extra thread.
std::size_t parallel_for_ordered(std::size_t n, int threads,
                                 const std::function<void(std::size_t)>& fn,
                                 const std::function<bool()>& stop = {});

// The same pool with the items started in `order` (a permutation of 0 .. n-1, n = order.size()):
// fn(order[0]) first, then fn(order[1]), ... Everything above holds with "index k" read as
// "position k of order": stop leaves a prefix of order, an exception rethrown is that of the
// lowest position that threw. What the caller gathers (slot order[k] per item) is the same for
// any order and thread count; only the finishing time changes (longest_first below shortens the
// tail: no long item starts last). Throws std::invalid_argument when order is not a permutation.
std::size_t parallel_for_in_order(const std::vector<std::size_t>& order, int threads,
                                  const std::function<void(std::size_t)>& fn,
                                  const std::function<bool()>& stop = {});

// The indices 0 .. n-1 of `cost` (estimated work per item), the costliest first; equal costs
// (and NaN or negative ones, read as 0) keep index order. All costs equal: 0, 1, ..., n-1.
std::vector<std::size_t> longest_first(const std::vector<double>& cost);

// While one lives, at most `slots` items of all the pools above, in every thread of the process,
// run at once (slots >= 1); an item that waits for a slot waits before it starts, so the index
// order, `stop` and the exceptions behave as described above. An item's own nested pool (a pool
// started from inside an item) runs in its parent's slot: its items never wait for one, so a
// nested pool cannot deadlock on the cap. Scopes do not nest (std::logic_error for a second one);
// when none lives there is no cap. Construct and destroy it while no pool runs.
class ParallelSlots {
  public:
    explicit ParallelSlots(int slots);
    ~ParallelSlots();
    ParallelSlots(const ParallelSlots&) = delete;
    ParallelSlots& operator=(const ParallelSlots&) = delete;
    // The most items of this scope that ever ran at once (for tests and benchmarks).
    static int peak();
};

}  // namespace attnspec
