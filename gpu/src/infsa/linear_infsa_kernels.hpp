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
#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <cstring>
#include <stdexcept>
#endif

#include "attnspec/gpu/base/hd.hpp"
#include "infsa_faults.hpp"
#include "linear_infsa_logic.hpp"

namespace attnspec::gpu::infsa_logic {

constexpr int kWarp = 32;       // lanes of a warp (= gpu::kWarpSize of the CPU runner)
constexpr int kSweepWarps = 8;  // warps of a sweep block, at most (shared memory allows)
constexpr int kCombineThreads = 256;
constexpr long kSharedLimit = 48 * 1024;  // dynamic shared memory without an opt-in, bytes
// The largest head dimension the sweeps take: one warp's partials, d + 1 doubles, fit (a warp
// reads several tokens at once only when d < 32 V, where their partials fit too).
constexpr long kMaxHeadDim = kSharedLimit / 8 - 1;

// Warps of a sweep block: as many as kSweepWarps whose partials, `per_warp` Acc each, fit in
// shared memory (0 when not even one warp's do).
ATTNSPEC_HD int sweep_warps(long per_warp, long acc_bytes) {
    const long fit = kSharedLimit / (per_warp * acc_bytes);
    return fit < kSweepWarps ? int(fit) : kSweepWarps;
}

// V consecutive inputs loaded as one 16-byte vector (V = 16 / sizeof(In): float4, double2, eight
// 16-bit values) or, V = 1, one scalar. The address must be aligned to the pack; the CPU runner
// checks it (on the device a misaligned vector load is a fault).
template <class In, int V>
struct alignas(sizeof(In) * V) Pack {
    In v[V];
};

template <class In, int V>
ATTNSPEC_HD Pack<In, V> load_pack(const In* p) {
#if defined(__CUDA_ARCH__)
    return *reinterpret_cast<const Pack<In, V>*>(p);
#else
    if (reinterpret_cast<std::uintptr_t>(p) % alignof(Pack<In, V>) != 0)
        throw std::logic_error("linear_infsa kernels: misaligned vector load");
    Pack<In, V> r;
    std::memcpy(r.v, p, sizeof r.v);
    return r;
#endif
}

// Inputs per vector load of format F, and the width a head of dimension d is read with: the
// vector when it divides d (every row then starts aligned: cudaMalloc's and the heap's 16-byte
// alignment), else scalars.
template <Format F>
constexpr int kVector = int(16 / sizeof(typename Fmt<F>::In));

template <Format F>
ATTNSPEC_HD int vector_width(long d) {
    return d % kVector<F> == 0 ? kVector<F> : 1;
}

// Lanes that read one token: the power of two covering its d / V packs, at most a warp; the
// other lanes of the warp read the next tokens (32 / L tokens per warp load).
ATTNSPEC_HD int lanes_per_token(long d, int V) {
    const long packs = (d + V - 1) / V;
    int L = 1;
    while (L < packs && L < kWarp) L *= 2;
    return L;
}

// Offset of the first element of chunk `chunk` of head `h` in [H][N][d].
ATTNSPEC_HD long chunk_offset(long h, long N, long chunk, long d) {
    return (h * N + chunk * kChunk) * d;
}

// Distance between consecutive tokens: d, or d - V under the runner-only index fault
// kFaultTokenStride (a row-length off-by-one pack; stays inside the input and aligned).
ATTNSPEC_HD long token_stride(long d, int V, int fault) {
    return fault == kFaultTokenStride && d > V ? d - V : d;
}

// One block per (head, chunk); a token is read by L lanes (lanes_per_token), a warp reads
// G = 32 / L tokens at a time: group g of warp w takes tokens wG + g, wG + g + WG, ... of the
// chunk, and its lane j reads packs j, j + L, ... of the row (V inputs each, vector_width), so
// consecutive lanes read consecutive 16-byte words (float32, d = 64: a half-warp per token, one
// float4 per lane) and each input is read from memory once.
//   sweep 1  X = Q:  e_i = ||q_i|| c (segment sum of squares over the L lanes), then each lane
//                    adds (e_i c) q_il to its group's partial columns l and lane 0 of the group
//                    adds e_i to column d; q_i is still in the cache for the second read:
//                    energies and pooled q_bar in one pass.
//   sweep 2  X = K:  s_j = max(0, c q_bar . k_j) (segment sum of products), then s_j v_jl and
//                    s_j (V read in the same pass).
//   barrier
//   thread l: the groups' partials of column l summed in group order -> partials[h][chunk][l].
// Shared memory: [W G][d + 1] Acc partials, each column written only by its lane (column d by
// the group's lane 0) until the barrier. Every sum has a fixed order (per lane in token order,
// groups in order, lanes as a butterfly), so the result is deterministic; a chunk's sums have at
// most kChunk terms, as linear_infsa_error_bound assumes.
// partials: [H][chunks][d + 1], column d the chunk's sum of e (of s).
template <Format F, int Sweep, int V>
struct SweepBody {
    using In = typename Fmt<F>::In;
    using Acc = typename Fmt<F>::Acc;
    const In* X;
    const In* V_;
    const Acc* qbar;
    long N, d;
    int fault;
    Acc* partials;

    int groups() const { return kWarp / lanes_per_token(d, V); }
    int warps() const { return sweep_warps(long(groups()) * (d + 1), long(sizeof(Acc))); }
    std::size_t shared_bytes() const {
        return sizeof(Acc) * std::size_t(warps()) * std::size_t(groups()) * std::size_t(d + 1);
    }

    template <class T>
    ATTNSPEC_HD void operator()(const T& t) const {
        const long nch = chunk_count(N);
        const long h = t.block() / nch, chunk = t.block() % nch;
        const long n = tokens_in_chunk(N, chunk, Sweep, fault);
        const Acc c = Acc(1) / std::sqrt(Acc(d));
        const long offset = chunk_offset(h, N, chunk, d), stride = token_stride(d, V, fault);
        const int L = lanes_per_token(d, V);
        const long G = kWarp / L, packs = d / V;  // V divides d (vector_width)
        const long tid = t.thread(), nw = t.block_dim() / kWarp;
        const long warp = tid / kWarp, lane = tid % kWarp, g = lane / L, j = lane % L;
        Acc* part = t.template shared<Acc>();
        Acc* mine = part + (warp * G + g) * (d + 1);
        for (long p = j; p < packs; p += L)
            for (int k = 0; k < V; ++k) mine[p * V + k] = 0;
        if (j == 0) mine[d] = 0;  // column d is lane 0's alone (a warp sum orders no memory)
        for (long base = warp * G; base < n; base += nw * G) {  // the same trips on every lane
            const long i = base + g;
            const bool valid = i < n;
            Acc lane_part = 0;
            if (valid)
                for (long p = j; p < packs; p += L) {
                    const Pack<In, V> x = load_pack<In, V>(X + offset + i * stride + p * V);
                    for (int k = 0; k < V; ++k) {
                        const Acc v = Fmt<F>::load(x.v[k]);
                        lane_part += Sweep == 1 ? v * v : qbar[h * d + p * V + k] * v;
                    }
                }
            const Acc total = t.warp_sum(lane_part, L);
            if (!valid) continue;
            const Acc w = Sweep == 1 ? std::sqrt(total) * c : (c * total > 0 ? c * total : Acc(0));
            const Acc weight = Sweep == 1 ? w * c : w;
            const In* y = (Sweep == 1 ? X : V_) + offset + i * stride;
            for (long p = j; p < packs; p += L) {
                const Pack<In, V> x = load_pack<In, V>(y + p * V);
                for (int k = 0; k < V; ++k) mine[p * V + k] += weight * Fmt<F>::load(x.v[k]);
            }
            if (j == 0) mine[d] += w;
        }
        if (fault != kFaultNoBarrier) t.sync();
        Acc* out = partials + (h * nch + chunk) * (d + 1);
        for (long l = tid; l <= d; l += t.block_dim()) {
            Acc s = 0;
            for (long k = 0; k < nw * G; ++k) s += part[k * (d + 1) + l];
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

    long blocks() const { return (H * (d + 1) + kCombineThreads - 1) / kCombineThreads; }

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

// Sweep 1, combine 1, sweep 2, with inputs read V at a time.
template <Format F, int V, class Grid, class Combine>
void sweeps(Grid& grid, const typename Fmt<F>::In* Q, const typename Fmt<F>::In* K,
            const typename Fmt<F>::In* Vals, long N, long d, int fault,
            typename Fmt<F>::Acc* partials, typename Fmt<F>::Acc* qbar_acc, long blocks,
            const Combine& combine1) {
    const SweepBody<F, 1, V> sweep1{Q, nullptr, nullptr, N, d, fault, partials};
    const int threads = sweep1.warps() * kWarp;
    grid(blocks, threads, sweep1.shared_bytes(), sweep1, "linear_infsa_cuda: sweep 1 launch");
    grid(combine1.blocks(), kCombineThreads, 0, combine1, "linear_infsa_cuda: combine 1 launch");
    const SweepBody<F, 2, V> sweep2{K, Vals, qbar_acc, N, d, fault, partials};
    grid(blocks, threads, sweep2.shared_bytes(), sweep2, "linear_infsa_cuda: sweep 2 launch");
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
    const CombineBody<Acc, 1> combine1{partials, H, N, d, gamma, eps, fault, qbar_acc, out};
    if (vector_width<F>(d) > 1)
        sweeps<F, kVector<F>>(grid, Q, K, V, N, d, fault, partials, qbar_acc, blocks, combine1);
    else
        sweeps<F, 1>(grid, Q, K, V, N, d, fault, partials, qbar_acc, blocks, combine1);
    const CombineBody<Acc, 2> combine2{partials, H, N, d, gamma, eps, fault, qbar_acc, out};
    grid(combine2.blocks(), kCombineThreads, 0, combine2, "linear_infsa_cuda: combine 2 launch");
}

}  // namespace attnspec::gpu::infsa_logic
