// Parts of the attention twins that need no device (both builds): the device memory estimates,
// the forward twin's tolerance and instances. The entries of a build without CUDA:
// attention_stub.cpp.
#include <algorithm>
#include <cstdio>

#include "attnspec/attention/corrections.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/gpu/attention/attention_cuda.hpp"
#include "attnspec/gpu/attention/jacobian_spectrum_cuda.hpp"
#include "attnspec/gpu/base/device.hpp"

namespace attnspec::gpu {

double spec_attention_device_bytes(long N, long D, long d, long H, int scalar_bytes) {
    const double Nd = static_cast<double>(N), Hd3 = 3.0 * H * d, b = scalar_bytes;
    const double logits = Nd * Nd * b;
    const double group = std::max(1.0, std::min<double>(H, kSpecAttentionLogitsBudget / logits));
    // X, W, C, W + C, b, X [W + C] (N x 3Hd), the output (N x Hd), one group of logits
    return b * (Nd * D + 3.0 * D * Hd3 + Hd3 + Nd * Hd3 + Nd * H * d) + group * logits;
}

double jacobian_spectrum_device_bytes(long N, long D, long d) {
    const double n = static_cast<double>(N) * d, m = std::min(N, D), Nf = N;
    const double gram = n * n, factors = n * (2.0 * Nf + d + m);  // G; P, T, Z, Y
    // S, XX, QQ, VV; X, S X, Fx; Q, K, V, A; the eigenvalues
    const double small = 4.0 * Nf * Nf + Nf * (2.0 * D + m) + 4.0 * Nf * d + n;
    return 8.0 * (gram + factors + small + kSyevdWorkPerRow * n);
}

namespace {
// The bound on max|A - A_exact| of one head at unit roundoff u (see the header). QK = s |Q||K|^T,
// QKm = s (M_Q |K|^T + |Q| M_K^T): the logits' rounding and the projections' propagated error.
double head_bound(long N, long D, long d, const Eigen::MatrixXd& QK, const Eigen::MatrixXd& QKm,
                  double scale, double u) {
    const double proj = gamma_n(static_cast<double>(D + 4), u);
    const double dL = (gamma_n(static_cast<double>(d + 3), u) * QK + proj * QKm).maxCoeff();
    return (2 * dL + gamma_n(static_cast<double>(N + 4), u) + proj) * scale;
}
}  // namespace

SpecAttentionTolerance spec_attention_tolerance(const MultiHead& m, double u_twin) {
    m.validate();
    const long N = m.X.rows(), D = m.X.cols(), d = m.heads[0].W_Q.cols();
    const Eigen::MatrixXd aX = m.X.cwiseAbs();
    SpecAttentionTolerance t;
    double worst = 0;
    for (long h = 0; h < m.H(); ++h) {
        const Head e = m.head(h).effective();
        auto mag = [&](const Eigen::MatrixXd& W, const Eigen::VectorXd& b) {
            Eigen::MatrixXd M = aX * W.cwiseAbs();
            if (b.size()) M.rowwise() += b.cwiseAbs().transpose();
            return M;
        };
        const Eigen::MatrixXd MQ = mag(e.W_Q, e.b_Q), MK = mag(e.W_K, e.b_K),
                              MV = mag(e.W_V, e.b_V);
        const Forward<double> f =
            attention_forward<double>(e.X, e.W_Q, e.W_K, e.W_V, e.s, e.b_Q, e.b_K, e.b_V);
        const Eigen::MatrixXd aQ = f.Q.cwiseAbs(), aK = f.K.cwiseAbs();
        const Eigen::MatrixXd QK = e.s * aQ * aK.transpose();
        const Eigen::MatrixXd QKm = e.s * (MQ * aK.transpose() + aQ * MK.transpose());
        const double scale = (f.S * MV).maxCoeff();
        t.scale = std::max(t.scale, scale);
        const double twin = head_bound(N, D, d, QK, QKm, scale, u_twin);
        const double ref = head_bound(N, D, d, QK, QKm, scale, kUnitRoundoff);
        t.rel_bound = std::max(t.rel_bound, twin / scale);
        worst = std::max(worst, twin + ref);
    }
    t.abs = worst;
    char buf[260];
    std::snprintf(buf, sizeof buf,
                  "bound: first-order running error of twin (u = %.3g) + fp64 reference: "
                  "(2 max|dL| + gamma_{N+4} + gamma_{D+4}) max(S M_V), max(S M_V) = %.3g",
                  u_twin, t.scale);
    t.reason = buf;
    return t;
}

MultiHead spec_attention_instance(long N, long D, long d, long H, std::uint64_t seed, bool biases) {
    RandomSpec spec;
    spec.N = N, spec.D = D, spec.d = d, spec.H = H, spec.seed = seed;
    spec.scale = LogitScale::inv_sqrt_d;
    MultiHead m = random_multihead(spec);
    Rng rng(seed + 7);
    for (HeadWeights& w : m.heads) {
        w.C_Q = svd_correction(w.W_Q), w.C_K = svd_correction(w.W_K);
        w.C_V = svd_correction(w.W_V);
        if (biases) {
            w.b_Q = rng.gaussian(d, 1, 0.3), w.b_K = rng.gaussian(d, 1, 0.3);
            w.b_V = rng.gaussian(d, 1, 0.3);
        }
    }
    return m;
}

}  // namespace attnspec::gpu
