// Linear-InfSA CUDA twin: kernels and their launcher (docs/MATH.md §3; CPU reference
// lib/src/infsa/linear_infsa.cpp). The arithmetic lives in linear_infsa_logic.hpp (ATTNSPEC_HD),
// which the CPU suite runs in an emulated grid. Four launches per call:
//   sweep 1 (block per chunk x head) -> combine 1 (q_bar, sum e) -> sweep 2 -> combine 2 (p, sum
//   s).
// Every reduction has a fixed shape and order (token order within a chunk, chunk order across),
// and no atomics touch the result: the output is bitwise deterministic for given inputs.
#include <cuda_runtime.h>

#include "../base/cuda_status.hpp"
#include "linear_infsa_launch.hpp"
#include "linear_infsa_logic.hpp"

namespace attnspec::gpu::detail {

namespace {

using namespace attnspec::gpu::infsa_logic;

constexpr int kThreads = 256;

// One block per (head, chunk); Sweep 1 reads X = Q, Sweep 2 reads X = K and V.
template <Format F, int Sweep>
__global__ void sweep_kernel(const typename Fmt<F>::In* X, const typename Fmt<F>::In* V,
                             const typename Fmt<F>::Acc* qbar, long N, long d, int fault,
                             typename Fmt<F>::Acc* partials) {
    using Acc = typename Fmt<F>::Acc;
    __shared__ Acc w[kChunk];
    const long nch = chunk_count(N);
    const long h = long(blockIdx.x) / nch, chunk = long(blockIdx.x) % nch;
    const long n = tokens_in_chunk(N, chunk, Sweep, fault);
    const Acc c = Acc(1) / std::sqrt(Acc(d));
    const long offset = (h * N + chunk * kChunk) * d;
    const long tid = threadIdx.x, nthreads = blockDim.x;
    for (long i = tid; i < n; i += nthreads)
        w[i] = Sweep == 1 ? token_energy<F>(X + offset + i * d, d, c)
                          : token_score<F>(X + offset + i * d, qbar + h * d, d, c);
    __syncthreads();
    Acc* out = partials + (h * nch + chunk) * (d + 1);
    if (tid == 0) out[d] = chunk_sum(w, n);
    const typename Fmt<F>::In* Y = Sweep == 1 ? X : V;
    const Acc scale = Sweep == 1 ? c : Acc(1);
    for (long l = tid; l < d; l += nthreads)
        out[l] = weighted_column<F>(Y + offset, d, l, w, n, scale);
}

// One thread per (head, component l in [0, d]); column d of the partials is the chunk sum.
// Stage 1: q_bar (double out + Acc copy for sweep 2) and sum e. Stage 2: p and sum s.
template <class Acc, int Stage>
__global__ void combine_kernel(const Acc* partials, long H, long N, long d, double gamma,
                               double eps, int fault, Acc* qbar_acc, double* out) {
    const long t = long(blockIdx.x) * blockDim.x + threadIdx.x;
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

template <Format F>
std::size_t workspace_bytes(long H, long N, long d) {
    using Acc = typename Fmt<F>::Acc;
    return sizeof(Acc) * std::size_t(H) * std::size_t(chunk_count(N) * (d + 1) + d);
}

template <Format F>
void run(CUstream_st* stream, const void* Q, const void* K, const void* V, long H, long N, long d,
         double gamma, double eps, int fault, void* workspace, double* out) {
    using In = typename Fmt<F>::In;
    using Acc = typename Fmt<F>::Acc;
    Acc* partials = static_cast<Acc*>(workspace);
    Acc* qbar_acc = partials + H * chunk_count(N) * (d + 1);
    const long blocks = H * chunk_count(N);
    const long combine_blocks = (H * (d + 1) + kThreads - 1) / kThreads;
    sweep_kernel<F, 1><<<unsigned(blocks), kThreads, 0, stream>>>(
        static_cast<const In*>(Q), nullptr, nullptr, N, d, fault, partials);
    status::check_launch("linear_infsa_cuda: sweep 1 launch");
    combine_kernel<Acc, 1><<<unsigned(combine_blocks), kThreads, 0, stream>>>(
        partials, H, N, d, gamma, eps, fault, qbar_acc, out);
    status::check_launch("linear_infsa_cuda: combine 1 launch");
    sweep_kernel<F, 2><<<unsigned(blocks), kThreads, 0, stream>>>(
        static_cast<const In*>(K), static_cast<const In*>(V), qbar_acc, N, d, fault, partials);
    status::check_launch("linear_infsa_cuda: sweep 2 launch");
    combine_kernel<Acc, 2><<<unsigned(combine_blocks), kThreads, 0, stream>>>(
        partials, H, N, d, gamma, eps, fault, qbar_acc, out);
    status::check_launch("linear_infsa_cuda: combine 2 launch");
}

}  // namespace

std::size_t linear_infsa_workspace_bytes(InfsaFormat f, long H, long N, long d) {
    switch (f) {
        case InfsaFormat::f64:
            return workspace_bytes<Format::f64>(H, N, d);
        case InfsaFormat::f32:
            return workspace_bytes<Format::f32>(H, N, d);
        case InfsaFormat::bf16:
            return workspace_bytes<Format::bf16>(H, N, d);
        case InfsaFormat::fp16:
            return workspace_bytes<Format::fp16>(H, N, d);
    }
    return 0;
}

void launch_linear_infsa(CUstream_st* stream, InfsaFormat f, const void* Q, const void* K,
                         const void* V, long H, long N, long d, double gamma, double eps, int fault,
                         void* workspace, double* out) {
    switch (f) {
        case InfsaFormat::f64:
            return run<Format::f64>(stream, Q, K, V, H, N, d, gamma, eps, fault, workspace, out);
        case InfsaFormat::f32:
            return run<Format::f32>(stream, Q, K, V, H, N, d, gamma, eps, fault, workspace, out);
        case InfsaFormat::bf16:
            return run<Format::bf16>(stream, Q, K, V, H, N, d, gamma, eps, fault, workspace, out);
        case InfsaFormat::fp16:
            return run<Format::fp16>(stream, Q, K, V, H, N, d, gamma, eps, fault, workspace, out);
    }
}

}  // namespace attnspec::gpu::detail
