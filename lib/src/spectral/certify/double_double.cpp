// Certified lower bound on sigma_min(J) in double-double (proofs/spectral_enclosure.md §8): the
// Gram of the computed rows and a left-looking Cholesky of G - tau I, both accumulated by
// dd_accumulate.hpp with its proved bound; lambda_min(R R^T) >= tau - rho(B), B an entrywise bound
// of the Gram error and of the factor's residual, rho by Collatz-Wielandt.
#include "attnspec/spectral/certify/double_double.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/base/dd_accumulate.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/interval_ops.hpp"
#include "attnspec/base/rounding.hpp"
#include "dd_internal.hpp"

namespace attnspec {

using namespace ddcert;  // this module's own internals (dd_internal.hpp)

double dd_certify_bytes(Eigen::Index n, Eigen::Index m) {
    const double nd = static_cast<double>(n), md = static_cast<double>(m);
    return 8.0 * (nd * md + 5 * nd * nd + 2 * md);
}

double dd_certify_updates(Eigen::Index n, Eigen::Index m) {
    const double nd = static_cast<double>(n), md = static_cast<double>(m);
    return nd * nd * md / 2 + nd * nd * nd / 6;
}

namespace {

const char* const kMethod =
    "double-double Gram and Cholesky of G - tau I (left-looking, residual of every entry on its "
    "accumulation chain), lambda_min >= tau - rho(B) (Collatz-Wielandt); kernel ";

}  // namespace

DdCertifiedMin certify_lambda_min_dd(const Eigen::MatrixXd& Rt, double lambda_est,
                                     const Eigen::VectorXd& u_est, const DdCertifyOptions& opt) {
    const auto t0 = std::chrono::steady_clock::now();
    const Eigen::Index n = Rt.cols(), m = Rt.rows();
    if (n == 0 || m == 0) fail_data("certify (double-double): empty rows");
    if (!Rt.allFinite()) fail_data("certify (double-double): rows of J are not finite");
    check_allocation(8.0 * 5 * static_cast<double>(n) * static_cast<double>(n), opt.max_bytes,
                     "certify (double-double): Gram, factor and bound (" + std::to_string(n) +
                         " x " + std::to_string(n) + ")",
                     "max_bytes");
    const int threads = opt.threads > 0 ? opt.threads : std::max(1, blas_threads());
    DdCertifiedMin r;
    r.kernel = dd::kernel_name();
    r.method = kMethod + r.kernel;
    if (!(lambda_est > 0) && u_est.size() != n) {
        r.notes.emplace_back("certify (double-double): no positive estimate of lambda_min");
        return r;
    }
    const DdGram g = dd_gram(Rt, threads);
    r.seconds_gram = seconds_since(t0);
    const CoreInput in{
        g,    u_est, opt, threads, [&Rt](const Eigen::VectorXd& x) { return dd_rayleigh(Rt, x); },
        false};
    return certify_core(in, lambda_est, std::move(r), t0);
}

DdCertifiedMin certify_gram_dd(const DdGram& g, double lambda_est, const Eigen::VectorXd& u_est,
                               const DdCertifyOptions& opt) {
    const auto t0 = std::chrono::steady_clock::now();
    const Eigen::Index n = g.n;
    const auto nn = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
    if (n <= 0) fail_data("certify (double-double): empty Gram");
    if (g.hi.size() != nn || g.lo.size() != nn)
        fail_data("certify (double-double): the Gram's pairs are not " + std::to_string(n) + " x " +
                  std::to_string(n));
    if (!(g.rho >= 0) || !std::isfinite(g.rho))
        fail_data("certify (double-double): the Gram's error bound is not a finite number >= 0");
    for (Eigen::Index i = 0; i < n; ++i)
        for (Eigen::Index j = 0; j <= i; ++j)
            if (!std::isfinite(g.hi[idx(i, j, n)]) || !std::isfinite(g.lo[idx(i, j, n)]))
                fail_data("certify (double-double): the Gram is not finite");
    check_allocation(8.0 * 3 * static_cast<double>(n) * static_cast<double>(n), opt.max_bytes,
                     "certify (double-double): factor and bound (" + std::to_string(n) + " x " +
                         std::to_string(n) + ")",
                     "max_bytes");
    const int threads = opt.threads > 0 ? opt.threads : std::max(1, blas_threads());
    DdCertifiedMin r;
    r.kernel = dd::kernel_name();
    r.method = kMethod + r.kernel + "; Gram from " + (g.source.empty() ? "the caller" : g.source);
    if (!(lambda_est > 0) && u_est.size() != n) {
        r.notes.emplace_back("certify (double-double): no positive estimate of lambda_min");
        return r;
    }
    const CoreInput in{
        g,   u_est, opt, threads, [&g](const Eigen::VectorXd& x) { return gram_rayleigh(g, x); },
        true};
    r = certify_core(in, lambda_est, std::move(r), t0);
    // the upper end: the final vector's Rayleigh quotient (its shift's reference), proved
    const Eigen::VectorXd& uf = r.u.size() == n ? r.u : u_est;
    if (r.certified && uf.size() == n && uf.allFinite() && uf.squaredNorm() > 0) {
        r.lambda_hi =
            std::fmin(r.lambda_hi, gram_rayleigh_upper(g, uf));  // fmin skips an unset NaN
        r.sigma_hi = iv::up(iv::up(std::sqrt(r.lambda_hi)) + opt.product_abs_error);
        r.notes.push_back(
            fmt("certify (double-double): lambda_min <= %.12g (the vector's Rayleigh quotient on "
                "the Gram, its rounding and rho), sigma_min <= %.12g",
                r.lambda_hi, r.sigma_hi));
    }
    return r;
}

DdCertifiedMin certified_sigma_min_dd(const LinearOperator& J, double sigma_est,
                                      const Eigen::VectorXd& u_est, const DdCertifyOptions& opt) {
    const auto t0 = std::chrono::steady_clock::now();
    const Eigen::Index n = J.rows(), m = J.cols();
    if (n == 0 || m == 0) fail_data("certified_sigma_min_dd: empty operator");
    if (n > m) fail_data("certified_sigma_min_dd: J must be wide (rows <= cols); pass J^T");
    check_allocation(dd_certify_bytes(n, m), opt.max_bytes,
                     "certify (double-double): rows of J, Gram, factor and bound (" +
                         std::to_string(n) + " x " + std::to_string(m) + ")",
                     "max_bytes");
    Eigen::MatrixXd Rt(m, n);
    {
        Eigen::VectorXd e = Eigen::VectorXd::Zero(n);
        for (Eigen::Index i = 0; i < n; ++i) {
            e[i] = 1;
            J.apply_transpose(e.data(), Rt.col(i).data());
            e[i] = 0;
        }
    }
    const double t_rows = seconds_since(t0);
    DdCertifiedMin r = certify_lambda_min_dd(Rt, sigma_est * sigma_est, u_est, opt);
    r.seconds_rows = t_rows;
    r.seconds += t_rows;
    return r;
}

}  // namespace attnspec
