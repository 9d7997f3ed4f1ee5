// Host wrapper of the SpecA twin (attention_cuda.hpp): packs the heads' weights and runs the
// forward sequence of attention_forward.hpp with cuBLAS and the kernels of attention_cuda.cu on
// the context's stream.
#include "attnspec/gpu/attention/attention_cuda.hpp"

#include <algorithm>
#include <memory>

#include "attention_blas.hpp"
#include "attention_forward.hpp"
#include "attention_launch.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"

namespace attnspec::gpu {

namespace {

using attn::MatT;

// The device's operations of the forward sequence (attention_forward.hpp): the kernels of
// attention_cuda.cu and cuBLAS on the context's stream.
template <class T>
struct DeviceOps {
    Context& ctx;
    void effective_weights(const T* W, const T* C, T* out, long n, bool drop) {
        attn::launch_effective_weights(W, C, out, n, drop, ctx.stream());
    }
    void fill_columns(T* P, const T* b, long rows, long cols) {
        attn::launch_fill_columns(P, b, rows, cols, ctx.stream());
    }
    void softmax_rows(T* L, long n, long count, bool skip_last_tile) {
        attn::launch_softmax_rows(L, n, count, skip_last_tile, ctx.stream());
    }
    void gemm(bool ta, bool tb, long m, long n, long k, T alpha, const T* A, long lda, const T* B,
              long ldb, T beta, T* C, long ldc) {
        attn::gemm(ctx, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    }
    void gemm_batched(bool ta, bool tb, long m, long n, long k, T alpha, const T* A, long lda,
                      long sA, const T* B, long ldb, long sB, T beta, T* C, long ldc, long sC,
                      long batch) {
        attn::gemm_batched(ctx, ta, tb, m, n, k, alpha, A, lda, sA, B, ldb, sB, beta, C, ldc, sC,
                           batch);
    }
};

// Device state of one layer in scalar T: the packed inputs, the projections, one group of logits
// and the output; enqueue() runs the forward on the context's stream.
template <class T>
struct SpecAttentionState {
    attn::ForwardShape f;
    bool drop_correction, skip_last_tile;
    DeviceMatrix<T> X, W, C, We, b, P, L, out;

    SpecAttentionState(Context& ctx, const MultiHead& m) : f(attn::forward_shape<T>(m)) {
        const long N = f.N, D = f.D, cols = f.cols;
        MatT<T> hW, hC;
        Eigen::Matrix<T, Eigen::Dynamic, 1> hb;
        attn::pack_weights<T>(m, f, hW, hC, hb);
        const MatT<T> hX = m.X.template cast<T>();
        drop_correction = planted_fault() == PlantedFault::dropped_term;
        skip_last_tile = planted_fault() == PlantedFault::off_by_one_tile;
        X = DeviceMatrix<T>(N, D), W = DeviceMatrix<T>(D, cols), C = DeviceMatrix<T>(D, cols);
        We = DeviceMatrix<T>(D, cols), b = DeviceMatrix<T>(cols, 1), P = DeviceMatrix<T>(N, cols);
        L = DeviceMatrix<T>(N, N * f.group), out = DeviceMatrix<T>(N, f.H * f.d);
        X.upload_sync(ctx, hX.data());
        W.upload_sync(ctx, hW.data());
        C.upload_sync(ctx, hC.data());
        b.upload_sync(ctx, hb.data());
    }

    void enqueue(Context& ctx) {
        DeviceOps<T> ops{ctx};
        attn::forward_sequence<T>(ops, f, drop_correction, skip_last_tile, X.data(), W.data(),
                                  C.data(), We.data(), b.data(), P.data(), L.data(), out.data());
    }

    MatT<T> download(Context& ctx) const {
        MatT<T> o(f.N, f.H * f.d);
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
