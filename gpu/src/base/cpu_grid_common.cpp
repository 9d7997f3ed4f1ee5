// The CPU grid runner (attnspec/gpu/base/cpu_grid.hpp): a pool of host threads, one per CUDA
// thread of a block, of which exactly one runs at any time. The token goes from thread to thread
// in phase order (forward in even phases, reverse in odd ones); a thread gives it up at a barrier
// or at its end; when every thread of the phase has, the barrier opens and the next phase starts.
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/cpu_grid.hpp"

namespace attnspec::gpu {

namespace {

enum class Run : char { idle, ready, running, at_barrier, done };

constexpr int kMaxThreads = 1024;              // per block, as on the device
constexpr std::size_t kMaxShared = 48 * 1024;  // dynamic shared memory without an opt-in

}  // namespace

struct CpuGrid::State {
    std::mutex m;
    std::vector<std::thread> workers;
    std::vector<std::unique_ptr<std::condition_variable>> wake;  // one per worker
    std::condition_variable block_done;
    std::vector<Run> run;
    std::vector<CpuThread> ctx;
    std::vector<std::max_align_t> shared;
    const std::function<void(const CpuThread&)>* body = nullptr;
    std::exception_ptr error;
    int active = 0;    // threads of the current block
    int current = -1;  // the worker holding the token
    int pos = -1;      // its place in the phase order
    long phase = 0;
    bool finished = true;
    bool stop = false;

    int order(int p) const { return phase % 2 == 0 ? p : active - 1 - p; }

    // Gives the token to the next ready thread of this phase, or opens the barrier and starts
    // the next phase, or ends the block. Called with `m` held.
    void pass(Counters& c) {
        for (;;) {
            for (++pos; pos < active; ++pos) {
                const int t = order(pos);
                if (run[std::size_t(t)] == Run::ready) {
                    current = t;
                    wake[std::size_t(t)]->notify_one();
                    return;
                }
            }
            bool waiting = false, ended = false;
            for (int t = 0; t < active; ++t) {
                waiting |= run[std::size_t(t)] == Run::at_barrier;
                ended |= run[std::size_t(t)] == Run::done;
            }
            if (!waiting) {
                current = -1;
                finished = true;
                block_done.notify_one();
                return;
            }
            ++c.barriers;
            if (ended) ++c.divergent_barriers;
            for (int t = 0; t < active; ++t)
                if (run[std::size_t(t)] == Run::at_barrier) run[std::size_t(t)] = Run::ready;
            ++phase;
            pos = -1;
        }
    }

    void worker(int w, Counters& c) {
        std::unique_lock<std::mutex> lk(m);
        for (;;) {
            wake[std::size_t(w)]->wait(lk, [&] { return stop || current == w; });
            if (stop) return;
            run[std::size_t(w)] = Run::running;
            lk.unlock();
            std::exception_ptr e;
            try {
                (*body)(ctx[std::size_t(w)]);
            } catch (...) {
                e = std::current_exception();
            }
            lk.lock();
            if (e && !error) error = e;
            run[std::size_t(w)] = Run::done;
            pass(c);
        }
    }
};

void CpuThread::sync() const { grid_->barrier(thread_); }

CpuGrid::CpuGrid() : state_(std::make_unique<State>()) {}

CpuGrid::~CpuGrid() {
    {
        std::lock_guard<std::mutex> lk(state_->m);
        state_->stop = true;
        for (auto& cv : state_->wake) cv->notify_one();
    }
    for (auto& t : state_->workers) t.join();
}

void CpuGrid::barrier(long thread) {
    State& s = *state_;
    std::unique_lock<std::mutex> lk(s.m);
    const auto w = std::size_t(thread);
    s.run[w] = Run::at_barrier;
    s.pass(counters_);
    s.wake[w]->wait(lk, [&] { return s.current == int(thread); });
    s.run[w] = Run::running;
}

void CpuGrid::run(long blocks, int threads, std::size_t shared_bytes,
                  const std::function<void(const CpuThread&)>& body, const char* what) {
    if (blocks <= 0 || blocks > 2147483647L || threads <= 0 || threads > kMaxThreads ||
        shared_bytes > kMaxShared)
        throw Error(ExitCode::Internal, std::string(what) + ": invalid launch configuration (" +
                                            std::to_string(blocks) + " blocks of " +
                                            std::to_string(threads) + " threads, " +
                                            std::to_string(shared_bytes) + " bytes shared)");
    State& s = *state_;
    std::unique_lock<std::mutex> lk(s.m);
    while (int(s.workers.size()) < threads) {
        const int w = int(s.workers.size());
        s.wake.push_back(std::make_unique<std::condition_variable>());
        s.run.push_back(Run::idle);
        s.ctx.emplace_back();
        s.workers.emplace_back([this, w] { state_->worker(w, counters_); });
    }
    const std::size_t words =
        (shared_bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
    s.shared.assign(words > 0 ? words : 1, std::max_align_t{});
    s.body = &body;
    s.error = nullptr;
    s.active = threads;
    ++counters_.launches;
    if (shared_bytes > counters_.max_shared) counters_.max_shared = shared_bytes;
    for (long b = 0; b < blocks; ++b) {
        std::memset(static_cast<void*>(s.shared.data()), 0xff,
                    s.shared.size() * sizeof(std::max_align_t));
        for (int t = 0; t < threads; ++t) {
            CpuThread& c = s.ctx[std::size_t(t)];
            c.grid_ = this;
            c.shared_ = s.shared.data();
            c.thread_ = t;
            c.block_ = b;
            c.block_dim_ = threads;
            c.grid_dim_ = blocks;
            s.run[std::size_t(t)] = Run::ready;
        }
        s.phase = 0;
        s.pos = -1;
        s.finished = false;
        s.pass(counters_);
        s.block_done.wait(lk, [&] { return s.finished; });
        ++counters_.blocks;
        counters_.threads += threads;
        for (int t = 0; t < threads; ++t) s.run[std::size_t(t)] = Run::idle;
    }
    s.body = nullptr;
    if (s.error) std::rethrow_exception(s.error);
}

}  // namespace attnspec::gpu
