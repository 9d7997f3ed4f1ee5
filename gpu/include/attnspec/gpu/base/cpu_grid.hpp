// The CPU grid runner: executes a kernel body written against the thread-context interface
// (gpu/src/base/device_grid.hpp has the device side) on the host, so the CPU suite runs the
// kernels' index math, shared memory, barriers and partial tiles without a GPU.
//
// A body is a copyable functor with `template <class T> ATTNSPEC_HD void operator()(const T& t)
// const`; through `t` it sees
//   t.thread(), t.block(), t.block_dim(), t.grid_dim()   threadIdx.x, blockIdx.x, blockDim.x,
//                                                         gridDim.x (one-dimensional grids)
//   t.sync()                                              __syncthreads()
//   t.template shared<T>()                                the block's dynamic shared memory
//                                                         (extern __shared__), as T*
//   t.warp_sum(x, width = 32)  (float or double)          the sum over the aligned segment of
//                                                         `width` lanes (a power of two) holding
//                                                         this lane (a __shfl_xor_sync butterfly,
//                                                         offsets width/2 .. 1), every lane gets
//                                                         its segment's; all 32 lanes must call it
// Launch: `grid(blocks, threads, shared_bytes, body, "name")`, the same call for CpuGrid and the
// device's DeviceGrid, so a twin's launch sequence is written once too. A body may declare
// `static constexpr int kMaxThreads` (hd.hpp launch_bound): the device kernel gets
// __launch_bounds__(kMaxThreads) and both grids refuse a launch of more threads.
//
// How it runs: blocks one after another; inside a block one fiber (ucontext, its own stack) per
// CUDA thread, all on the calling host thread, so only one runs at a time, each until its next
// barrier (or warp sum) or its end. The order alternates between phases (barrier intervals):
// forward (thread 0 first) in even phases, reverse in odd ones, so a read of another thread's write
// that a missing barrier leaves unordered reads the wrong value on every run, deterministically.
// Shared memory starts every block filled with 0xff bytes (NaN in float and double), so a read
// before any write shows too. A warp sum is a barrier of the warp's 32 lanes: each lane yields
// there, and when no thread of the block can run on, the waiting warps are released first (a new
// phase), each lane with the butterfly sum of the same additions in the same order as the device's,
// so the bits agree. A barrier that some threads of a block reach while others have returned, or a
// warp sum that some lanes of the warp never reach (their values taken as NaN), is counted as
// divergent (undefined on the device). On the device a warp sum orders no memory (__shfl_xor_sync
// is not __syncwarp), while here its lanes wait for each other: a body must not rely on it to order
// shared-memory writes between lanes (keep each word to one lane between block barriers), the
// runner cannot show that fault. Results are deterministic and independent of the host's
// scheduling.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>

#include "attnspec/gpu/base/hd.hpp"

namespace attnspec::gpu {

constexpr int kWarpSize = 32;

class CpuGrid;

// The thread context a body sees on the CPU runner.
class CpuThread {
  public:
    long thread() const { return thread_; }
    long block() const { return block_; }
    long block_dim() const { return block_dim_; }
    long grid_dim() const { return grid_dim_; }
    void sync() const;
    float warp_sum(float x, int width = kWarpSize) const;
    double warp_sum(double x, int width = kWarpSize) const;
    template <class T>
    T* shared() const {
        return static_cast<T*>(shared_);
    }

  private:
    friend class CpuGrid;
    CpuGrid* grid_ = nullptr;
    void* shared_ = nullptr;
    long thread_ = 0, block_ = 0, block_dim_ = 0, grid_dim_ = 0;
};

class CpuGrid {
  public:
    // What the launches so far did (for tests: a barrier fault shows as fewer barriers).
    struct Counters {
        long launches = 0;
        long blocks = 0;
        long threads = 0;             // thread runs (blocks x block size)
        long barriers = 0;            // block-wide barriers passed
        long divergent_barriers = 0;  // barriers some of the block's threads never reached
        long warp_sums = 0;           // warp sums (one per warp released)
        std::size_t max_shared = 0;   // largest dynamic shared memory asked for, bytes
    };

    CpuGrid();
    ~CpuGrid();
    CpuGrid(const CpuGrid&) = delete;
    CpuGrid& operator=(const CpuGrid&) = delete;

    // Runs `blocks` blocks of `threads` threads with `shared_bytes` of shared memory each; returns
    // when every block is done. An exception thrown by the body is rethrown here (the block's
    // other threads run on to their end first). `what` names the launch in errors.
    template <class Body>
    void operator()(long blocks, int threads, std::size_t shared_bytes, const Body& body,
                    const char* what) {
        run(
            blocks, threads, launch_bound<Body>::value > 0 ? launch_bound<Body>::value : 1024,
            shared_bytes, [&body](const CpuThread& t) { body(t); }, what);
    }

    const Counters& counters() const { return counters_; }

  private:
    friend class CpuThread;
    struct State;
    void run(long blocks, int threads, int max_threads, std::size_t shared_bytes,
             const std::function<void(const CpuThread&)>& body, const char* what);
    static void fiber_main();
    void barrier(long thread);
    double warp_sum(long thread, double x, bool in_float, int width);
    std::unique_ptr<State> state_;
    Counters counters_;
};

}  // namespace attnspec::gpu
