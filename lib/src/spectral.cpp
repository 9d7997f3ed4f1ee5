#include "attnspec/spectral.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "attnspec/errors.hpp"

namespace attnspec {

const char* to_string(KappaConvention c) { return c == KappaConvention::strict ? "strict" : "nz"; }
const char* to_string(SvdMethod m) {
    switch (m) {
        case SvdMethod::jacobi: return "eigen-jacobi";
        case SvdMethod::bdc: return "eigen-bdc";
        case SvdMethod::auto_select: return "auto";
    }
    return "?";
}

SvdResult svd(const Eigen::MatrixXd& M, SvdMethod method) {
    if (M.size() == 0) fail_data("SVD of an empty matrix");
    if (!M.allFinite()) fail_data("SVD input contains NaN or Inf");
    const Eigen::Index m = M.rows(), n = M.cols(), r = std::min(m, n);
    if (method == SvdMethod::auto_select)
        method = r <= 64 ? SvdMethod::jacobi : SvdMethod::bdc;  // Jacobi: accurate, slow beyond ~64
    SvdResult out;
    out.method = to_string(method);
    if (method == SvdMethod::jacobi) {
        Eigen::JacobiSVD<Eigen::MatrixXd> s(M, Eigen::ComputeThinU | Eigen::ComputeThinV);
        out.sigma = s.singularValues();
        out.U = s.matrixU();
        out.V = s.matrixV();
    } else {
        Eigen::BDCSVD<Eigen::MatrixXd> s(M, Eigen::ComputeThinU | Eigen::ComputeThinV);
        out.sigma = s.singularValues();
        out.U = s.matrixU();
        out.V = s.matrixV();
    }
    const double u = std::numeric_limits<double>::epsilon() / 2;
    const Eigen::MatrixXd I = Eigen::MatrixXd::Identity(r, r);
    out.residual = (M - out.U * out.sigma.asDiagonal() * out.V.transpose()).norm();
    out.eta_U = (out.U.transpose() * out.U - I).norm();
    out.eta_V = (out.V.transpose() * out.V - I).norm();
    // Rounding in evaluating the residual and the Gram matrices: |fl(x) - x| <= gamma_k * |terms|
    // with k = r + 2 inner-product terms (Higham Thm 3.5); scale by the Frobenius norms involved.
    const double k = static_cast<double>(r + 2);
    const double gamma = k * u / (1 - k * u);
    out.pad = 2 * gamma * (M.norm() + out.sigma.norm() * (1 + out.eta_U) * (1 + out.eta_V));
    out.radius.resize(r);
    const double shrink = 1 - std::sqrt(std::max(0.0, (1 - out.eta_U) * (1 - out.eta_V)));
    const double grow = std::sqrt((1 + out.eta_U) * (1 + out.eta_V)) - 1;
    for (Eigen::Index i = 0; i < r; ++i)
        out.radius[i] = out.residual + out.sigma[i] * std::max(shrink, grow) + out.pad;
    return out;
}

Interval divide(Interval a, Interval b) {
    const double inf = std::numeric_limits<double>::infinity();
    Interval q;
    q.lo = b.hi <= 0 ? inf : std::max(0.0, a.lo) / b.hi;
    q.hi = b.lo <= 0 ? inf : a.hi / b.lo;
    return q;
}

Kappa kappa(const SvdResult& s, Eigen::Index rows, Eigen::Index cols, KappaConvention c,
            double rtol) {
    Kappa k;
    k.convention = c;
    k.method = s.method;
    const double eps = std::numeric_limits<double>::epsilon();
    const double default_rtol = static_cast<double>(std::max(rows, cols)) * eps;
    const double t = rtol < 0 ? default_rtol : rtol;
    k.rtol = c == KappaConvention::nz ? t : 0.0;
    const Eigen::Index r = s.sigma.size();
    k.sigma_max = s.sigma[0];
    k.rank = 0;
    for (Eigen::Index i = 0; i < r; ++i)
        if (s.sigma[i] > t * s.sigma[0]) k.rank = i + 1;
    const double inf = std::numeric_limits<double>::infinity();
    if (s.sigma[0] == 0) {
        k.value = inf;
        k.enclosure = {inf, inf};
        return k;
    }
    Eigen::Index j = r - 1;
    if (c == KappaConvention::nz) j = std::max<Eigen::Index>(k.rank - 1, 0);
    k.sigma_min = s.sigma[j];
    // strict: a numerically rank-deficient matrix has kappa = inf by convention (MATH.md §1)
    if (c == KappaConvention::strict && k.rank < r) {
        k.value = inf;
        k.enclosure = divide(s.enclosure(0), s.enclosure(j));
        k.enclosure.hi = inf;
        return k;
    }
    k.value = k.sigma_min > 0 ? s.sigma[0] / k.sigma_min : inf;
    k.enclosure = divide(s.enclosure(0), s.enclosure(j));
    return k;
}

Kappa kappa(const Eigen::MatrixXd& M, KappaConvention c, double rtol) {
    return kappa(svd(M), M.rows(), M.cols(), c, rtol);
}

std::string Kappa::describe() const {
    char buf[200];
    std::snprintf(buf, sizeof buf, "kappa_%s = %.6g in [%.6g, %.6g] (%s%s)", to_string(convention),
                  value, enclosure.lo, enclosure.hi, method.c_str(),
                  convention == KappaConvention::nz ? (", rtol=" + std::to_string(rtol)).c_str()
                                                    : "");
    return buf;
}

}  // namespace attnspec
