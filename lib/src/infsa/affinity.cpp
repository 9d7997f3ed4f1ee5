// Affinities (ReLU/Frobenius and softmax), the (Q, K) data families and shared BLAS helpers.
#include "attnspec/infsa/infsa.hpp"

#include <cblas.h>

#include <cmath>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "infsa_internal.hpp"

namespace attnspec {

namespace detail {

void gemm(const Eigen::MatrixXd& A, bool ta, const Eigen::MatrixXd& B, bool tb, Eigen::MatrixXd& C,
          double alpha, double beta) {
    const Eigen::Index m = ta ? A.cols() : A.rows(), k = ta ? A.rows() : A.cols();
    const Eigen::Index n = tb ? B.rows() : B.cols();
    if ((tb ? B.cols() : B.rows()) != k) throw Error(ExitCode::Internal, "gemm: inner dimensions differ");
    if (beta == 0.0) C.resize(m, n);
    if (m == 0 || n == 0) return;
    if (k == 0) {
        C *= beta;
        return;
    }
    cblas_dgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                int(m), int(n), int(k), alpha, A.data(), int(A.rows()), B.data(), int(B.rows()),
                beta, C.data(), int(C.rows()));
}

}  // namespace detail

const char* to_string(AffinityKind k) { return k == AffinityKind::relu ? "relu" : "softmax"; }

AffinityKind affinity_kind_from_string(const std::string& s) {
    if (s == "relu") return AffinityKind::relu;
    if (s == "softmax") return AffinityKind::softmax;
    fail_usage("unknown affinity '" + s + "' (expected relu or softmax)");
}

void check_qk(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, const std::string& who) {
    if (Q.size() == 0 || K.size() == 0) fail_data(who + ": Q and K must be non-empty");
    if (Q.rows() != K.rows() || Q.cols() != K.cols())
        fail_data(who + ": Q is " + std::to_string(Q.rows()) + "x" + std::to_string(Q.cols()) +
                  " but K is " + std::to_string(K.rows()) + "x" + std::to_string(K.cols()) +
                  " (both must be N x d_h)");
    if (!Q.allFinite() || !K.allFinite()) fail_data(who + ": Q or K contains NaN or Inf");
}

Affinity affinity(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, const AffinityOptions& opt) {
    check_qk(Q, K, "affinity");
    if (!(opt.eps >= 0) || !std::isfinite(opt.eps)) fail_data("affinity: eps must be finite and >= 0");
    const double N = double(Q.rows()), d = double(Q.cols());
    check_allocation(8.0 * N * N, opt.max_bytes, "dense affinity (" + std::to_string(Q.rows()) + "^2)");
    Affinity a;
    a.kind = opt.kind;
    if (opt.kind == AffinityKind::relu) {
        detail::gemm(Q, false, K, true, a.A_hat, 1.0 / d);
        a.A_hat = a.A_hat.cwiseMax(0.0);
        a.frob_plus = a.A_hat.norm();
        a.A_hat /= (a.frob_plus + opt.eps);
        if (a.frob_plus + opt.eps == 0) a.A_hat.setZero();  // all scores <= 0 and eps = 0
    } else {
        detail::gemm(Q, false, K, true, a.A_hat, 1.0 / std::sqrt(d));
        for (Eigen::Index i = 0; i < a.A_hat.rows(); ++i) {
            const double m = a.A_hat.row(i).maxCoeff();
            a.A_hat.row(i) = (a.A_hat.row(i).array() - m).exp();
            a.A_hat.row(i) /= a.A_hat.row(i).sum();
        }
    }
    return a;
}

std::vector<Affinity> affinities(const std::vector<Eigen::MatrixXd>& Qs,
                                 const std::vector<Eigen::MatrixXd>& Ks, const AffinityOptions& opt) {
    if (Qs.size() != Ks.size())
        fail_data("affinities: " + std::to_string(Qs.size()) + " Q blocks but " +
                  std::to_string(Ks.size()) + " K blocks");
    std::vector<Affinity> out;
    out.reserve(Qs.size());
    for (size_t h = 0; h < Qs.size(); ++h) out.push_back(affinity(Qs[h], Ks[h], opt));
    return out;
}

void draw_family(const std::string& family, Eigen::Index N, Eigen::Index d, double mu,
                 std::uint64_t seed, Eigen::MatrixXd& Q, Eigen::MatrixXd& K) {
    if (N <= 0 || d <= 0) fail_data("draw_family: N and d_h must be positive");
    if (!std::isfinite(mu)) fail_data("draw_family: mu must be finite");
    Rng rng(seed);
    Q = rng.gaussian(N, d);
    K = rng.gaussian(N, d);
    if (family == "gaussian") return;
    auto direction = [&] {
        Eigen::VectorXd m = rng.gaussian(d, 1);
        return Eigen::VectorXd(m * (std::sqrt(double(d)) / m.norm()));
    };
    if (family == "shared-mean") {
        const Eigen::VectorXd m = direction();
        Q.rowwise() += mu * m.transpose();
        K.rowwise() += mu * m.transpose();
    } else if (family == "independent-means") {
        const Eigen::VectorXd mq = direction(), mk = direction();
        Q.rowwise() += mu * mq.transpose();
        K.rowwise() += mu * mk.transpose();
    } else {
        fail_usage("unknown family '" + family +
                   "' (expected gaussian, shared-mean or independent-means)");
    }
}

double cosine(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    const double na = a.norm(), nb = b.norm();
    if (na == 0 || nb == 0) return 0.0;
    return a.dot(b) / (na * nb);
}

}  // namespace attnspec
