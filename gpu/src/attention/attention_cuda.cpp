// Host wrapper of the SpecA twin (attention_cuda.hpp): packs the heads' weights, runs the
// cuBLAS GEMMs and the kernels of attention_cuda.cu on the context's stream.
#include "attnspec/gpu/attention/attention_cuda.hpp"

#include <algorithm>
#include <memory>

#include "attention_blas.hpp"
#include "attention_launch.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"

namespace attnspec::gpu {

namespace {

template <class T>
using MatT = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;

// Device state of one layer in scalar T: the packed inputs, the projections, one group of logits
// and the output; enqueue() runs the forward on the context's stream.
template <class T>
struct SpecAttentionState {
    long N, D, d, H, cols, group;
    T s;
    bool drop_correction, skip_last_tile;
    DeviceMatrix<T> X, W, C, We, b, P, L, out;

    SpecAttentionState(Context& ctx, const MultiHead& m) {
        m.validate();
        N = m.X.rows(), D = m.X.cols(), d = m.heads[0].W_Q.cols(), H = m.H();
        cols = 3 * H * d;  // [Q heads | K heads | V heads], d columns each
        s = static_cast<T>(m.s);
        const double logits_bytes = static_cast<double>(N) * N * sizeof(T);
        check_allocation(logits_bytes, kSpecAttentionLogitsBudget,
                         "the N x N logits of one head (N = " + std::to_string(N) + ")");
        group =
            std::max(1L, std::min(H, static_cast<long>(kSpecAttentionLogitsBudget / logits_bytes)));
        MatT<T> hW(D, cols), hC = MatT<T>::Zero(D, cols);
        Eigen::Matrix<T, Eigen::Dynamic, 1> hb = Eigen::Matrix<T, Eigen::Dynamic, 1>::Zero(cols);
        for (long h = 0; h < H; ++h) {
            const HeadWeights& w = m.heads[static_cast<size_t>(h)];
            const Eigen::MatrixXd* Ws[3] = {&w.W_Q, &w.W_K, &w.W_V};
            const Eigen::MatrixXd* Cs[3] = {&w.C_Q, &w.C_K, &w.C_V};
            const Eigen::VectorXd* bs[3] = {&w.b_Q, &w.b_K, &w.b_V};
            for (long p = 0; p < 3; ++p) {
                const long c0 = (p * H + h) * d;
                hW.middleCols(c0, d) = Ws[p]->template cast<T>();
                if (Cs[p]->size()) hC.middleCols(c0, d) = Cs[p]->template cast<T>();
                if (bs[p]->size()) hb.segment(c0, d) = bs[p]->template cast<T>();
            }
        }
        const MatT<T> hX = m.X.template cast<T>();
        drop_correction = planted_fault() == PlantedFault::dropped_term;
        skip_last_tile = planted_fault() == PlantedFault::off_by_one_tile;
        X = DeviceMatrix<T>(N, D), W = DeviceMatrix<T>(D, cols), C = DeviceMatrix<T>(D, cols);
        We = DeviceMatrix<T>(D, cols), b = DeviceMatrix<T>(cols, 1), P = DeviceMatrix<T>(N, cols);
        L = DeviceMatrix<T>(N, N * group), out = DeviceMatrix<T>(N, H * d);
        X.upload_sync(ctx, hX.data());
        W.upload_sync(ctx, hW.data());
        C.upload_sync(ctx, hC.data());
        b.upload_sync(ctx, hb.data());
    }

    void enqueue(Context& ctx) {
        attn::launch_effective_weights(W.data(), C.data(), We.data(), W.size(), drop_correction,
                                       ctx.stream());
        // P = 1 b^T + X (W + C): the bias broadcast, then one GEMM for every head's Q, K and V.
        attn::launch_fill_columns(P.data(), b.data(), N, cols, ctx.stream());
        attn::gemm(ctx, false, false, N, cols, D, T(1), X.data(), N, We.data(), D, T(1), P.data(),
                   N);
        const long Nd = N * d, NN = N * N;
        for (long h0 = 0; h0 < H; h0 += group) {
            const long g = std::min(group, H - h0);
            const T* Qh = P.data() + h0 * Nd;
            const T* Kh = P.data() + (H + h0) * Nd;
            const T* Vh = P.data() + (2 * H + h0) * Nd;
            // Transposed logits L_h^T = s K_h Q_h^T: column i is query i's softmax row.
            attn::gemm_batched(ctx, false, true, N, N, d, s, Kh, N, Nd, Qh, N, Nd, T(0), L.data(),
                               N, NN, g);
            attn::launch_softmax_rows(L.data(), N, N * g, skip_last_tile, ctx.stream());
            // A_h = S_h V_h = (L_h^T)^T V_h.
            attn::gemm_batched(ctx, true, false, N, d, N, T(1), L.data(), N, NN, Vh, N, Nd, T(0),
                               out.data() + h0 * Nd, N, Nd, g);
        }
    }

    MatT<T> download(Context& ctx) const {
        MatT<T> o(N, H * d);
        out.download_sync(ctx, o.data());
        return o;
    }
};

}  // namespace

struct SpecAttentionRun::Impl {
    Context& ctx;
    std::unique_ptr<SpecAttentionState<double>> f64;
    std::unique_ptr<SpecAttentionState<float>> f32;
};

SpecAttentionRun::SpecAttentionRun(Context& ctx, const MultiHead& m, bool fp32)
    : impl_(new Impl{ctx, nullptr, nullptr}) {
    if (fp32)
        impl_->f32 = std::make_unique<SpecAttentionState<float>>(ctx, m);
    else
        impl_->f64 = std::make_unique<SpecAttentionState<double>>(ctx, m);
}
SpecAttentionRun::~SpecAttentionRun() = default;

void SpecAttentionRun::run() {
    if (impl_->f32)
        impl_->f32->enqueue(impl_->ctx);
    else
        impl_->f64->enqueue(impl_->ctx);
    impl_->ctx.synchronize();
}

Eigen::MatrixXd SpecAttentionRun::output() const {
    return impl_->f32 ? impl_->f32->download(impl_->ctx).cast<double>()
                      : impl_->f64->download(impl_->ctx);
}

Eigen::MatrixXd multihead_forward(Context& ctx, const MultiHead& m) {
    SpecAttentionState<double> st(ctx, m);
    st.enqueue(ctx);
    return st.download(ctx);
}

Eigen::MatrixXf multihead_forward_fp32(Context& ctx, const MultiHead& m) {
    SpecAttentionState<float> st(ctx, m);
    st.enqueue(ctx);
    return st.download(ctx);
}

}  // namespace attnspec::gpu
