// Kernels of the kappa(J) twin's Gram assembly: the factors P^c and the per-block-column combine.
// The per-entry arithmetic is jacobian_spectrum_logic.hpp (tested on the CPU); the GEMMs and the
// eigensolve are cuBLAS / cuSOLVER calls in jacobian_spectrum_cuda.cpp.
#include "../base/cuda_status.hpp"
#include "jacobian_spectrum_launch.hpp"
#include "jacobian_spectrum_logic.hpp"

namespace attnspec::gpu::attn {

namespace {

__global__ void p_factors_kernel(const double* S, const double* V, const double* A, double* P,
                                 long N, long d) {
    const long Nd = N * d, total = Nd * N;
    for (long e = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; e < total;
         e += static_cast<long>(gridDim.x) * blockDim.x) {
        const long row = e % Nd, k = e / Nd, c = row / N, i = row % N;
        P[e] = gram_logic::p_entry(S[i + k * N], V[k + c * N], A[i + c * N]);
    }
}

// One thread per entry of a kTile x kTile tile; tile (blockIdx.x, blockIdx.y) of the
// rows x N slice.
__global__ void gram_combine_kernel(double* G, long Nd, const double* XX, const double* QQ,
                                    const double* VV, const double* T, long ldT, long N, long cp,
                                    long rows, bool skip_last_tile, bool drop_v_term) {
    if (!gram_logic::tile_active(blockIdx.x, blockIdx.y, gridDim.x, gridDim.y, skip_last_tile))
        return;
    const long r = blockIdx.x * static_cast<long>(gram_logic::kTile) + threadIdx.x;
    const long j = blockIdx.y * static_cast<long>(gram_logic::kTile) + threadIdx.y;
    if (r < rows && j < N)
        gram_logic::combine_entry(G, Nd, XX, QQ, VV, T, ldT, N, cp, r, j, drop_v_term);
}

}  // namespace

void launch_p_factors(const double* S, const double* V, const double* A, double* P_all, long N,
                      long d, CUstream_st* stream) {
    const long total = N * d * N;
    if (total <= 0) return;
    const long want = (total + 255) / 256, grid = want < 65535L * 32 ? want : 65535L * 32;
    p_factors_kernel<<<grid, 256, 0, stream>>>(S, V, A, P_all, N, d);
    status::check_launch("Gram factor kernel launch");
}

void launch_gram_combine(double* G, long Nd, const double* XX, const double* QQ, const double* VV,
                         const double* T, long ldT, long N, long cp, bool skip_last_tile,
                         bool drop_v_term, CUstream_st* stream) {
    const long rows = Nd - cp * N;
    if (rows <= 0 || N <= 0) return;
    const dim3 block(gram_logic::kTile, gram_logic::kTile);
    const dim3 grid(static_cast<unsigned>((rows + gram_logic::kTile - 1) / gram_logic::kTile),
                    static_cast<unsigned>((N + gram_logic::kTile - 1) / gram_logic::kTile));
    gram_combine_kernel<<<grid, block, 0, stream>>>(G, Nd, XX, QQ, VV, T, ldT, N, cp, rows,
                                                    skip_last_tile, drop_v_term);
    status::check_launch("Gram combine kernel launch");
}

}  // namespace attnspec::gpu::attn
