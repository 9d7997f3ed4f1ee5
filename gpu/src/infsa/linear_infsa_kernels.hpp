// The Linear-InfSA twin's kernel bodies and launch sequence, written once against the
// thread-context interface (attnspec/gpu/base/cpu_grid.hpp): linear_infsa_cuda.cu runs them on the
// device through DeviceGrid (gpu/src/base/device_grid.hpp), the CPU suite on CpuGrid
// (tests/cpu/infsa/test_linear_infsa_logic.cpp). The arithmetic is linear_infsa_logic.hpp's.
// Four launches per call:
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

constexpr int kSweepThreads = kChunk;  // one thread per token of the chunk
constexpr int kCombineThreads = 256;

// Offset of the first element of chunk `chunk` of head `h` in [H][N][d].
ATTNSPEC_HD long chunk_offset(long h, long N, long chunk, long d) {
    return (h * N + chunk * kChunk) * d;
}

// Distance between consecutive tokens that phase C walks: d, or d - 1 under the runner-only
// index fault kFaultTokenStride (a row-length off-by-one; stays inside the input).
ATTNSPEC_HD long token_stride(long d, int fault) {
    return fault == kFaultTokenStride && d > 1 ? d - 1 : d;
}

// One block per (head, chunk); Sweep 1 reads X = Q, Sweep 2 reads X = K and V. Shared memory:
// the chunk's kChunk per-token weights w (Acc).
//   phase A  thread i:  e_i = ||q_i|| / sqrt d     (sweep 2: s_j = max(0, q_bar . k_j / sqrt d))
//   barrier
//   phase B  thread 0:  the chunk's sum of e (of s), sequential in token order
//   phase C  thread l:  sum_i e_i/sqrt d q_il      (sweep 2: sum_j s_j v_jl), token order
// partials: [H][chunks][d + 1], column d the chunk sum.
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

    static constexpr std::size_t shared_bytes() { return sizeof(Acc) * std::size_t(kChunk); }

    template <class T>
    ATTNSPEC_HD void operator()(const T& t) const {
        Acc* w = t.template shared<Acc>();
        const long nch = chunk_count(N);
        const long h = t.block() / nch, chunk = t.block() % nch;
        const long n = tokens_in_chunk(N, chunk, Sweep, fault);
        const Acc c = Acc(1) / std::sqrt(Acc(d));
        const long offset = chunk_offset(h, N, chunk, d);
        const long tid = t.thread(), nthreads = t.block_dim();
        for (long i = tid; i < n; i += nthreads)
            w[i] = Sweep == 1 ? token_energy<F>(X + offset + i * d, d, c)
                              : token_score<F>(X + offset + i * d, qbar + h * d, d, c);
        if (fault != kFaultNoBarrier) t.sync();
        Acc* out = partials + (h * nch + chunk) * (d + 1);
        if (tid == 0) out[d] = chunk_sum(w, n);
        const In* Y = Sweep == 1 ? X : V;
        const Acc scale = Sweep == 1 ? c : Acc(1);
        const long stride = token_stride(d, fault);
        for (long l = tid; l < d; l += nthreads)
            out[l] = weighted_column<F>(Y + offset, stride, l, w, n, scale);
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
    grid(blocks, kSweepThreads, sweep1.shared_bytes(), sweep1, "linear_infsa_cuda: sweep 1 launch");
    const CombineBody<Acc, 1> combine1{partials, H, N, d, gamma, eps, fault, qbar_acc, out};
    grid(combine_blocks, kCombineThreads, 0, combine1, "linear_infsa_cuda: combine 1 launch");
    const SweepBody<F, 2> sweep2{K, V, qbar_acc, N, d, fault, partials};
    grid(blocks, kSweepThreads, sweep2.shared_bytes(), sweep2, "linear_infsa_cuda: sweep 2 launch");
    const CombineBody<Acc, 2> combine2{partials, H, N, d, gamma, eps, fault, qbar_acc, out};
    grid(combine_blocks, kCombineThreads, 0, combine2, "linear_infsa_cuda: combine 2 launch");
}

}  // namespace attnspec::gpu::infsa_logic
