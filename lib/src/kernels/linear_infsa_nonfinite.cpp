// check-kernel linear-infsa on inputs holding NaN or Inf (kernels/infsa_nonfinite.hpp): the
// expected pattern, and the check of a kernel's output against it and, on the elements expected
// finite (and the `either` ones left finite), against the reference.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attnspec/kernels/infsa_nonfinite.hpp"
#include "attnspec/kernels/pure_infsa_check.hpp"
#include "check_compare.hpp"
#include "linear_infsa_reference.hpp"
#include "nonfinite_check.hpp"

namespace attnspec::kernels {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// q_bar of one head (its N_q rows of q, all finite), in float64.
std::vector<double> pooled_query(const double* Q, long nq, long d, double eps) {
    const double c = 1 / std::sqrt(static_cast<double>(d));
    std::vector<double> acc(static_cast<size_t>(d), 0.0);
    double E = 0;
    for (long i = 0; i < nq; ++i) {
        double e2 = 0;
        for (long l = 0; l < d; ++l) e2 += (c * Q[i * d + l]) * (c * Q[i * d + l]);
        const double e = std::sqrt(e2);
        E += e;
        for (long l = 0; l < d; ++l) acc[static_cast<size_t>(l)] += e * c * Q[i * d + l];
    }
    for (double& x : acc) x /= E + eps;
    return acc;
}

}  // namespace

std::vector<Expect> expected_linear_infsa_nonfinite(const AttentionProblem& p,
                                                    const LinearInfsaParams& par) {
    const ProblemShape sh = problem_shape(p);
    const long d = sh.d, dv = sh.dv;
    const auto finite = [](double x) { return std::isfinite(x); };
    std::vector<Expect> x(static_cast<size_t>(sh.B * sh.H * sh.Nq * dv), Expect::finite);
    std::vector<Expect> cols(static_cast<size_t>(dv));
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h) {
            const long qh = (b * sh.H + h) * sh.Nq, kv = (b * sh.H_kv + sh.kv_head(h)) * sh.Nk;
            const double* Q = p.q.values.data() + qh * d;
            const double* K = p.k.values.data() + kv * d;
            const double* V = p.v.values.data() + kv * dv;
            std::fill(cols.begin(), cols.end(), Expect::finite);
            const auto raise = [&](long c, Expect e) {
                detail::raise_expect(cols[static_cast<size_t>(c)], e);
            };
            if (!std::all_of(Q, Q + sh.Nq * d, finite)) {
                std::fill(cols.begin(), cols.end(), Expect::zero_or_nonfinite);
            } else {
                const std::vector<double> qb = pooled_query(Q, sh.Nq, d, par.eps);
                for (long j = 0; j < sh.Nk; ++j) {
                    double dot = 0;
                    for (long l = 0; l < d; ++l) dot += qb[static_cast<size_t>(l)] * K[j * d + l];
                    const double xj = dot / std::sqrt(static_cast<double>(d));
                    const Expect all = xj == kInf       ? Expect::nonfinite
                                       : std::isnan(xj) ? Expect::either
                                                        : Expect::finite;
                    for (long c = 0; c < dv; ++c) {
                        raise(c, all);
                        if (!std::isfinite(V[j * dv + c]))
                            raise(c, xj > 0 ? Expect::nonfinite : Expect::either);
                    }
                }
            }
            for (long i = 0; i < sh.Nq; ++i)
                std::copy(cols.begin(), cols.end(), x.begin() + (qh + i) * dv);
        }
    return x;
}

std::vector<Expect> expected_pure_infsa_nonfinite(const AttentionProblem& p,
                                                  const LinearInfsaParams& par) {
    detail::check_infsa_params(p, par);
    const ProblemShape sh = problem_shape(p);
    const long d = sh.d, dv = sh.dv, nq = sh.Nq, nk = sh.Nk;
    std::vector<Expect> x(static_cast<size_t>(sh.B * sh.H * nq * dv), Expect::finite);
    std::vector<double> a(static_cast<size_t>(nq * nk));
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h) {
            const long qh = (b * sh.H + h) * nq, kv = (b * sh.H_kv + sh.kv_head(h)) * nk;
            const double* Q = p.q.values.data() + qh * d;
            const double* K = p.k.values.data() + kv * d;
            const double* V = p.v.values.data() + kv * dv;
            bool inf = false, nan = false;
            for (long i = 0; i < nq; ++i)
                for (long j = 0; j < nk; ++j) {
                    double dot = 0;
                    for (long l = 0; l < d; ++l) dot += Q[i * d + l] * K[j * d + l];
                    const double y = dot / static_cast<double>(d);
                    a[static_cast<size_t>(i * nk + j)] = y;
                    inf |= y == kInf, nan |= std::isnan(y);
                }
            for (long i = 0; i < nq; ++i) {
                Expect* row = x.data() + (qh + i) * dv;
                const double* ai = a.data() + i * nk;
                const bool row_inf = std::any_of(ai, ai + nk, [](double y) { return y == kInf; });
                for (long c = 0; c < dv; ++c) {
                    if (row_inf) {  // inf / inf in that entry of A^
                        row[c] = Expect::nonfinite;
                        continue;
                    }
                    if (inf) {  // every finite entry of A^ is x / inf = 0; NaN entries: all NaN
                        row[c] = Expect::zero_or_nonfinite;
                        continue;
                    }
                    if (nan)
                        detail::raise_expect(row[c], Expect::either);  // ||A+||_F is NaN or finite
                    for (long j = 0; j < nk; ++j)
                        if (!std::isfinite(V[j * dv + c]))
                            detail::raise_expect(row[c],
                                                 ai[j] > 0 ? Expect::nonfinite : Expect::either);
                }
            }
        }
    return x;
}

namespace detail {

namespace {

// p with every row of q and of k holding NaN/Inf set to zeros and each NaN/Inf of v set to 0.
AttentionProblem cleaned_infsa(const AttentionProblem& p) {
    AttentionProblem c = p;
    for (Array* a : {&c.q, &c.k}) {
        const long d = static_cast<long>(a->shape.back());
        for (std::size_t j = 0; j < a->values.size(); j += static_cast<std::size_t>(d)) {
            const auto row = a->values.begin() + static_cast<std::ptrdiff_t>(j);
            if (!std::all_of(row, row + d, [](double x) { return std::isfinite(x); }))
                std::fill(row, row + d, 0.0);
        }
    }
    c.v = sanitized(p.v);
    return c;
}

}  // namespace

KernelCheckResult check_infsa_cleaned(const AttentionProblem& p, const LinearInfsaParams& par,
                                      const Array& o, const std::vector<Expect>& x,
                                      const KernelCheckOptions& opt, InfsaReference reference,
                                      InfsaCheck check) {
    const AttentionProblem clean = cleaned_infsa(p);
    const Array ref = reference(clean, par);
    KernelCheckResult r = check(clean, par, substituted(o, x, ref, true), opt);
    account(o, x, opt, "o", r);
    return r;
}

KernelCheckResult check_linear_infsa_nonfinite(const AttentionProblem& p,
                                               const LinearInfsaParams& par, const Array& o,
                                               const KernelCheckOptions& opt) {
    check_infsa_params(p, par);
    check_shape(o, problem_shape(p).out_shape(), "o");
    return check_infsa_cleaned(p, par, o, expected_linear_infsa_nonfinite(p, par), opt,
                               reference_linear_infsa, check_linear_infsa);
}

KernelCheckResult check_pure_infsa_nonfinite(const AttentionProblem& p,
                                             const LinearInfsaParams& par, const Array& o,
                                             const KernelCheckOptions& opt) {
    check_infsa_params(p, par);
    check_shape(o, problem_shape(p).out_shape(), "o");
    return check_infsa_cleaned(p, par, o, expected_pure_infsa_nonfinite(p, par), opt,
                               reference_pure_infsa, check_pure_infsa);
}

}  // namespace detail
}  // namespace attnspec::kernels
