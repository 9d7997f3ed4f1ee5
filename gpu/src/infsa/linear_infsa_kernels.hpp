// The Linear-InfSA twin's kernel bodies and launch sequence, written once against the
// thread-context interface (attnspec/gpu/base/cpu_grid.hpp): linear_infsa_cuda.cu runs them on the
// device through DeviceGrid (gpu/src/base/device_grid.hpp), the CPU suite on CpuGrid
// (tests/cpu/infsa/test_linear_infsa_logic.cpp). The arithmetic is linear_infsa_logic.hpp's.
// Four launches per call, Q, K and V each read from memory once (linear_infsa_bytes_moved):
//   sweep 1 (block per chunk x head) -> combine 1 (q_bar, sum e) -> sweep 2 -> combine 2 (p, sum
//   s).
// Every reduction has a fixed shape and order (token order within a chunk, chunk order across),
// and no atomics touch the result: the output is bitwise deterministic for given inputs.
#pragma once
#include <cmath>
#include <cstddef>

#include "attnspec/gpu/base/hd.hpp"
#include "infsa_faults.hpp"
#include "linear_infsa_logic.hpp"

namespace attnspec::gpu::infsa_logic {

constexpr int kWarp = 32;       // lanes of a warp (= gpu::kWarpSize of the CPU runner)
constexpr int kSweepWarps = 8;  // warps of a sweep block, at most (shared memory allows)
constexpr int kCombineThreads = 256;
constexpr long kSharedLimit = 48 * 1024;  // dynamic shared memory without an opt-in, bytes
// The largest head dimension the sweeps take: one warp's partials, d + 1 doubles, fit.
constexpr long kMaxHeadDim = kSharedLimit / 8 - 1;

// Warps of a sweep block: as many as kSweepWarps whose [warps][d + 1] Acc partials fit in shared
// memory (0 when d > the limit of this Acc).
ATTNSPEC_HD int sweep_warps(long d, long acc_bytes) {
    const long fit = kSharedLimit / ((d + 1) * acc_bytes);
    return fit < kSweepWarps ? int(fit) : kSweepWarps;
}

// Offset of the first element of chunk `chunk` of head `h` in [H][N][d].
ATTNSPEC_HD long chunk_offset(long h, long N, long chunk, long d) {
    return (h * N + chunk * kChunk) * d;
}

// Distance between consecutive tokens: d, or d - 1 under the runner-only index fault
// kFaultTokenStride (a row-length off-by-one; stays inside the input).
ATTNSPEC_HD long token_stride(long d, int fault) {
    return fault == kFaultTokenStride && d > 1 ? d - 1 : d;
}

// One block per (head, chunk), a warp per token: warp w takes tokens w, w + W, ... of the chunk;
// lane j reads components j, j + 32, ... of the token's row (consecutive lanes, consecutive
// addresses: coalesced), so each input is read from memory once.
//   sweep 1  X = Q:  e_i = ||q_i|| c (warp sum of squares), then lane j adds (e_i c) q_il to its
//                    warp's partial column l and lane 0 adds e_i to column d; q_i is still in
//                    the cache for the second read: energies and pooled q_bar in one pass.
//   sweep 2  X = K:  s_j = max(0, c q_bar . k_j) (warp sum of products), then s_j v_jl and s_j
//                    (V read in the same pass).
//   barrier
//   thread l: the warps' partials of column l summed in warp order -> partials[h][chunk][l].
// Shared memory: [W][d + 1] Acc partials, each column written only by its lane (column d by lane
// 0) until the barrier. Every sum has a
// fixed order (per lane in token order, warps in order, lanes as a butterfly), so the result is
// deterministic; a chunk's sums have at most kChunk terms, as linear_infsa_error_bound assumes.
// partials: [H][chunks][d + 1], column d the chunk's sum of e (of s).
template <Format F, int Sweep>
struct SweepBody {
    using In = typename Fmt<F>::In;
    using Acc = typename Fmt<F>::Acc;
    const In* X;
    const In* V;
    const Acc* qbar;
    long N, d;
    int fault;
    Acc* partials;

    int warps() const { return sweep_warps(d, long(sizeof(Acc))); }
    std::size_t shared_bytes() const {
        return sizeof(Acc) * std::size_t(warps()) * std::size_t(d + 1);
    }

    template <class T>
    ATTNSPEC_HD void operator()(const T& t) const {
        const long nch = chunk_count(N);
        const long h = t.block() / nch, chunk = t.block() % nch;
        const long n = tokens_in_chunk(N, chunk, Sweep, fault);
        const Acc c = Acc(1) / std::sqrt(Acc(d));
        const long offset = chunk_offset(h, N, chunk, d), stride = token_stride(d, fault);
        const long tid = t.thread(), nw = t.block_dim() / kWarp;
        const long warp = tid / kWarp, lane = tid % kWarp;
        Acc* part = t.template shared<Acc>();
        Acc* mine = part + warp * (d + 1);
        for (long l = lane; l < d; l += kWarp) mine[l] = 0;
        if (lane == 0) mine[d] = 0;  // column d is lane 0's alone (a warp sum orders no memory)
        for (long i = warp; i < n; i += nw) {  // the same trip count on every lane of the warp
            const In* x = X + offset + i * stride;
            Acc lane_part = 0;
            for (long l = lane; l < d; l += kWarp) {
                const Acc v = Fmt<F>::load(x[l]);
                lane_part += Sweep == 1 ? v * v : qbar[h * d + l] * v;
            }
            const Acc total = t.warp_sum(lane_part);
            const Acc w = Sweep == 1 ? std::sqrt(total) * c : (c * total > 0 ? c * total : Acc(0));
            const Acc weight = Sweep == 1 ? w * c : w;
            const In* y = Sweep == 1 ? x : V + offset + i * stride;
            for (long l = lane; l < d; l += kWarp) mine[l] += weight * Fmt<F>::load(y[l]);
            if (lane == 0) mine[d] += w;
        }
        if (fault != kFaultNoBarrier) t.sync();
        Acc* out = partials + (h * nch + chunk) * (d + 1);
        for (long l = tid; l <= d; l += t.block_dim()) {
            Acc s = 0;
            for (long k = 0; k < nw; ++k) s += part[k * (d + 1) + l];
            out[l] = s;
        }
    }
};

// One thread per (head, component l in [0, d]); column d of the partials is the chunk sum.
// Stage 1: q_bar (double out + Acc copy for sweep 2) and sum e. Stage 2: p and sum s.
// out: [H][d] p, [H][d] q_bar, [H] sum e, [H] sum s.
template <class Acc, int Stage>
struct CombineBody {
    const Acc* partials;
    long H, N, d;
    double gamma, eps;
    int fault;
    Acc* qbar_acc;
    double* out;

    template <class T>
    ATTNSPEC_HD void operator()(const T& th) const {
        const long t = th.block() * th.block_dim() + th.thread();
        if (t >= H * (d + 1)) return;
        const long h = t / (d + 1), l = t % (d + 1);
        const long nch = chunk_count(N), used = chunks_combined(N, fault);
        const Acc* part = partials + h * nch * (d + 1);
        const double total = combine_chunks(part, used, d + 1, d);
        double* p = out;
        double* qb = out + H * d;
        double* sum_e = out + 2 * H * d;
        double* sum_s = sum_e + H;
        if (l == d) {
            (Stage == 1 ? sum_e : sum_s)[h] = total;
            return;
        }
        const double A = combine_chunks(part, used, d + 1, l);
        if (Stage == 1) {
            qb[h * d + l] = central_query(A, total, eps);
            qbar_acc[h * d + l] = Acc(qb[h * d + l]);
        } else {
            p[h * d + l] = pooled(A, total, gamma, eps);
        }
    }
};

// Bytes one call moves to and from device memory, if each input element is read once and the
// small vectors stay in cache: Q, K, V, the partials written and read back in each sweep, q_bar
// (Acc) written and read, and the output doubles.
template <Format F>
double bytes_moved(long H, long N, long d) {
    using In = typename Fmt<F>::In;
    using Acc = typename Fmt<F>::Acc;
    const double inputs = 3.0 * double(sizeof(In)) * double(H) * double(N) * double(d);
    const double partials = double(sizeof(Acc)) * double(H) * double(chunk_count(N) * (d + 1));
    return inputs + 2 * 2 * partials + 2.0 * double(sizeof(Acc)) * double(H * d) +
           8.0 * double(H * (2 * d + 2));
}

// Workspace of one call: the partials, then the Acc copy of q_bar.
template <Format F>
std::size_t workspace_bytes(long H, long N, long d) {
    using Acc = typename Fmt<F>::Acc;
    return sizeof(Acc) * std::size_t(H) * std::size_t(chunk_count(N) * (d + 1) + d);
}

// The four launches on `grid` (DeviceGrid or CpuGrid): Q, K, V [H][N][d] in format F, workspace
// of workspace_bytes<F>(H, N, d), out as CombineBody's.
template <Format F, class Grid>
void run_linear_infsa(Grid& grid, const typename Fmt<F>::In* Q, const typename Fmt<F>::In* K,
                      const typename Fmt<F>::In* V, long H, long N, long d, double gamma,
                      double eps, int fault, void* workspace, double* out) {
    using Acc = typename Fmt<F>::Acc;
    Acc* partials = static_cast<Acc*>(workspace);
    Acc* qbar_acc = partials + H * chunk_count(N) * (d + 1);
    const long blocks = H * chunk_count(N);
    const long combine_blocks = (H * (d + 1) + kCombineThreads - 1) / kCombineThreads;
    const SweepBody<F, 1> sweep1{Q, nullptr, nullptr, N, d, fault, partials};
    const int threads = sweep1.warps() * kWarp;
    grid(blocks, threads, sweep1.shared_bytes(), sweep1, "linear_infsa_cuda: sweep 1 launch");
    const CombineBody<Acc, 1> combine1{partials, H, N, d, gamma, eps, fault, qbar_acc, out};
    grid(combine_blocks, kCombineThreads, 0, combine1, "linear_infsa_cuda: combine 1 launch");
    const SweepBody<F, 2> sweep2{K, V, qbar_acc, N, d, fault, partials};
    grid(blocks, threads, sweep2.shared_bytes(), sweep2, "linear_infsa_cuda: sweep 2 launch");
    const CombineBody<Acc, 2> combine2{partials, H, N, d, gamma, eps, fault, qbar_acc, out};
    grid(combine_blocks, kCombineThreads, 0, combine2, "linear_infsa_cuda: combine 2 launch");
}

}  // namespace attnspec::gpu::infsa_logic
