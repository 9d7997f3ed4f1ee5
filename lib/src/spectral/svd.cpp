// Dense SVD backends, the whole-decomposition (Weyl) enclosure and kappa. The per-triplet
// refinement lives in svd_enclosure.cpp.
#include "attnspec/spectral/svd.hpp"

#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "attnspec/base/enum_names.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/interval_ops.hpp"
#include "attnspec/base/memory.hpp"
#include "attnspec/base/rounding.hpp"

namespace attnspec {

namespace {
constexpr EnumName<KappaConvention> kKappaConventionNames[] = {{KappaConvention::strict, "strict"},
                                                               {KappaConvention::nz, "nz"}};
// Parse name (the option's spelling) and report label (the backend that ran).
constexpr EnumName<SvdMethod> kSvdMethodNames[] = {{SvdMethod::auto_select, "auto", "auto"},
                                                   {SvdMethod::jacobi, "jacobi", "eigen-jacobi"},
                                                   {SvdMethod::bdc, "bdc", "eigen-bdc"},
                                                   {SvdMethod::gesdd, "gesdd", "lapack-dgesdd"},
                                                   {SvdMethod::gejsv, "gejsv", "lapack-dgejsv"}};
}  // namespace

const char* to_string(KappaConvention c) { return enum_name(c, kKappaConventionNames); }
KappaConvention kappa_convention_from_string(const std::string& s) {
    return enum_from_name(s, kKappaConventionNames, "kappa convention", "kappa_convention");
}

const char* to_string(SvdMethod m) { return enum_label(m, kSvdMethodNames); }
SvdMethod svd_method_from_string(const std::string& s) {
    return enum_from_name(s, kSvdMethodNames, "SVD method", "svd_method");
}

namespace {

void run_gesdd(const Eigen::Ref<const Eigen::MatrixXd>& M, bool values_only, SvdResult& out) {
    const lapack_int m = static_cast<lapack_int>(M.rows()), n = static_cast<lapack_int>(M.cols());
    const lapack_int r = std::min(m, n);
    Eigen::MatrixXd A = M;
    out.sigma.resize(r);
    lapack_int info;
    if (values_only) {
        info = LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'N', m, n, A.data(), m, out.sigma.data(), nullptr,
                              1, nullptr, 1);
    } else {
        out.U.resize(m, r);
        Eigen::MatrixXd Vt(r, n);
        info = LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'S', m, n, A.data(), m, out.sigma.data(),
                              out.U.data(), m, Vt.data(), r);
        out.V = Vt.transpose();
    }
    if (info != 0) fail_data("dgesdd failed (info = " + std::to_string(info) + ")");
}

// dgejsv needs m >= n: a wide M is handled as M^T with U and V swapped.
void run_gejsv(const Eigen::Ref<const Eigen::MatrixXd>& M0, bool values_only, SvdResult& out) {
    const bool wide = M0.rows() < M0.cols();
    Eigen::MatrixXd A = wide ? Eigen::MatrixXd(M0.transpose()) : Eigen::MatrixXd(M0);
    const lapack_int m = static_cast<lapack_int>(A.rows()), n = static_cast<lapack_int>(A.cols());
    Eigen::VectorXd sva(n);
    Eigen::MatrixXd U(values_only ? 1 : m, values_only ? 1 : n),
        V(values_only ? 1 : n, values_only ? 1 : n);
    // The _work interface with a generous work space: some LAPACKE releases size dgejsv's work
    // array too small for JOBU/JOBV = U/V (heap overflow). LAPACK's minimum is below this.
    const std::size_t mm = static_cast<std::size_t>(m), nn = static_cast<std::size_t>(n);
    std::vector<double> work(std::max<std::size_t>(7, 2 * (mm + nn) * (mm + nn) + 10 * (mm + nn)));
    std::vector<lapack_int> iwork(mm + 3 * nn + 3);
    const lapack_int info = LAPACKE_dgejsv_work(
        LAPACK_COL_MAJOR, 'C', values_only ? 'N' : 'U', values_only ? 'N' : 'V', 'R', 'N', 'N', m,
        n, A.data(), m, sva.data(), U.data(), values_only ? 1 : m, V.data(), values_only ? 1 : n,
        work.data(), static_cast<lapack_int>(work.size()), iwork.data());
    const double stat[2] = {work[0], work[1]};
    if (info != 0) fail_data("dgejsv failed (info = " + std::to_string(info) + ")");
    out.sigma = sva * (stat[0] / stat[1]);  // LAPACK returns scaled values: sigma = (s0/s1) sva
    if (values_only) return;
    out.U = wide ? V : U;
    out.V = wide ? U : V;
}

void weyl_enclosure(const Eigen::Ref<const Eigen::MatrixXd>& M, SvdResult& out) {
    const Eigen::Index r = out.sigma.size();
    const Eigen::MatrixXd I = Eigen::MatrixXd::Identity(r, r);
    out.residual = (M - out.U * out.sigma.asDiagonal() * out.V.transpose()).norm();
    out.eta_U = (out.U.transpose() * out.U - I).norm();
    out.eta_V = (out.V.transpose() * out.V - I).norm();
    // Rounding in evaluating the residual and the Gram matrices: |fl(x) - x| <= gamma_k * |terms|
    // with k = max(m, n, r) + 2 inner-product terms (Higham Thm 3.5), scaled by the norms involved.
    const double k = static_cast<double>(std::max({M.rows(), M.cols(), r}) + 2);
    const double gamma = gamma_n(k);
    out.pad = 2 * gamma * (M.norm() + out.sigma.norm() * (1 + out.eta_U) * (1 + out.eta_V));
    out.radius.resize(r);
    const double shrink = 1 - std::sqrt(std::max(0.0, (1 - out.eta_U) * (1 - out.eta_V)));
    const double grow = std::sqrt((1 + out.eta_U) * (1 + out.eta_V)) - 1;
    for (Eigen::Index i = 0; i < r; ++i)
        out.radius[i] = iv::up(out.residual + out.sigma[i] * std::max(shrink, grow) + out.pad);
    out.weyl_radius = out.radius;
    out.lo.resize(r);
    out.hi.resize(r);
    for (Eigen::Index i = 0; i < r; ++i) {
        const Interval w = iv::around(out.sigma[i], out.radius[i]);
        out.lo[i] = std::max(0.0, w.lo);  // singular values are >= 0
        out.hi[i] = w.hi;
    }
    out.basis.assign(r, "weyl");
    out.triplet_residual = Eigen::VectorXd::Constant(r, std::numeric_limits<double>::quiet_NaN());
}

// 2^e x for the magnitudes of an enclosure: exact unless the result leaves the normal range;
// then one step outward (`up`: towards +inf, else towards 0) covers the rounding.
double scale_outward(double x, int e, bool up) {
    const double y = std::ldexp(x, e);
    if (!std::isfinite(y) || std::abs(y) >= std::numeric_limits<double>::min()) return y;
    return up ? std::nextafter(y, std::numeric_limits<double>::infinity())
              : std::max(0.0, std::nextafter(y, 0.0));
}

// Undoes the scaling M -> 2^-e M of svd(): every quantity with the unit of sigma times 2^e.
void unscale(SvdResult& s, int e) {
    for (Eigen::Index i = 0; i < s.sigma.size(); ++i) {
        s.sigma[i] = std::ldexp(s.sigma[i], e);
        if (s.lo.size() > i) s.lo[i] = scale_outward(s.lo[i], e, false);
        if (s.hi.size() > i) s.hi[i] = scale_outward(s.hi[i], e, true);
        if (s.radius.size() > i) s.radius[i] = scale_outward(s.radius[i], e, true);
        if (s.weyl_radius.size() > i) s.weyl_radius[i] = scale_outward(s.weyl_radius[i], e, true);
        if (s.triplet_residual.size() > i)
            s.triplet_residual[i] = scale_outward(s.triplet_residual[i], e, true);
    }
    s.residual = scale_outward(s.residual, e, true);
    s.pad = scale_outward(s.pad, e, true);
}

// The largest |entry| lies outside [2^-kScaleExp, 2^kScaleExp]: svd() scales M by a power of two
// first, so that no product, square or residual of the SVD and its enclosure over- or underflows.
constexpr int kScaleExp = 256;

SvdResult svd_unscaled(const Eigen::Ref<const Eigen::MatrixXd>& M, const SvdOptions& opt,
                       const SvdBackend& backend);
void cpu_backend(const Eigen::Ref<const Eigen::MatrixXd>& M, const SvdOptions& opt, SvdResult& out);

}  // namespace

SvdResult svd(const Eigen::Ref<const Eigen::MatrixXd>& M, const SvdOptions& opt) {
    return svd_with(M, opt, [&opt](const Eigen::Ref<const Eigen::MatrixXd>& A, SvdResult& out) {
        cpu_backend(A, opt, out);
    });
}

SvdResult svd_with(const Eigen::Ref<const Eigen::MatrixXd>& M, const SvdOptions& opt,
                   const SvdBackend& backend) {
    if (M.size() == 0) fail_data("SVD of an empty matrix");
    if (!M.allFinite()) fail_data("SVD input contains NaN or Inf");
    const Eigen::Index m = M.rows(), n = M.cols(), r = std::min(m, n);
    // Work space of the SVD + Weyl check: ~ copies of M, U, V and r x r Gram matrices.
    check_allocation(8.0 * (3.0 * m * n + 2.0 * (m + n) * r + 2.0 * r * r), memory_limit_bytes(),
                     "dense SVD of a " + std::to_string(m) + "x" + std::to_string(n) + " matrix",
                     "max_bytes");
    const double amax = M.cwiseAbs().maxCoeff();
    if (amax == 0 || (amax <= std::ldexp(1.0, kScaleExp) && amax >= std::ldexp(1.0, -kScaleExp)))
        return svd_unscaled(M, opt, backend);
    // 2^-e M has its largest entry in [1, 2). Exact unless entries far below the largest fall
    // under the normal range: then the scaled matrix is not M's, and the enclosures would not be.
    const int e = std::ilogb(amax);
    const Eigen::MatrixXd S = M.unaryExpr([e](double x) { return std::ldexp(x, -e); });
    for (Eigen::Index j = 0; j < n; ++j)
        for (Eigen::Index i = 0; i < m; ++i)
            if (std::ldexp(S(i, j), e) != M(i, j))
                fail_data("SVD input spans more than the double range (largest |entry| " +
                          value_text(amax) + ", entry (" + std::to_string(i) + ", " +
                          std::to_string(j) + ") = " + value_text(M(i, j)) +
                          "): it cannot be scaled exactly");
    SvdResult out = svd_unscaled(S, opt, backend);
    const double scaled_max = out.sigma[0];
    unscale(out, e);
    if (std::isinf(out.sigma[0]) || (out.hi.size() && std::isinf(out.hi[0])))
        fail_data("sigma_max of the SVD input is about " + value_text(scaled_max) + " x 2^" +
                  std::to_string(e) + ", above the largest double " +
                  value_text(std::numeric_limits<double>::max()) + ": it cannot be represented");
    return out;
}

namespace {

void cpu_backend(const Eigen::Ref<const Eigen::MatrixXd>& M, const SvdOptions& opt,
                 SvdResult& out) {
    const Eigen::Index r = std::min(M.rows(), M.cols());
    SvdMethod method = opt.method;
    if (method == SvdMethod::auto_select)
        method =
            r <= 64 ? SvdMethod::jacobi : SvdMethod::gesdd;  // Jacobi: accurate, slow beyond ~64
    out.method = to_string(method);
    const int vec = opt.values_only ? 0 : (Eigen::ComputeThinU | Eigen::ComputeThinV);
    switch (method) {
        case SvdMethod::jacobi: {
            Eigen::JacobiSVD<Eigen::MatrixXd> s(M, vec);
            out.sigma = s.singularValues();
            if (!opt.values_only) out.U = s.matrixU(), out.V = s.matrixV();
            break;
        }
        case SvdMethod::bdc: {
            Eigen::BDCSVD<Eigen::MatrixXd> s(M, vec);
            out.sigma = s.singularValues();
            if (!opt.values_only) out.U = s.matrixU(), out.V = s.matrixV();
            break;
        }
        case SvdMethod::gesdd:
            run_gesdd(M, opt.values_only, out);
            break;
        case SvdMethod::gejsv:
            run_gejsv(M, opt.values_only, out);
            break;
        case SvdMethod::auto_select:
            break;
    }
}

SvdResult svd_unscaled(const Eigen::Ref<const Eigen::MatrixXd>& M, const SvdOptions& opt,
                       const SvdBackend& backend) {
    const Eigen::Index r = std::min(M.rows(), M.cols());
    SvdResult out;
    backend(M, out);
    if (out.sigma.size() != r || (!opt.values_only && (out.U.cols() != r || out.V.cols() != r)))
        throw Error(ExitCode::Internal,
                    "SVD backend " + out.method + " returned " + std::to_string(out.sigma.size()) +
                        " singular values (or factors of the wrong width) "
                        "for a " +
                        std::to_string(M.rows()) + "x" + std::to_string(M.cols()) + " matrix");
    if (opt.values_only) {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        out.radius = out.lo = out.hi = out.weyl_radius = out.triplet_residual =
            Eigen::VectorXd::Constant(r, nan);
        out.basis.assign(r, "none (values only)");
        out.residual = out.eta_U = out.eta_V = out.pad = nan;
        return out;
    }
    weyl_enclosure(M, out);
    if (opt.refine) refine_enclosures(M, out, opt);
    return out;
}

}  // namespace

SvdResult svd(const Eigen::Ref<const Eigen::MatrixXd>& M, SvdMethod method) {
    SvdOptions o;
    o.method = method;
    return svd(M, o);
}

Interval divide(Interval a, Interval b) {
    const double inf = std::numeric_limits<double>::infinity();
    Interval q;
    q.lo = b.hi <= 0 ? inf : iv::down(std::max(0.0, a.lo) / b.hi);
    q.hi = b.lo <= 0 ? inf : iv::up(a.hi / b.lo);
    return q;
}

Eigen::Index numerical_rank(const Eigen::VectorXd& sigma, double rtol) {
    Eigen::Index rank = 0;
    for (Eigen::Index i = 0; i < sigma.size(); ++i)
        if (sigma[i] > rtol * sigma[0]) rank = i + 1;
    return rank;
}

Eigen::Index kappa_divisor_index(KappaConvention c, Eigen::Index rank, Eigen::Index full_rank) {
    return c == KappaConvention::nz ? std::max<Eigen::Index>(rank - 1, 0) : full_rank - 1;
}

Kappa kappa_from_extremes(const KappaInputs& in, KappaConvention c, const std::string& method) {
    Kappa k;
    k.convention = c;
    k.method = method;
    k.rtol = c == KappaConvention::nz ? in.rtol : 0.0;
    k.sigma_max = in.sigma_max;
    k.rank = in.rank;
    const double inf = std::numeric_limits<double>::infinity();
    if (in.sigma_max == 0) {
        k.value = inf;
        k.enclosure = {inf, inf};
        return k;
    }
    k.sigma_min = in.sigma_min;
    // strict: a numerically rank-deficient matrix has kappa = inf by convention (docs/MATH.md §1)
    if (c == KappaConvention::strict && k.rank < in.full_rank) {
        k.value = inf;
        k.enclosure = divide(in.max_enclosure, in.min_enclosure);
        k.enclosure.hi = inf;
        return k;
    }
    k.value = k.sigma_min > 0 ? in.sigma_max / k.sigma_min : inf;
    k.enclosure = divide(in.max_enclosure, in.min_enclosure);
    return k;
}

Kappa kappa(const SvdResult& s, Eigen::Index rows, Eigen::Index cols, KappaConvention c,
            double rtol) {
    const double eps = std::numeric_limits<double>::epsilon();
    const double default_rtol = static_cast<double>(std::max(rows, cols)) * eps;
    if (!(rtol < 0) && !(rtol >= 0 && rtol < 1))
        fail_data("kappa: rtol = " + value_text(rtol) + " must lie in [0, 1) (< 0: the default)",
                  "rtol");
    KappaInputs in;
    in.rtol = rtol < 0 ? default_rtol : rtol;
    in.full_rank = s.sigma.size();
    if (in.full_rank == 0) fail_data("kappa of an empty matrix");
    in.sigma_max = s.sigma[0];
    in.rank = numerical_rank(s.sigma, in.rtol);
    if (in.sigma_max != 0) {  // the enclosures matter only then
        const Eigen::Index j = kappa_divisor_index(c, in.rank, in.full_rank);
        in.sigma_min = s.sigma[j];
        in.max_enclosure = s.enclosure(0);
        in.min_enclosure = s.enclosure(j);
    }
    return kappa_from_extremes(in, c, s.method);
}

Kappa kappa(const Eigen::MatrixXd& M, KappaConvention c, double rtol) {
    return kappa(svd(M), M.rows(), M.cols(), c, rtol);
}

std::string Kappa::describe() const {
    char buf[240], rt[64] = "";
    if (convention == KappaConvention::nz) std::snprintf(rt, sizeof rt, ", rtol=%.3g", rtol);
    const std::string rtol_text = rt;
    std::snprintf(buf, sizeof buf, "kappa_%s = %.10g in [%.10g, %.10g] (%s%s)",
                  to_string(convention), value, enclosure.lo, enclosure.hi, method.c_str(),
                  rtol_text.c_str());
    return buf;
}

}  // namespace attnspec
