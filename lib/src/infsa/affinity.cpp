// Affinities (ReLU/Frobenius and softmax) and the shared BLAS helper of lib/src/infsa.
#include "attnspec/infsa/affinity.hpp"

#include <cblas.h>

#include <cmath>

#include "attnspec/base/enum_names.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/memory.hpp"
#include "infsa_internal.hpp"

namespace attnspec {

namespace detail {

void gemm(const Eigen::MatrixXd& A, bool ta, const Eigen::MatrixXd& B, bool tb, Eigen::MatrixXd& C,
          double alpha, double beta) {
    const Eigen::Index m = ta ? A.cols() : A.rows(), k = ta ? A.rows() : A.cols();
    const Eigen::Index n = tb ? B.rows() : B.cols();
    if ((tb ? B.cols() : B.rows()) != k)
        throw Error(ExitCode::Internal, "gemm: inner dimensions differ");
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

namespace {
constexpr EnumName<AffinityKind> kAffinityNames[] = {{AffinityKind::relu, "relu"},
                                                     {AffinityKind::softmax, "softmax"}};
}  // namespace

const char* to_string(AffinityKind k) { return enum_name(k, kAffinityNames); }

AffinityKind affinity_kind_from_string(const std::string& s) {
    return enum_from_name(s, kAffinityNames, "affinity", "affinity");
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
    detail::check_eps(opt.eps);
    const double N = double(Q.rows()), d = double(Q.cols());
    check_allocation(8.0 * N * N, opt.max_bytes > 0 ? opt.max_bytes : memory_limit_bytes(),
                     "dense affinity (" + std::to_string(Q.rows()) + "^2)", "max_bytes");
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
                                 const std::vector<Eigen::MatrixXd>& Ks,
                                 const AffinityOptions& opt) {
    if (Qs.size() != Ks.size())
        fail_data("affinities: " + std::to_string(Qs.size()) + " Q blocks but " +
                  std::to_string(Ks.size()) + " K blocks");
    std::vector<Affinity> out;
    out.reserve(Qs.size());
    for (size_t h = 0; h < Qs.size(); ++h) out.push_back(affinity(Qs[h], Ks[h], opt));
    return out;
}

}  // namespace attnspec
