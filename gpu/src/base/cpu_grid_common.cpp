// The CPU grid runner (attnspec/gpu/base/cpu_grid.hpp): one fiber (ucontext) per CUDA thread of a
// block, all on the calling host thread, so exactly one runs at any time and a switch costs no
// system scheduling. The scheduler resumes the ready fibers in phase order (forward in even
// phases, reverse in odd ones); a fiber gives control back at a barrier, a warp sum or its end;
// when every fiber of the phase has, the waiting warp sums are released, or else the barrier
// opens, and the next phase starts.
#include <ucontext.h>

#include <cmath>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "attnspec/base/errors.hpp"

// Under AddressSanitizer every stack switch is announced, so ASan tracks the fibers' stacks (and
// an exception thrown inside a fiber is not taken for a stack overflow).
#if defined(__SANITIZE_ADDRESS__)
#define ATTNSPEC_ASAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNSPEC_ASAN_FIBERS 1
#endif
#endif
#if defined(ATTNSPEC_ASAN_FIBERS)
#include <sanitizer/common_interface_defs.h>
#endif
#include "attnspec/gpu/base/cpu_grid.hpp"

namespace attnspec::gpu {

namespace {

// The switch announcements (no-ops without ASan): `start` before leaving a stack for the one at
// [bottom, bottom + size) (fake = nullptr: the stack being left ends), `finish` on arriving.
void switch_start(void** fake, const void* bottom, std::size_t size) {
#if defined(ATTNSPEC_ASAN_FIBERS)
    __sanitizer_start_switch_fiber(fake, bottom, size);
#else
    (void)fake, (void)bottom, (void)size;
#endif
}

void switch_finish(void* fake, const void** bottom, std::size_t* size) {
#if defined(ATTNSPEC_ASAN_FIBERS)
    __sanitizer_finish_switch_fiber(fake, bottom, size);
#else
    (void)fake, (void)bottom, (void)size;
#endif
}

enum class Run : char { idle, ready, running, at_barrier, at_warp, done };

constexpr int kMaxThreads = 1024;                // per block, as on the device
constexpr std::size_t kMaxShared = 48 * 1024;    // dynamic shared memory without an opt-in
constexpr std::size_t kStackBytes = 128 * 1024;  // per fiber; bodies keep small frames

}  // namespace

struct CpuGrid::State {
    ucontext_t scheduler;
    void* scheduler_fake = nullptr;  // ASan's bookkeeping of the switches
    const void* scheduler_bottom = nullptr;
    std::size_t scheduler_size = 0;
    std::vector<void*> fiber_fake;
    std::vector<ucontext_t> fiber;
    std::vector<std::unique_ptr<char[]>> stack;
    std::vector<Run> run;
    std::vector<CpuThread> ctx;
    std::vector<double> slot, result;  // warp sums: each lane's value, then its sum
    std::vector<char> in_float;
    std::vector<int> width;  // lanes per sum: 32, or segments of 16, 8, 4, 2, 1
    std::vector<std::max_align_t> shared;
    const std::function<void(const CpuThread&)>* body = nullptr;
    std::exception_ptr error;
    int active = 0;    // threads of the current block
    int current = -1;  // the fiber running
    long phase = 0;

    int order(int p) const { return phase % 2 == 0 ? p : active - 1 - p; }

    // Releases every warp with lanes waiting at a warp sum: each gets the butterfly of
    // __shfl_xor_sync (offsets width / 2, ..., 2, 1: sums over aligned segments of `width`
    // lanes), in float or double as the lanes asked; a lane that is not there contributes NaN
    // and makes the sum divergent, as lanes asking for different widths do. False if none waited.
    bool release_warps(Counters& c) {
        bool any = false;
        for (int w0 = 0; w0 < active; w0 += kWarpSize) {
            const int lanes = active - w0 < kWarpSize ? active - w0 : kWarpSize;
            auto at = [w0](int l) {  // lane l's thread index, widened before the sum
                return static_cast<std::size_t>(w0) + static_cast<std::size_t>(l);
            };
            bool waiting = false, missing = false, f32 = false;
            int seg = 0;
            for (int l = 0; l < lanes; ++l) {
                const Run r = run[at(l)];
                waiting |= r == Run::at_warp;
                missing |= r != Run::at_warp;
                if (r != Run::at_warp) continue;
                f32 |= bool(in_float[at(l)]);
                missing |= seg != 0 && seg != width[at(l)];  // mixed widths
                seg = width[at(l)];
            }
            if (!waiting) continue;
            any = true;
            ++c.warp_sums;
            if (missing || lanes < kWarpSize) ++c.divergent_barriers;
            double v[kWarpSize];
            for (int l = 0; l < kWarpSize; ++l)
                v[l] = l < lanes && run[at(l)] == Run::at_warp ? slot[at(l)] : NAN;
            for (int off = seg / 2; off > 0; off /= 2) {
                double next[kWarpSize];
                for (int l = 0; l < kWarpSize; ++l)
                    next[l] = f32 ? double(float(v[l]) + float(v[l ^ off])) : v[l] + v[l ^ off];
                for (int l = 0; l < kWarpSize; ++l) v[l] = next[l];
            }
            for (int l = 0; l < lanes; ++l)
                if (run[at(l)] == Run::at_warp) {
                    result[at(l)] = v[l];
                    run[at(l)] = Run::ready;
                }
        }
        return any;
    }

    // Runs one block to its end: phases until no fiber is left waiting.
    void run_block(Counters& c) {
        phase = 0;
        for (;;) {
            for (int p = 0; p < active; ++p) {
                const int t = order(p);
                if (run[std::size_t(t)] != Run::ready) continue;
                run[std::size_t(t)] = Run::running;
                current = t;
                switch_start(&scheduler_fake, stack[std::size_t(t)].get(), kStackBytes);
                swapcontext(&scheduler, &fiber[std::size_t(t)]);
                switch_finish(scheduler_fake, nullptr, nullptr);
            }
            current = -1;
            ++phase;
            if (release_warps(c)) continue;
            bool waiting = false, ended = false;
            for (int t = 0; t < active; ++t) {
                waiting |= run[std::size_t(t)] == Run::at_barrier;
                ended |= run[std::size_t(t)] == Run::done;
            }
            if (!waiting) return;
            ++c.barriers;
            if (ended) ++c.divergent_barriers;
            for (int t = 0; t < active; ++t)
                if (run[std::size_t(t)] == Run::at_barrier) run[std::size_t(t)] = Run::ready;
        }
    }

    // Gives control back to the scheduler with this fiber in state `r`.
    void yield(long thread, Run r) {
        run[std::size_t(thread)] = r;
        void** fake = &fiber_fake[std::size_t(thread)];
        switch_start(fake, scheduler_bottom, scheduler_size);
        swapcontext(&fiber[std::size_t(thread)], &scheduler);
        switch_finish(*fake, &scheduler_bottom, &scheduler_size);
    }
};

namespace {

thread_local void* tls_state = nullptr;  // the State whose block this host thread runs

}  // namespace

// A fiber's entry: the body on this fiber's thread context; returning resumes the scheduler
// (uc_link).
void CpuGrid::fiber_main() {
    State& s = *static_cast<State*>(tls_state);
    const int t = s.current;
    switch_finish(nullptr, &s.scheduler_bottom, &s.scheduler_size);
    try {
        (*s.body)(s.ctx[std::size_t(t)]);
    } catch (...) {
        if (!s.error) s.error = std::current_exception();
    }
    s.run[std::size_t(t)] = Run::done;
    switch_start(nullptr, s.scheduler_bottom, s.scheduler_size);  // this fiber ends (uc_link)
}

void CpuThread::sync() const { grid_->barrier(thread_); }

float CpuThread::warp_sum(float x, int width) const {
    return float(grid_->warp_sum(thread_, x, true, width));
}

double CpuThread::warp_sum(double x, int width) const {
    return grid_->warp_sum(thread_, x, false, width);
}

CpuGrid::CpuGrid() : state_(std::make_unique<State>()) {}

CpuGrid::~CpuGrid() = default;

void CpuGrid::barrier(long thread) { state_->yield(thread, Run::at_barrier); }

double CpuGrid::warp_sum(long thread, double x, bool in_float, int width) {
    if (width < 1 || width > kWarpSize || (width & (width - 1)) != 0)
        throw Error(ExitCode::Internal,
                    "warp_sum: width " + std::to_string(width) + " is not a power of two <= 32");
    State& s = *state_;
    s.slot[std::size_t(thread)] = x;
    s.in_float[std::size_t(thread)] = in_float;
    s.width[std::size_t(thread)] = width;
    s.yield(thread, Run::at_warp);
    return s.result[std::size_t(thread)];
}

void CpuGrid::run(long blocks, int threads, int max_threads, std::size_t shared_bytes,
                  const std::function<void(const CpuThread&)>& body, const char* what) {
    if (blocks <= 0 || blocks > 2147483647L || threads <= 0 || threads > kMaxThreads ||
        threads > max_threads || shared_bytes > kMaxShared)
        throw Error(ExitCode::Internal, std::string(what) + ": invalid launch configuration (" +
                                            std::to_string(blocks) + " blocks of " +
                                            std::to_string(threads) + " threads, " +
                                            std::to_string(shared_bytes) + " bytes shared)");
    State& s = *state_;
    if (int(s.fiber.size()) < threads) {
        s.fiber.resize(std::size_t(threads));
        s.run.resize(std::size_t(threads), Run::idle);
        s.ctx.resize(std::size_t(threads));
        s.slot.resize(std::size_t(threads));
        s.result.resize(std::size_t(threads));
        s.in_float.resize(std::size_t(threads));
        s.width.resize(std::size_t(threads));
        s.fiber_fake.resize(std::size_t(threads));
        while (s.stack.size() < std::size_t(threads))
            s.stack.push_back(std::unique_ptr<char[]>(new char[kStackBytes]));
    }
    const std::size_t words =
        (shared_bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
    s.shared.assign(words > 0 ? words : 1, std::max_align_t{});
    s.body = &body;
    s.error = nullptr;
    s.active = threads;
    void* const outer = tls_state;  // a body may run a grid of its own
    tls_state = &s;
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
            ucontext_t& f = s.fiber[std::size_t(t)];
            getcontext(&f);
            f.uc_stack.ss_sp = s.stack[std::size_t(t)].get();
            f.uc_stack.ss_size = kStackBytes;
            f.uc_link = &s.scheduler;
            makecontext(&f, &CpuGrid::fiber_main, 0);
            s.run[std::size_t(t)] = Run::ready;
        }
        s.run_block(counters_);
        ++counters_.blocks;
        counters_.threads += threads;
        for (int t = 0; t < threads; ++t) s.run[std::size_t(t)] = Run::idle;
    }
    tls_state = outer;
    s.body = nullptr;
    if (s.error) std::rethrow_exception(s.error);
}

}  // namespace attnspec::gpu
