// Host wrapper of the SpecA twin (spec_attention_cuda.hpp): packs the heads' weights, runs the
// cuBLAS GEMMs and the kernels of spec_attention_cuda.cu on the context's stream.
#include "attnspec/gpu/attention/spec_attention_cuda.hpp"

#include <algorithm>

#include "attention_blas.hpp"
#include "attention_launch.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"

namespace attnspec::gpu {

namespace {

template <class T>
using MatT = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;

template <class T>
MatT<T> forward(Context& ctx, const MultiHead& m) {
    m.validate();
    const long N = m.X.rows(), D = m.X.cols(), d = m.heads[0].W_Q.cols(), H = m.H();
    const long cols = 3 * H * d;  // [Q heads | K heads | V heads], d columns each
    const double logits_bytes = static_cast<double>(N) * N * sizeof(T);
    check_allocation(logits_bytes, kSpecAttentionLogitsBudget,
                     "the N x N logits of one head (N = " + std::to_string(N) + ")");
    const long group =
        std::max(1L, std::min(H, static_cast<long>(kSpecAttentionLogitsBudget / logits_bytes)));
    MatT<T> W(D, cols), C = MatT<T>::Zero(D, cols);
    Eigen::Matrix<T, Eigen::Dynamic, 1> b = Eigen::Matrix<T, Eigen::Dynamic, 1>::Zero(cols);
    for (long h = 0; h < H; ++h) {
        const HeadWeights& w = m.heads[static_cast<size_t>(h)];
        const Eigen::MatrixXd* Ws[3] = {&w.W_Q, &w.W_K, &w.W_V};
        const Eigen::MatrixXd* Cs[3] = {&w.C_Q, &w.C_K, &w.C_V};
        const Eigen::VectorXd* bs[3] = {&w.b_Q, &w.b_K, &w.b_V};
        for (long p = 0; p < 3; ++p) {
            const long c0 = (p * H + h) * d;
            W.middleCols(c0, d) = Ws[p]->template cast<T>();
            if (Cs[p]->size()) C.middleCols(c0, d) = Cs[p]->template cast<T>();
            if (bs[p]->size()) b.segment(c0, d) = bs[p]->template cast<T>();
        }
    }
    const MatT<T> X = m.X.template cast<T>();
    const bool drop_correction = planted_fault() == PlantedFault::dropped_term;
    const bool skip_last_tile = planted_fault() == PlantedFault::off_by_one_tile;

    DeviceMatrix<T> dX(N, D), dW(D, cols), dC(D, cols), dWe(D, cols), db(cols, 1), dP(N, cols);
    DeviceMatrix<T> dL(N, N * group), dOut(N, H * d);
    dX.upload_sync(ctx, X.data());
    dW.upload_sync(ctx, W.data());
    dC.upload_sync(ctx, C.data());
    db.upload_sync(ctx, b.data());
    attn::launch_effective_weights(dW.data(), dC.data(), dWe.data(), dW.size(), drop_correction,
                                   ctx.stream());
    // P = 1 b^T + X (W + C): the bias broadcast, then one GEMM for every head's Q, K and V.
    attn::launch_fill_columns(dP.data(), db.data(), N, cols, ctx.stream());
    attn::gemm(ctx, false, false, N, cols, D, T(1), dX.data(), N, dWe.data(), D, T(1), dP.data(),
               N);
    const long Nd = N * d, NN = N * N;
    for (long h0 = 0; h0 < H; h0 += group) {
        const long g = std::min(group, H - h0);
        const T* Qh = dP.data() + h0 * Nd;
        const T* Kh = dP.data() + (H + h0) * Nd;
        const T* Vh = dP.data() + (2 * H + h0) * Nd;
        // Transposed logits L_h^T = s K_h Q_h^T: column i is query i's softmax row.
        attn::gemm_batched(ctx, false, true, N, N, d, static_cast<T>(m.s), Kh, N, Nd, Qh, N, Nd,
                           T(0), dL.data(), N, NN, g);
        attn::launch_softmax_rows(dL.data(), N, N * g, skip_last_tile, ctx.stream());
        // A_h = S_h V_h = (L_h^T)^T V_h.
        attn::gemm_batched(ctx, true, false, N, d, N, T(1), dL.data(), N, NN, Vh, N, Nd, T(0),
                           dOut.data() + h0 * Nd, N, Nd, g);
    }
    MatT<T> out(N, H * d);
    dOut.download_sync(ctx, out.data());
    return out;
}

}  // namespace

Eigen::MatrixXd multihead_forward(Context& ctx, const MultiHead& m) {
    return forward<double>(ctx, m);
}

Eigen::MatrixXf multihead_forward_fp32(Context& ctx, const MultiHead& m) {
    return forward<float>(ctx, m);
}

}  // namespace attnspec::gpu
