// Linear-InfSA: two-sweep streaming form, the literal formulation and the float32 heads kernel.
#include "attnspec/infsa/linear_infsa.hpp"

#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/target_clones.hpp"
#include "infsa_internal.hpp"

namespace attnspec {

namespace {

void check_inputs(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, const Eigen::MatrixXd* V,
                  const LinearInfsaOptions& opt) {
    if (Q.size() == 0 || K.size() == 0 || (V && V->size() == 0))
        fail_data("linear_infsa: Q, K, V must be non-empty");
    if (Q.rows() != K.rows() || Q.cols() != K.cols() ||
        (V && (V->rows() != Q.rows() || V->cols() != Q.cols())))
        fail_data("linear_infsa: Q, K, V must all be N x d_h (Q is " + std::to_string(Q.rows()) +
                  "x" + std::to_string(Q.cols()) + ")");
    if (!Q.allFinite() || !K.allFinite() || (V && !V->allFinite()))
        fail_data("linear_infsa: inputs contain NaN or Inf");
    detail::check_gamma(opt.gamma);
    detail::check_eps(opt.eps);
}

// Sweep 1: central query q_bar = sum e_i q~_i / (sum e + eps), e_i = ||q~_i||.
Eigen::VectorXd central_query(const Eigen::MatrixXd& Q, double eps, double& sum_e) {
    const Eigen::Index N = Q.rows(), d = Q.cols();
    const double c = 1.0 / std::sqrt(double(d));
    Eigen::VectorXd acc = Eigen::VectorXd::Zero(d);
    sum_e = 0;
    for (Eigen::Index i = 0; i < N; ++i) {
        const Eigen::VectorXd qt = Q.row(i).transpose() * c;
        const double e = qt.norm();
        sum_e += e;
        acc += e * qt;
    }
    const double den = sum_e + eps;
    return den > 0 ? Eigen::VectorXd(acc / den) : Eigen::VectorXd::Zero(d);
}

}  // namespace

LinearInfsaResult linear_infsa(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                               const Eigen::MatrixXd& V, const LinearInfsaOptions& opt) {
    check_inputs(Q, K, &V, opt);
    LinearInfsaResult r;
    r.q_bar = central_query(Q, opt.eps, r.sum_e);
    const Eigen::Index N = K.rows(), d = K.cols();
    const double c = 1.0 / std::sqrt(double(d));
    Eigen::VectorXd acc = Eigen::VectorXd::Zero(d);
    for (Eigen::Index j = 0; j < N; ++j) {  // sweep 2: keys and values together
        const double s = std::max(0.0, c * K.row(j).dot(r.q_bar));
        r.sum_s += s;
        if (s > 0) acc += s * V.row(j).transpose();
    }
    r.degenerate = r.sum_s == 0;
    r.p = r.degenerate ? Eigen::VectorXd::Zero(d)
                       : Eigen::VectorXd(opt.gamma * acc / (r.sum_s + opt.eps));
    return r;
}

Eigen::VectorXd linear_infsa_weights(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                                     const LinearInfsaOptions& opt) {
    check_inputs(Q, K, nullptr, opt);
    double sum_e = 0;
    const Eigen::VectorXd q_bar = central_query(Q, opt.eps, sum_e);
    const double c = 1.0 / std::sqrt(double(K.cols()));
    Eigen::VectorXd s = ((K * q_bar) * c).cwiseMax(0.0);
    const double S = s.sum();
    return S == 0 ? Eigen::VectorXd::Zero(K.rows()) : Eigen::VectorXd(s / (S + opt.eps));
}

LinearInfsaLiteral linear_infsa_literal(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                                        const Eigen::MatrixXd& V, const LinearInfsaOptions& opt) {
    check_inputs(Q, K, &V, opt);
    const double c = 1.0 / std::sqrt(double(Q.cols()));
    const Eigen::MatrixXd Qt = Q * c, Kt = K * c;
    const Eigen::VectorXd E = Qt.rowwise().norm();
    LinearInfsaLiteral L;
    const double den_e = E.sum() + opt.eps;
    L.w = den_e > 0 ? Eigen::VectorXd(E / den_e) : Eigen::VectorXd::Zero(E.size());
    L.q_bar = Qt.transpose() * L.w;
    const Eigen::VectorXd s = (Kt * L.q_bar).cwiseMax(0.0);
    const double l1 = s.lpNorm<1>();
    L.a = l1 == 0 ? Eigen::VectorXd::Zero(s.size()) : Eigen::VectorXd(s / (l1 + opt.eps));
    const Eigen::VectorXd p = opt.gamma * (V.transpose() * L.a);
    L.out = Eigen::VectorXd::Ones(Q.rows()) * p.transpose();
    return L;
}

namespace {

constexpr long kBlock = 256;

// acc[0..d) += sum_i (e_i / sqrt d) q_i over n tokens; returns sum_i e_i, e_i = ||q_i|| / sqrt d.
ATTNSPEC_CLONES_AVX2 float sweep_queries(const float* q, long n, long d, float c, float* acc) {
    float se = 0;
    for (long i = 0; i < n; ++i, q += d) {
        float ss = 0;
        for (long l = 0; l < d; ++l) ss += q[l] * q[l];
        const float e = std::sqrt(ss) * c;
        se += e;
        const float w = e * c;
        for (long l = 0; l < d; ++l) acc[l] += w * q[l];
    }
    return se;
}

// acc += sum_j s_j v_j, s_j = max(0, c qb . k_j); returns sum s_j.
ATTNSPEC_CLONES_AVX2 float sweep_keys(const float* k, const float* v, long n, long d, float c,
                                      const float* qb, float* acc) {
    float ss = 0;
    for (long j = 0; j < n; ++j, k += d, v += d) {
        float dot = 0;
        for (long l = 0; l < d; ++l) dot += qb[l] * k[l];
        const float s = std::max(0.0f, c * dot);
        ss += s;
        for (long l = 0; l < d; ++l) acc[l] += s * v[l];
    }
    return ss;
}

void one_head(const float* Q, const float* K, const float* V, long N, long d,
              const LinearInfsaOptions& opt, float* P) {
    const float c = 1.0f / std::sqrt(float(d));
    std::vector<double> A(size_t(d), 0.0);
    std::vector<float> a(static_cast<size_t>(d));
    double se = 0;
    for (long i0 = 0; i0 < N; i0 += kBlock) {
        std::fill(a.begin(), a.end(), 0.0f);
        se += sweep_queries(Q + i0 * d, std::min(kBlock, N - i0), d, c, a.data());
        for (long l = 0; l < d; ++l) A[size_t(l)] += a[size_t(l)];
    }
    std::vector<float> qb(static_cast<size_t>(d));
    const double den = se + opt.eps;
    for (long l = 0; l < d; ++l) qb[size_t(l)] = den > 0 ? float(A[size_t(l)] / den) : 0.0f;
    std::fill(A.begin(), A.end(), 0.0);
    double ss = 0;
    for (long j0 = 0; j0 < N; j0 += kBlock) {
        std::fill(a.begin(), a.end(), 0.0f);
        ss +=
            sweep_keys(K + j0 * d, V + j0 * d, std::min(kBlock, N - j0), d, c, qb.data(), a.data());
        for (long l = 0; l < d; ++l) A[size_t(l)] += a[size_t(l)];
    }
    for (long l = 0; l < d; ++l)
        P[l] = ss == 0 ? 0.0f : float(opt.gamma * A[size_t(l)] / (ss + opt.eps));
}

}  // namespace

void linear_infsa_heads_f32(const float* Q, const float* K, const float* V, long H, long N, long d,
                            const LinearInfsaOptions& opt, float* P, int threads) {
    if (H <= 0 || N <= 0 || d <= 0) fail_data("linear_infsa_heads_f32: H, N, d must be positive");
    detail::check_gamma(opt.gamma);
    if (!(opt.eps >= 0))
        throw Error(ExitCode::DataError, "eps = " + detail::num(opt.eps) + " must be >= 0", "eps");
    threads = std::max(1, std::min<int>(threads, int(H)));
    auto work = [&](int t) {
        for (long h = t; h < H; h += threads)
            one_head(Q + h * N * d, K + h * N * d, V + h * N * d, N, d, opt, P + h * d);
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& th : pool) th.join();
}

}  // namespace attnspec
