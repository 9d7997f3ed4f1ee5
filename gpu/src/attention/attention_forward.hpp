// The SpecA twin's forward sequence, written once for the device (attention_cuda.cpp: cuBLAS and
// the kernels of attention_cuda.cu on the context's stream) and for `gpu-check --emulate`
// (attention_check_common.cpp: the same kernel bodies on the CPU grid runner, each cuBLAS call
// served by the CPU BLAS with the same arguments: column-major operands, transposes, leading
// dimensions and batch strides). Host-only, no CUDA header.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <string>

#include "attnspec/attention/attention.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/attention/attention_cuda.hpp"

namespace attnspec::gpu::attn {

template <class T>
using MatT = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;

// Sizes of one layer: the projections P are N x cols ([Q heads | K heads | V heads], d columns
// each), the logits L hold `group` heads of N x N at a time (kSpecAttentionLogitsBudget).
struct ForwardShape {
    long N, D, d, H, cols, group;
    double s;
};

template <class T>
ForwardShape forward_shape(const MultiHead& m) {
    m.validate();
    ForwardShape f{};
    f.N = m.X.rows(), f.D = m.X.cols(), f.d = m.heads[0].W_Q.cols(), f.H = m.H();
    f.cols = 3 * f.H * f.d;
    f.s = m.s;
    const double logits_bytes = static_cast<double>(f.N) * f.N * sizeof(T);
    check_allocation(logits_bytes, kSpecAttentionLogitsBudget,
                     "the N x N logits of one head (N = " + std::to_string(f.N) + ")");
    f.group =
        std::max(1L, std::min(f.H, static_cast<long>(kSpecAttentionLogitsBudget / logits_bytes)));
    return f;
}

// The heads' weights packed as the twin reads them: W, C (D x cols), b (cols).
template <class T>
void pack_weights(const MultiHead& m, const ForwardShape& f, MatT<T>& W, MatT<T>& C,
                  Eigen::Matrix<T, Eigen::Dynamic, 1>& b) {
    W.resize(f.D, f.cols);
    C = MatT<T>::Zero(f.D, f.cols);
    b = Eigen::Matrix<T, Eigen::Dynamic, 1>::Zero(f.cols);
    for (long h = 0; h < f.H; ++h) {
        const HeadWeights& w = m.heads[static_cast<size_t>(h)];
        const Eigen::MatrixXd* Ws[3] = {&w.W_Q, &w.W_K, &w.W_V};
        const Eigen::MatrixXd* Cs[3] = {&w.C_Q, &w.C_K, &w.C_V};
        const Eigen::VectorXd* bs[3] = {&w.b_Q, &w.b_K, &w.b_V};
        for (long p = 0; p < 3; ++p) {
            const long c0 = (p * f.H + h) * f.d;
            W.middleCols(c0, f.d) = Ws[p]->template cast<T>();
            if (Cs[p]->size()) C.middleCols(c0, f.d) = Cs[p]->template cast<T>();
            if (bs[p]->size()) b.segment(c0, f.d) = bs[p]->template cast<T>();
        }
    }
}

// The forward on `ops` (operands where ops keeps them: X N x D, W, C, We D x cols, b cols,
// P N x cols, L N x N group, out N x H d, all column-major): ops provides effective_weights,
// fill_columns, softmax_rows (the kernels) and gemm, gemm_batched (cuBLAS's arguments).
template <class T, class Ops>
void forward_sequence(Ops& ops, const ForwardShape& f, bool drop_correction, bool skip_last_tile,
                      const T* X, const T* W, const T* C, T* We, const T* b, T* P, T* L, T* out) {
    const long N = f.N, D = f.D, d = f.d, H = f.H, cols = f.cols;
    const T s = static_cast<T>(f.s);
    ops.effective_weights(W, C, We, D * cols, drop_correction);
    // P = 1 b^T + X (W + C): the bias broadcast, then one GEMM for every head's Q, K and V.
    ops.fill_columns(P, b, N, cols);
    ops.gemm(false, false, N, cols, D, T(1), X, N, We, D, T(1), P, N);
    const long Nd = N * d, NN = N * N;
    for (long h0 = 0; h0 < H; h0 += f.group) {
        const long g = std::min(f.group, H - h0);
        const T* Qh = P + h0 * Nd;
        const T* Kh = P + (H + h0) * Nd;
        const T* Vh = P + (2 * H + h0) * Nd;
        // Transposed logits L_h^T = s K_h Q_h^T: column i is query i's softmax row.
        ops.gemm_batched(false, true, N, N, d, s, Kh, N, Nd, Qh, N, Nd, T(0), L, N, NN, g);
        ops.softmax_rows(L, N, N * g, skip_last_tile);
        // A_h = S_h V_h = (L_h^T)^T V_h.
        ops.gemm_batched(true, false, N, d, N, T(1), L, N, NN, Vh, N, Nd, T(0), out + h0 * Nd, N,
                         Nd, g);
    }
}

}  // namespace attnspec::gpu::attn
