// The SpecA twin's kernel bodies and their launches, written once against the thread-context
// interface (attnspec/gpu/base/cpu_grid.hpp): attention_cuda.cu runs them on the device through
// DeviceGrid (gpu/src/base/device_grid.hpp), `gpu-check --emulate` on CpuGrid
// (attention_check_common.cpp). The arithmetic is attention_logic.hpp's; the GEMMs around them
// are in the forward sequence of attention_forward.hpp.
#pragma once
#include "attention_logic.hpp"
#include "attnspec/gpu/base/hd.hpp"

namespace attnspec::gpu::attn {

constexpr int kSoftmaxWidth = 256;  // threads per softmax row (a power of two)
constexpr int kElementThreads = 256;

// Runner-only planted faults of the softmax body (gpu-check's index-math and no-barrier, planted
// on the CPU grid runner only: `gpu-check --emulate`, the CPU suite; the device launch passes
// none): rows walked one element short (row r at r (n - 1), an index-math slip that stays inside
// L), and the barrier between the exp partials' stores and the sum tree left out.
constexpr int kSoftmaxFaultNone = 0;
constexpr int kSoftmaxFaultRowStride = 1;
constexpr int kSoftmaxFaultNoBarrier = 2;

// Blocks of a grid-stride launch over n items: at most 65535 x 32, the loops cover the rest.
inline long blocks_for(long n, int threads) {
    const long b = (n + threads - 1) / threads;
    return b < 65535L * 32 ? b : 65535L * 32;
}

// out[k] = W[k] + C[k] for k < n (C left out when drop).
template <class T>
struct EffectiveWeightsBody {
    const T* W;
    const T* C;
    T* out;
    long n;
    bool drop;
    template <class Th>
    ATTNSPEC_HD void operator()(const Th& t) const {
        for (long k = t.block() * t.block_dim() + t.thread(); k < n;
             k += t.grid_dim() * t.block_dim())
            out[k] = softmax_logic::effective_weight(W[k], C[k], drop);
    }
};

// P (rows x total / rows, column-major): P[k] = b[k / rows].
template <class T>
struct FillColumnsBody {
    T* P;
    const T* b;
    long rows, total;
    template <class Th>
    ATTNSPEC_HD void operator()(const Th& t) const {
        for (long k = t.block() * t.block_dim() + t.thread(); k < total;
             k += t.grid_dim() * t.block_dim())
            P[k] = b[k / rows];
    }
};

// One block of kSoftmaxWidth threads per row (grid-stride over `count` rows of length n, in
// place): max, sum of exp and normalise, each partial combined by the fixed tree in shared
// memory (kSoftmaxWidth T, dynamic). Compiled with __launch_bounds__(kSoftmaxWidth) (kMaxThreads,
// hd.hpp launch_bound); the launch below uses exactly kSoftmaxWidth threads.
template <class T>
struct SoftmaxRowsBody {
    static constexpr int kMaxThreads = kSoftmaxWidth;  // __launch_bounds__(256) on the device
    T* L;
    long n, count;
    bool skip_last_tile;
    int fault;  // kSoftmaxFault*
    template <class Th>
    ATTNSPEC_HD void operator()(const Th& th) const {
        T* buf = th.template shared<T>();
        const int t = int(th.thread());
        const long tiles = softmax_logic::num_tiles(n, kSoftmaxWidth, skip_last_tile);
        const long stride = fault == kSoftmaxFaultRowStride && n > 1 ? n - 1 : n;
        for (long r = th.block(); r < count; r += th.grid_dim()) {
            T* row = L + r * stride;
            buf[t] = softmax_logic::thread_max(row, n, kSoftmaxWidth, t, tiles);
            th.sync();
            for (int s = kSoftmaxWidth / 2; s > 0; s /= 2) {
                softmax_logic::tree_step_max(buf, s, t);
                th.sync();
            }
            const T m = buf[0];
            th.sync();
            buf[t] = softmax_logic::thread_sum_exp(row, n, kSoftmaxWidth, t, tiles, m);
            if (fault != kSoftmaxFaultNoBarrier) th.sync();
            for (int s = kSoftmaxWidth / 2; s > 0; s /= 2) {
                softmax_logic::tree_step_sum(buf, s, t);
                th.sync();
            }
            const T inv_sum = T(1) / buf[0];
            th.sync();
            softmax_logic::normalise(row, row, n, kSoftmaxWidth, t, tiles, m, inv_sum);
        }
    }
};

// The launches on `grid` (DeviceGrid or CpuGrid).
template <class T, class Grid>
void effective_weights(Grid& grid, const T* W, const T* C, T* out, long n, bool drop) {
    if (n <= 0) return;
    grid(blocks_for(n, kElementThreads), kElementThreads, 0,
         EffectiveWeightsBody<T>{W, C, out, n, drop}, "effective weights kernel launch");
}

template <class T, class Grid>
void fill_columns(Grid& grid, T* P, const T* b, long rows, long cols) {
    const long total = rows * cols;
    if (total <= 0) return;
    grid(blocks_for(total, kElementThreads), kElementThreads, 0,
         FillColumnsBody<T>{P, b, rows, total}, "bias broadcast kernel launch");
}

template <class T, class Grid>
void softmax_rows(Grid& grid, T* L, long n, long count, bool skip_last_tile,
                  int fault = kSoftmaxFaultNone) {
    if (n <= 0 || count <= 0) return;
    const long blocks = count < 65535L * 32 ? count : 65535L * 32;
    grid(blocks, kSoftmaxWidth, sizeof(T) * kSoftmaxWidth,
         SoftmaxRowsBody<T>{L, n, count, skip_last_tile, fault}, "row softmax kernel launch");
}

}  // namespace attnspec::gpu::attn
