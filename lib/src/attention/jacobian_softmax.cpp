// The softmax Jacobian Lambda = d vec S / d vec L: per-row blocks Diag(p) - p p^T, their action,
// the dense form for tests, and their eigenvalues (= singular values) by the secular equation.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "attnspec/attention/jacobian.hpp"
#include "attnspec/base/errors.hpp"

namespace attnspec {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

SoftmaxJacobian::SoftmaxJacobian(MatrixXd S) : S_(std::move(S)) {
    if (S_.rows() == 0 || S_.rows() != S_.cols())
        fail_data("softmax Jacobian: S must be square and non-empty, got " +
                  std::to_string(S_.rows()) + "x" + std::to_string(S_.cols()));
    if (!S_.allFinite()) fail_data("softmax Jacobian: S contains NaN or Inf");
}

MatrixXd SoftmaxJacobian::block(Index i) const {
    const VectorXd p = S_.row(i).transpose();
    MatrixXd B = -p * p.transpose();
    B.diagonal() += p;
    return B;
}

MatrixXd SoftmaxJacobian::apply(const MatrixXd& dL) const {
    if (dL.rows() != N() || dL.cols() != N()) fail_data("softmax Jacobian: dL must be N x N");
    MatrixXd dS = S_.cwiseProduct(dL);
    const VectorXd r = dS.rowwise().sum();
    dS -= r.asDiagonal() * S_;
    return dS;
}

MatrixXd SoftmaxJacobian::dense() const {
    const Index N = S_.rows();
    if (N > 64) fail_data("softmax Jacobian: dense form refused for N > 64 (N^2 x N^2)");
    // Lambda[(i + N j), (i' + N k)] = delta_ii' S_ij (delta_jk - S_ik)
    MatrixXd Lam = MatrixXd::Zero(N * N, N * N);
    for (Index i = 0; i < N; ++i)
        for (Index j = 0; j < N; ++j)
            for (Index k = 0; k < N; ++k)
                Lam(i + N * j, i + N * k) = S_(i, j) * ((j == k ? 1.0 : 0.0) - S_(i, k));
    return Lam;
}

namespace {

// For a probability vector p, det(Diag(p) - p p^T - lambda I) = prod_j (p_j - lambda) *
// (1 - sum_j p_j^2/(p_j - lambda)), and 1 - sum_j p_j^2/(p_j - lambda) = -lambda g(lambda) with
// g(lambda) = sum_j p_j/(p_j - lambda) when sum_j p_j = 1. So the non-zero eigenvalues are the
// roots of g, which does not involve the constraint sum p = 1 (its roots scale with p): relative
// perturbations of p give relative perturbations of the roots, down to the tiniest.
// Root of g in (v[k], v[k+1]) (g increases from -inf to +inf there), v the distinct values with
// merged weights w = (multiplicity) v. Solved in the offset t = lambda - origin from the nearer
// pole, the pole differences formed once, by bisection on |t| (geometric while the bracket
// spans > 4x) until no representable midpoint remains.
double secular_root(const std::vector<double>& v, const std::vector<double>& w, size_t k) {
    const size_t G = v.size();
    auto g_at = [&](double origin, double t) {
        double sum = 0;
        for (size_t j = 0; j < G; ++j) sum += w[j] / ((v[j] - origin) - t);
        return sum;
    };
    const double mid = 0.5 * (v[k] + v[k + 1]);
    const bool upper = g_at(v[k], mid - v[k]) < 0;  // root in (mid, v[k+1]): measure from v[k+1]
    const double origin = upper ? v[k + 1] : v[k];
    const double dir = upper ? -1.0 : 1.0;
    double lo = 0, hi = std::fabs(mid - origin);
    for (int it = 0; it < 400; ++it) {
        const double m =
            lo == 0 ? hi * 0x1p-8 : (hi > 4 * lo ? std::sqrt(lo) * std::sqrt(hi) : 0.5 * (lo + hi));
        if (!(m > lo && m < hi)) break;
        const double gm = g_at(origin, dir * m);
        // lower pole: g < 0 between the pole and the root; upper pole: g > 0 there.
        const bool below = upper ? gm > 0 : gm < 0;
        (below ? lo : hi) = m;
    }
    return origin + dir * 0.5 * (lo + hi);
}

}  // namespace

VectorXd softmax_block_eigenvalues(const VectorXd& p_in) {
    const Index N = p_in.size();
    if (N == 0) fail_data("softmax block: empty probability vector");
    if (!p_in.allFinite() || p_in.minCoeff() < 0)
        fail_data("softmax block: p must be finite and >= 0");
    const double total = p_in.sum();
    if (!(total > 0)) fail_data("softmax block: p sums to 0");
    std::vector<double> q;
    Index zeros = 0;
    for (Index j = 0; j < N; ++j) {
        if (p_in[j] == 0)
            ++zeros;
        else
            q.push_back(p_in[j] / total);  // an exact probability vector up to N u relative
    }
    std::sort(q.begin(), q.end());
    std::vector<double> v, w,
        out(static_cast<size_t>(zeros) + 1, 0.0);  // Lambda 1 = 0; e_j for p_j = 0
    for (size_t j = 0; j < q.size();) {  // merge ties: eigenvalue v (m - 1 times), pole weight m v
        size_t m = 1;
        while (j + m < q.size() && q[j + m] == q[j]) ++m;
        v.push_back(q[j]);
        w.push_back(static_cast<double>(m) * q[j]);
        out.insert(out.end(), m - 1, q[j]);
        j += m;
    }
    for (size_t k = 0; k + 1 < v.size(); ++k) out.push_back(secular_root(v, w, k));
    std::sort(out.begin(), out.end());
    return Eigen::Map<const VectorXd>(out.data(), static_cast<Index>(out.size()));
}

VectorXd softmax_jacobian_singular_values(const MatrixXd& S, LambdaEigenMethod method) {
    const SoftmaxJacobian Lam(S);
    const Index N = Lam.N();
    VectorXd sv(N * N);
    Eigen::SelfAdjointEigenSolver<MatrixXd> es;
    for (Index i = 0; i < N; ++i) {
        if (method == LambdaEigenMethod::secular) {
            sv.segment(i * N, N) = softmax_block_eigenvalues(S.row(i).transpose());
        } else {
            es.compute(Lam.block(i), Eigen::EigenvaluesOnly);
            sv.segment(i * N, N) = es.eigenvalues().cwiseAbs();  // symmetric: sigma = |lambda|
        }
    }
    std::sort(sv.data(), sv.data() + sv.size(), std::greater<double>());
    return sv;
}

}  // namespace attnspec
