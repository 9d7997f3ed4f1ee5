// Kernels of the SpecA twin: effective weights, bias broadcast, fused row softmax. The per-tile
// arithmetic is attention_logic.hpp (tested on the CPU); the GEMMs are cuBLAS calls in
// attention_cuda.cpp.
#include "../base/cuda_status.hpp"
#include "attention_launch.hpp"
#include "attention_logic.hpp"

namespace attnspec::gpu::attn {

namespace {

constexpr int kSoftmaxWidth = 256;  // threads per softmax row (a power of two)

long blocks_for(long n, int threads) {
    const long b = (n + threads - 1) / threads;
    return b < 65535L * 32 ? b : 65535L * 32;  // grid-stride loops cover the rest
}

template <class T>
__global__ void effective_weights_kernel(const T* W, const T* C, T* out, long n, bool drop) {
    for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < n;
         k += static_cast<long>(gridDim.x) * blockDim.x)
        out[k] = softmax_logic::effective_weight(W[k], C[k], drop);
}

template <class T>
__global__ void fill_columns_kernel(T* P, const T* b, long rows, long total) {
    for (long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; k < total;
         k += static_cast<long>(gridDim.x) * blockDim.x)
        P[k] = b[k / rows];
}

template <class T>
__global__ void __launch_bounds__(kSoftmaxWidth)
    softmax_rows_kernel(T* L, long n, long count, bool skip_last_tile) {
    __shared__ T buf[kSoftmaxWidth];
    const int t = static_cast<int>(threadIdx.x);
    const long tiles = softmax_logic::num_tiles(n, kSoftmaxWidth, skip_last_tile);
    for (long r = blockIdx.x; r < count; r += gridDim.x) {
        T* row = L + r * n;
        buf[t] = softmax_logic::thread_max(row, n, kSoftmaxWidth, t, tiles);
        __syncthreads();
        for (int s = kSoftmaxWidth / 2; s > 0; s /= 2) {
            softmax_logic::tree_step_max(buf, s, t);
            __syncthreads();
        }
        const T m = buf[0];
        __syncthreads();
        buf[t] = softmax_logic::thread_sum_exp(row, n, kSoftmaxWidth, t, tiles, m);
        __syncthreads();
        for (int s = kSoftmaxWidth / 2; s > 0; s /= 2) {
            softmax_logic::tree_step_sum(buf, s, t);
            __syncthreads();
        }
        const T inv_sum = T(1) / buf[0];
        __syncthreads();
        softmax_logic::normalise(row, row, n, kSoftmaxWidth, t, tiles, m, inv_sum);
    }
}

template <class T>
void effective_weights(const T* W, const T* C, T* out, long n, bool drop, CUstream_st* stream) {
    if (n <= 0) return;
    effective_weights_kernel<T><<<blocks_for(n, 256), 256, 0, stream>>>(W, C, out, n, drop);
    status::check_launch("effective weights kernel launch");
}

template <class T>
void fill_columns(T* P, const T* b, long rows, long cols, CUstream_st* stream) {
    const long total = rows * cols;
    if (total <= 0) return;
    fill_columns_kernel<T><<<blocks_for(total, 256), 256, 0, stream>>>(P, b, rows, total);
    status::check_launch("bias broadcast kernel launch");
}

template <class T>
void softmax_rows(T* L, long n, long count, bool skip_last_tile, CUstream_st* stream) {
    if (n <= 0 || count <= 0) return;
    const long grid = count < 65535L * 32 ? count : 65535L * 32;
    softmax_rows_kernel<T><<<grid, kSoftmaxWidth, 0, stream>>>(L, n, count, skip_last_tile);
    status::check_launch("row softmax kernel launch");
}

}  // namespace

void launch_effective_weights(const double* W, const double* C, double* out, long n, bool drop,
                              CUstream_st* stream) {
    effective_weights(W, C, out, n, drop, stream);
}
void launch_effective_weights(const float* W, const float* C, float* out, long n, bool drop,
                              CUstream_st* stream) {
    effective_weights(W, C, out, n, drop, stream);
}
void launch_fill_columns(double* P, const double* b, long rows, long cols, CUstream_st* stream) {
    fill_columns(P, b, rows, cols, stream);
}
void launch_fill_columns(float* P, const float* b, long rows, long cols, CUstream_st* stream) {
    fill_columns(P, b, rows, cols, stream);
}
void launch_softmax_rows(double* L, long n, long count, bool skip_last_tile, CUstream_st* stream) {
    softmax_rows(L, n, count, skip_last_tile, stream);
}
void launch_softmax_rows(float* L, long n, long count, bool skip_last_tile, CUstream_st* stream) {
    softmax_rows(L, n, count, skip_last_tile, stream);
}

}  // namespace attnspec::gpu::attn
