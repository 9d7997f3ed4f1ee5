// check-kernel pure-infsa: the float64 reference of gamma ReLU(Q K^T / d) / (||.||_F + eps) V
// streamed by query rows, its rounding bound (proofs/kernel_tolerance.md, "Pure InfSA",
// (P1)-(P5)), the plain kernel at a declared precision and the verdict
// (kernels/pure_infsa_check.hpp).
#include "attnspec/kernels/pure_infsa_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnspec/base/rounding.hpp"
#include "attnspec/kernels/derivative_nonfinite.hpp"
#include "check_compare.hpp"
#include "linear_infsa_reference.hpp"
#include "nonfinite_check.hpp"

namespace attnspec::kernels {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One head's reference (unnormalised rows n = A+ V, F^2) and the row sums the bounds need, per
// query row i and column c (row-major n_q x d_v): Σ_j a_ij |v_jc|, Σ_j A_ij |v_jc| (A_ij the
// absolute logit), and Σ_j ea_ij |v_jc| for the kernel's and the reference's models (P1).
struct Head {
    std::vector<double> n, sav, sAv, seK, seR, av;
    double F2 = 0, EF2K = 0, EF2R = 0;
};

void stream(const detail::HeadInput& in, const RoundingModel& K, const RoundingModel& R, Head& h) {
    const long nq = in.nq, nk = in.nk, d = in.d, dv = in.dv;
    const auto size = static_cast<size_t>(nq * dv);
    for (auto* v : {&h.n, &h.sav, &h.sAv, &h.seK, &h.seR}) v->assign(size, 0.0);
    h.av.assign(static_cast<size_t>(dv), 0.0);
    for (long j = 0; j < nk; ++j)
        for (long c = 0; c < dv; ++c) h.av[c] += std::fabs(in.V[j * dv + c]);
    const double inv_d = 1.0 / static_cast<double>(d);
    for (long i = 0; i < nq; ++i) {
        const double* q = in.Q + i * d;
        double* n = h.n.data() + i * dv;
        for (long j = 0; j < nk; ++j) {
            const double* k = in.K + j * d;
            const double* v = in.V + j * dv;
            double x = 0, A = 0;
            for (long l = 0; l < d; ++l) x += q[l] * k[l], A += std::fabs(q[l] * k[l]);
            const double a = std::max(0.0, x * inv_d);
            A *= inv_d;
            const double eK = detail::entry_error(K, A, a, d), eR = detail::entry_error(R, A, a, d);
            h.F2 += a * a, h.EF2K += eK * eK, h.EF2R += eR * eR;
            for (long c = 0; c < dv; ++c) {
                const double av = std::fabs(v[c]);
                n[c] += a * v[c], h.sav[i * dv + c] += a * av, h.sAv[i * dv + c] += A * av;
                h.seK[i * dv + c] += eK * av, h.seR[i * dv + c] += eR * av;
            }
        }
    }
}

// (P2)-(P4) for model M: the bound on |o^_ic - o_ic| before the output's storage, per element
// into B. W: the reference's figures (dD, dn), null for the reference's own pass.
struct ModelFigures {
    double dD = 0;
    std::vector<double> dn, B;
};

void model_bound(const detail::HeadInput& in, const Head& h, const RoundingModel& M,
                 const std::vector<double>& se, double EF2, const ModelFigures* W,
                 ModelFigures& out) {
    const double u = M.u_a, t = M.tau_a, g = std::fabs(in.par.gamma);
    const double wide = W ? 1 + gamma_n(static_cast<double>(in.nk + in.d + 8)) : 1.0;
    const detail::NormBound nb =
        detail::norm_bound(M, h.F2, EF2, static_cast<double>(in.nq) * static_cast<double>(in.nk),
                           in.par.eps, wide, W ? W->dD : -1.0);
    out.dD = nb.dD;
    const double Dlo = nb.Dlo, eps_D = nb.eps_D;
    const double eta_t = (1 + M.u_in) * (1 + gamma_n(static_cast<double>(in.nk + 4), u)) - 1;
    const size_t size = h.n.size();
    out.dn.assign(size, 0.0), out.B.assign(size, kInf);
    for (size_t e = 0; e < size; ++e) {  // (P3)
        const long c = static_cast<long>(e % static_cast<size_t>(in.dv));
        out.dn[e] = ((1 + eta_t) * se[e] + eta_t * h.sav[e]) * wide;
        const double n_hi = std::fabs(h.n[e]) + (W ? W->dn[e] : 0.0);
        if (eps_D < 1)
            out.B[e] = g / (Dlo * (1 - eps_D)) * (out.dn[e] + eps_D * n_hi) +
                       std::max(g, 1.0) * (1 + eta_t) * (M.tau_p + 2 * t) * h.av[c] * wide;
    }
}

// The reference rows o (n_q x d_v), the bounds and the floor's first-order terms of one head.
void analyze(const detail::HeadInput& in, const RoundingModel& K, std::vector<double>& o,
             std::vector<double>& bound, std::vector<double>& ref_error,
             std::vector<double>& first) {
    const RoundingModel R = reference_model();
    Head h;
    stream(in, K, R, h);
    ModelFigures fr, fk;
    model_bound(in, h, R, h.seR, h.EF2R, nullptr, fr);
    model_bound(in, h, K, h.seK, h.EF2K, &fr, fk);
    const double D = std::sqrt(h.F2) + in.par.eps, g = std::fabs(in.par.gamma);
    const size_t size = h.n.size();
    o.assign(size, 0.0), bound.assign(size, kInf), ref_error.assign(size, kInf);
    first.assign(size, 0.0);
    for (size_t e = 0; e < size; ++e) {  // (P4), (P5)
        o[e] = D > 0 ? in.par.gamma * h.n[e] / D : 0.0;
        const double ref = fr.B[e];
        ref_error[e] = ref * kBoundSafety;
        bound[e] = ((1 + K.u_out) * fk.B[e] + K.u_out * (std::fabs(o[e]) + ref) + K.tau_out + ref) *
                   kBoundSafety;
        if (std::isnan(bound[e])) bound[e] = kInf;
        if (D > 0)  // the floor: each logit, entry of A+, product, sum, division, gamma once
            first[e] = g / D * ((K.u_a + K.u_p) * h.sav[e] + K.u_a * h.sAv[e]) +
                       3 * K.u_a * std::fabs(o[e]);
    }
}

void baseline(const detail::HeadInput& in, Format storage, Format accumulate,
              std::vector<double>& o) {
    const Format A = unit_roundoff(accumulate) < unit_roundoff(storage) ? accumulate : storage;
    auto ra = [A](double x) { return round_to(x, A); };
    const long nq = in.nq, nk = in.nk, d = in.d, dv = in.dv;
    const double inv_d = ra(1.0 / static_cast<double>(d));
    o.assign(static_cast<size_t>(nq * dv), 0.0);
    double F2 = 0;
    for (long i = 0; i < nq; ++i)
        for (long j = 0; j < nk; ++j) {
            const double a = detail::baseline_entry(in, i, j, inv_d, storage, ra);
            F2 = ra(F2 + ra(a * a));
            for (long c = 0; c < dv; ++c)
                o[i * dv + c] = ra(o[i * dv + c] + ra(a * in.V[j * dv + c]));
        }
    const double D = ra(ra(std::sqrt(F2)) + ra(in.par.eps)), g = ra(in.par.gamma);
    for (double& x : o) x = D > 0 ? round_to(ra(g * ra(x / D)), output_format(storage)) : 0.0;
}

}  // namespace

namespace detail {

double entry_error(const RoundingModel& M, double A, double a, long d) {
    const double f = (1 + M.u_in) * (1 + M.u_in) * (1 + gamma_n(static_cast<double>(d + 4), M.u_a));
    const double e = (f - 1) * A + static_cast<double>(d + 4) * M.tau_a;
    return e * (1 + M.u_p) + M.u_p * a + M.tau_p;
}

NormBound norm_bound(const RoundingModel& M, double F2, double EF2, double m, double eps,
                     double wide, double ref_dD) {
    const double u = M.u_a, W = ref_dD >= 0 ? ref_dD : 0.0;
    const double F = std::sqrt(F2), D = F + eps;
    NormBound nb;
    nb.EF = std::sqrt(EF2) * wide;
    const double eta_F = (1 + gamma_n(m, u)) * (1 + u) - 1, F_hi = F * wide + nb.EF + W;
    const double dF = nb.EF + eta_F * F_hi + std::sqrt(m * M.tau_a) * (1 + u);
    nb.dD = dF + u * eps + u * (F_hi + dF + eps + u * eps);  // (P2)
    nb.Dlo = D - W;
    nb.eps_D = nb.Dlo > 0 ? nb.dD / nb.Dlo : kInf;
    return nb;
}

}  // namespace detail

KernelCheckResult check_pure_infsa(const AttentionProblem& p, const LinearInfsaParams& par,
                                   const Array& o, const KernelCheckOptions& opt) {
    if (any_nonfinite({&p.q, &p.k, &p.v}))  // kernels/infsa_nonfinite.hpp
        return detail::check_pure_infsa_nonfinite(p, par, o, opt);
    std::vector<double> ref, bound, ref_error, first, base;
    const double d = static_cast<double>(p.q.shape.empty() ? 1 : p.q.shape.back());
    return detail::check_infsa(p, par, o, opt, 1.0 / d,
                               [&](const detail::HeadInput& exact, const detail::HeadInput& rounded,
                                   const RoundingModel& model) {
                                   analyze(exact, model, ref, bound, ref_error, first);
                                   baseline(rounded, opt.storage, opt.accumulate, base);
                                   return detail::HeadRows{ref.data(),       bound.data(),
                                                           ref_error.data(), base.data(),
                                                           first.data(),     exact.dv};
                               });
}

Array reference_pure_infsa(const AttentionProblem& p, const LinearInfsaParams& par) {
    std::vector<double> bound, ref_error, first;
    detail::check_infsa_params(p, par);
    return detail::per_head(p, par, [&](const detail::HeadInput& in, std::vector<double>& rows) {
        analyze(in, RoundingModel{}, rows, bound, ref_error, first);
    });
}

Array baseline_pure_infsa(const AttentionProblem& p, const LinearInfsaParams& par, Format storage,
                          Format accumulate) {
    AttentionProblem rounded = p;
    detail::round_all({&rounded.q, &rounded.k, &rounded.v}, storage);
    detail::check_infsa_params(p, par);
    return detail::per_head(rounded, par,
                            [&](const detail::HeadInput& in, std::vector<double>& rows) {
                                baseline(in, storage, accumulate, rows);
                            });
}

}  // namespace attnspec::kernels
