// The float64 attention reference and its rounding bounds, one row at a time
// (kernels/attention_reference.hpp; the derivation is proofs/kernel_tolerance.md).
#include "attnspec/kernels/attention_reference.hpp"

#include <algorithm>
#include <cmath>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <limits>

#include "attention_rows.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/kernels/exp_lanes.hpp"

namespace attnspec::kernels {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// part[j & 3] += p_j (c1 kappa_j + c0) for j = 0 .. n-1 in that order ((B3)), four keys at a time
// in vector lanes: lane k adds the terms of keys k, k + 4, ... in order, as the scalar loop does.
void part_sums(const double* p, const double* kappa, long n, double c0, double c1, double* part) {
    long j = 0;
#ifdef __SSE2__
    __m128d lo = _mm_loadu_pd(part), hi = _mm_loadu_pd(part + 2);
    const __m128d C0 = _mm_set1_pd(c0), C1 = _mm_set1_pd(c1);
    const auto term = [&](long i) {
        return _mm_mul_pd(_mm_loadu_pd(p + i),
                          _mm_add_pd(_mm_mul_pd(C1, _mm_loadu_pd(kappa + i)), C0));
    };
    for (; j + 4 <= n; j += 4) lo = _mm_add_pd(lo, term(j)), hi = _mm_add_pd(hi, term(j + 2));
    _mm_storeu_pd(part, lo), _mm_storeu_pd(part + 2, hi);
#endif
    for (; j < n; ++j) part[j & 3] += p[j] * (c1 * kappa[j] + c0);
}

// kappa_j = (a_j + a_j^2)(1 + g_w) + g_w of model_row without perturbed operands or a mask
// (a_j = e_j + E + u A_max + u (m - x_j + e_j + E), e_j = f A_j + tau, A: in.A or in.Ap, the same
// operations in the same order, two keys per step); returns whether some a_j > 1/2.
bool plain_kappa(const detail::RowLogits& in, const double* A, double f, double tau, double E,
                 double u, double g_w, double* kappa) {
    const long n = in.n;
    const double s0 = u * in.A_max, g1 = 1 + g_w;
    const auto key = [&](double A_j, double x_j) {
        const double e_j = f * A_j + tau;
        return e_j + E + s0 + u * (in.m - x_j + e_j + E);
    };
    bool big = false;
    long j = 0;
#ifdef __SSE2__
    const __m128d F = _mm_set1_pd(f), T = _mm_set1_pd(tau), EE = _mm_set1_pd(E);
    const __m128d S0 = _mm_set1_pd(s0), U = _mm_set1_pd(u), M = _mm_set1_pd(in.m);
    const __m128d G1 = _mm_set1_pd(g1), G = _mm_set1_pd(g_w), half = _mm_set1_pd(0.5);
    __m128d any = _mm_setzero_pd();
    for (; j + 2 <= n; j += 2) {
        const __m128d e = _mm_add_pd(_mm_mul_pd(F, _mm_loadu_pd(A + j)), T);
        const __m128d mx = _mm_add_pd(_mm_sub_pd(M, _mm_loadu_pd(in.x + j)), e);
        const __m128d a =
            _mm_add_pd(_mm_add_pd(_mm_add_pd(e, EE), S0), _mm_mul_pd(U, _mm_add_pd(mx, EE)));
        any = _mm_or_pd(any, _mm_cmpgt_pd(a, half));
        const __m128d k = _mm_add_pd(_mm_mul_pd(_mm_add_pd(a, _mm_mul_pd(a, a)), G1), G);
        _mm_storeu_pd(kappa + j, k);
    }
    big = _mm_movemask_pd(any) != 0;
#endif
    for (; j < n; ++j) {
        const double a_j = key(A[j], in.x[j]);
        big = big || a_j > 0.5;
        kappa[j] = (a_j + a_j * a_j) * g1 + g_w;
    }
    return big;
}

}  // namespace

namespace detail {

ModelRow model_row(const RoundingModel& M, const RowLogits& in, double phi, double* kappa) {
    const long n = in.n;
    ModelRow r;
    const double g_logit = gamma_n(static_cast<double>(in.d + 3), M.u_a);
    const double f_logit = (1 + M.u_in) * (1 + M.u_in) * (1 + g_logit) - 1;
    const double tau_logit = static_cast<double>(in.d + 3) * M.tau_a;
    // Perturbed operands (SpecA's projections, RowLogits::Ap, dx): the dot products are charged on
    // A'_j and each logit carries the extra error dx_j ((Q1)).
    const double* A = in.Ap ? in.Ap : in.A;
    // (B1'): an additive mask M_j, read rounded to the operand format (u_in), is added to the
    // scaled product in the accumulation format: one more rounding of s q.k + M_j.
    const auto logit_error = [&](long j) {
        const double e = f_logit * A[j] + tau_logit + (in.dx ? in.dx[j] : 0.0);
        return detail::logit_error(M, e, in.absM, j, in.x[j]);
    };
    r.E = f_logit * in.A_max + tau_logit;
    if (in.dx)
        for (long j = 0; j < n; ++j) r.E = std::max(r.E, logit_error(j));
    if (in.absM) {
        // (B1'): the kernel's max key j* has x_j* + e'_j* >= x_max - e'_jmax (jmax: x_jmax =
        // x_max), so E runs over those keys only (a far-masked key's large e'_j is not E).
        double low = -std::numeric_limits<double>::infinity();
        for (long j = 0; j < n; ++j)
            if (in.x[j] == in.m) low = std::max(low, in.m - logit_error(j));
        r.E = 0;
        for (long j = 0; j < n; ++j)
            if (in.x[j] + logit_error(j) >= low) r.E = std::max(r.E, logit_error(j));
    }
    // The shift m rounded once, relative to |m| (A3): |m| <= A_max; with an additive mask the
    // shift of key j's block lies between x^_j and m^, |m^| <= |x_max| + 3E ((B1')).
    const auto shift = [&](long j, double e_j) {
        if (!in.absM) return M.u_a * in.A_max;
        return M.u_a * (std::max(std::fabs(in.m), std::fabs(in.x[j])) + 3 * r.E + e_j);
    };
    const auto arg = [&](long j) {
        const double e_j = logit_error(j);
        return e_j + r.E + shift(j, e_j) + M.u_a * (in.m - in.x[j] + e_j + r.E);
    };
    // With an additive mask, a key whose kernel weight is provably below tau_a (exp(x_j - m + 2E
    // + a_j + 1) < tau_a, and so is its exact weight) is an underflowing weight: its error is the
    // absolute tau_a already counted per key ((B3), (B5)), kappa_j = 0.
    const auto negligible = [&](long j, double a_j) {
        return negligible_weight(M, in.absM, in.x[j] - in.m + 2 * r.E + a_j);
    };
    const double rescales = M.online ? static_cast<double>(n - 1) : 0.0;
    const double g_w = gamma_n(M.c_exp + (M.c_exp + 1) * rescales, M.u_a);
    const double g_sum = gamma_n(static_cast<double>(n - 1), M.u_a);
    // (1 + kappa)(1 + u_p)(1 + g_sum) - 1 = c1 kappa + c0 (B3), without cancellation.
    const double c0 = M.u_p + g_sum + M.u_p * g_sum, c1 = 1 + c0;
    // r_j of (B2): exp(a_j)(1 + g_w) - 1 <= expm1_upper(a_j)(1 + g_w) + g_w.
    const auto p = [&](long j) { return in.p ? in.p[j] : in.t[j] / in.l; };
    double part[4] = {0, 0, 0, 0};  // four partial sums (non-negative terms: any order)
    double eps = 0, a_max = 0;
    if (!in.dx && !in.absM) {
        // Neither perturbed operands nor a mask: the same a_j (e_j + 0 = e_j, e_j > 0) and kappa_j
        // two keys at a time; of a_max only whether it exceeds 1/2 is kept.
        a_max = plain_kappa(in, A, f_logit, tau_logit, r.E, M.u_a, g_w, kappa) ? 1.0 : 0.0;
    } else {
        for (long j = 0; j < n; ++j) {
            const double a_j = arg(j);
            if (negligible(j, a_j)) {
                kappa[j] = 0;
                continue;
            }
            a_max = std::max(a_max, a_j);
            kappa[j] = (a_j + a_j * a_j) * (1 + g_w) + g_w;
        }
    }
    if (a_max > 0.5)
        for (long j = 0; j < n; ++j) {
            const double a_j = arg(j);
            kappa[j] = negligible(j, a_j) ? 0.0 : expm1_upper(a_j) * (1 + g_w) + g_w;
        }
    if (in.p) {
        part_sums(in.p, kappa, n, c0, c1, part);
    } else {
        for (long j = 0; j < n; ++j) part[j & 3] += p(j) * (c1 * kappa[j] + c0);  // (B3)
    }
    eps = (part[0] + part[1]) + (part[2] + part[3]);
    r.eps_l = eps / (1 - phi) + 2.0 * static_cast<double>(n) * M.tau_a;
    eps = r.eps_l;
    if (!(eps < 1)) {
        r.finite = false;
        return r;
    }
    // (B4): (1 + kappa_j) f - 1 = f kappa_j + (f - 1), f = (1 + u_p)(1 + u_in)(1 + g_pv)/(1 - eps).
    const double g_pv = gamma_n(static_cast<double>(n + 1), M.u_a);
    const double num =
        M.u_p + M.u_in + g_pv + M.u_p * M.u_in + (M.u_p + M.u_in) * g_pv + M.u_p * M.u_in * g_pv;
    const double f = (1 + num) / (1 - eps), fm1 = (num + eps) / (1 - eps);
    for (long j = 0; j < n; ++j) kappa[j] = kappa[j] * f + fm1;
    r.k_max = lane_max(kappa, n, 0.0);
    return r;
}

}  // namespace detail

namespace {

using detail::ModelRow;

// Logits, their absolute sums A_j, the shifted exponentials, o and lse of the float64 reference.
void reference_row(const RowInput& in, RowScratch& s, RowAnalysis& out, double& m, double& l) {
    const long n = in.n, d = in.d, dv = in.dv;
    s.x.resize(static_cast<size_t>(n));
    s.A.resize(static_cast<size_t>(n));
    s.t.resize(static_cast<size_t>(n));
    m = -kInf;
    out.max_abs_logit = 0;
    if (in.dq) s.Ap.resize(static_cast<size_t>(n)), s.dx.resize(static_cast<size_t>(n));
    if (in.bias) s.absM.resize(static_cast<size_t>(n));
    for (long j = 0; j < n; ++j) {
        const double* k = in.K + in.key(j) * d;
        double dot = 0, abs_dot = 0;
        for (long c = 0; c < d; ++c) dot += in.q[c] * k[c], abs_dot += std::fabs(in.q[c] * k[c]);
        s.x[j] = in.scale * dot;
        if (in.bias) s.x[j] += in.bias[in.key(j)], s.absM[j] = std::fabs(in.bias[in.key(j)]);
        s.A[j] = in.scale * abs_dot;
        m = std::max(m, s.x[j]);
        out.max_abs_logit = std::max(out.max_abs_logit, std::fabs(s.x[j]));
        if (!in.dq) continue;
        // (Q1): |q'.k' - q.k| <= sum_c dq_c |k_c| + |q_c| dk_c + dq_c dk_c, and the kernel's dot
        // product of q', k' is charged on sum_c (|q_c| + dq_c)(|k_c| + dk_c).
        const double* dk = in.dK + in.key(j) * d;
        double ap = 0, dx = 0;
        for (long c = 0; c < d; ++c) {
            const double aq = std::fabs(in.q[c]), ak = std::fabs(k[c]);
            ap += (aq + in.dq[c]) * (ak + dk[c]);
            dx += in.dq[c] * ak + aq * dk[c] + in.dq[c] * dk[c];
        }
        s.Ap[j] = in.scale * ap, s.dx[j] = in.scale * dx;
    }
    for (long j = 0; j < n; ++j) s.t[j] = s.x[j] - m;
    exp_lanes(s.t.data(), s.t.data(), n);
    l = detail::sum_in_order(s.t.data(), n);
    out.o.assign(static_cast<size_t>(dv), 0.0);
    for (long j = 0; j < n; ++j) {
        const double p = s.t[j] / l;
        const double* v = in.V + in.key(j) * dv;
        for (long c = 0; c < dv; ++c) out.o[c] += p * v[c];
    }
    out.lse = m + std::log(l);
}

// The log-sum-exp bound of one model: (E + L + (c_exp + 1) u (|log l| + L) + 3 u |lse|) /
// (1 - u), L = -log(1 - eps_l) (proofs/kernel_tolerance.md, (B7)).
double lse_bound(const RoundingModel& M, const ModelRow& r, double log_l, double abs_lse) {
    if (!r.finite) return kInf;
    const double L = -std::log1p(-r.eps_l);
    return (r.E + L + (M.c_exp + 1) * M.u_a * (std::fabs(log_l) + L) + 3 * M.u_a * abs_lse) /
           (1 - M.u_a);
}

}  // namespace

RoundingModel kernel_model(Format storage, Format accumulate, bool inputs_exact) {
    RoundingModel M;
    const Format acc = unit_roundoff(accumulate) < unit_roundoff(storage) ? accumulate : storage;
    M.u_a = unit_roundoff(acc);
    M.tau_a = smallest_normal(acc);  // flush to zero allowed in the accumulation format
    M.u_in = inputs_exact ? 0.0 : unit_roundoff(storage);
    M.u_p = unit_roundoff(storage) > M.u_a ? unit_roundoff(storage) : 0.0;
    M.tau_p = M.u_p > 0 ? underflow_error(storage) : 0.0;
    M.u_out = unit_roundoff(output_format(storage));
    M.tau_out = underflow_error(output_format(storage));
    return M;
}

RoundingModel reference_model() {
    RoundingModel M;
    M.u_a = kUnitRoundoff;
    M.c_exp = kExpLanesError;  // exp_lanes (and glibc's log, within 1 ulp = 2 u)
    M.online = false;
    M.tau_a = smallest_normal(Format::fp64);
    return M;
}

namespace detail {

void finish_row(const RoundingModel& kernel, const ModelRow& K, const ModelRow& Rr, double phi,
                long n, long dv, const RowSums& sums, double log_l, RowAnalysis& out) {
    const RoundingModel R = reference_model();
    const bool ok = Rr.finite && phi < 0.5;
    out.denominator_error = K.eps_l;
    out.max_abs_pv = *std::max_element(sums.pv, sums.pv + dv);
    out.bound.assign(static_cast<size_t>(dv), kInf);
    out.ref_error.assign(static_cast<size_t>(dv), kInf);
    const double nd = static_cast<double>(n);
    for (long c = 0; c < dv && ok && K.finite; ++c) {
        const double abs_K = (kernel.tau_p + 4 * kernel.tau_a) * (1 + gamma_n(nd, kernel.u_a)) /
                             (1 - K.eps_l) * (sums.sum_abs[c] + nd);
        const double abs_R =
            4 * R.tau_a * (1 + gamma_n(nd, R.u_a)) / (1 - Rr.eps_l) * (sums.sum_abs[c] + nd);
        const double flushed = nd * R.tau_a * sums.v_max[c] * (1 + K.k_max);  // p_j the ref flushed
        const double ref = (sums.BR[c] + abs_R) / (1 - phi);
        const double BKc = sums.BK[c] / (1 - phi) + abs_K + flushed;
        const double kern =
            (1 + kernel.u_out) * BKc + kernel.u_out * (std::fabs(out.o[c]) + ref) + kernel.tau_out;
        out.ref_error[c] = ref * kBoundSafety;
        out.bound[c] = (kern + ref) * kBoundSafety;
    }
    const double ref_lse = lse_bound(R, Rr, log_l, std::fabs(out.lse));
    out.lse_bound =
        (lse_bound(kernel, K, log_l + ref_lse, std::fabs(out.lse) + ref_lse) + ref_lse) *
        kBoundSafety;
}

}  // namespace detail

void analyze_row(const RowInput& in, const RoundingModel& kernel, RowScratch& s, RowAnalysis& out) {
    const long n = in.n, dv = in.dv;
    out.masked = n == 0;
    if (out.masked) {
        out.o.assign(static_cast<size_t>(dv), std::nan(""));
        out.bound.assign(static_cast<size_t>(dv), kInf);
        out.ref_error.assign(static_cast<size_t>(dv), 0.0);
        out.lse = -kInf, out.lse_bound = kInf, out.denominator_error = 0;
        return;
    }
    double m = 0, l = 0;
    reference_row(in, s, out, m, l);
    detail::RowLogits lg;
    lg.x = s.x.data(), lg.A = s.A.data(), lg.t = s.t.data(), lg.n = n, lg.d = in.d;
    lg.m = m, lg.l = l;
    s.p.resize(static_cast<size_t>(n));
    for (long j = 0; j < n; ++j) s.p[j] = s.t[j] / l;
    lg.p = s.p.data();
    for (long j = 0; j < n; ++j) lg.A_max = std::max(lg.A_max, s.A[j]);
    if (in.bias) lg.absM = s.absM.data();
    s.kappa.resize(static_cast<size_t>(n)), s.kappa_ref.resize(static_cast<size_t>(n));
    const ModelRow Rr = detail::model_row(reference_model(), lg, 0.0, s.kappa_ref.data());
    // phi: relative error of the reference's p_j, which stand in for the exact ones (B6).
    const double phi = Rr.k_max;
    const bool ok = Rr.finite && phi < 0.5;
    detail::RowLogits lk = lg;  // the kernel's model: on the perturbed operands when given
    if (in.dq) {
        lk.Ap = s.Ap.data(), lk.dx = s.dx.data(), lk.A_max = 0;
        for (long j = 0; j < n; ++j) lk.A_max = std::max(lk.A_max, s.Ap[j]);
    }
    const ModelRow K = detail::model_row(kernel, lk, ok ? phi : 0.0, s.kappa.data());
    std::vector<double> BK(static_cast<size_t>(dv), 0.0), BR(BK), sum_abs(BK), v_max(BK), pv(BK);
    for (long j = 0; j < n; ++j) {
        const double p = s.t[j] / l;
        const long key = in.key(j);
        const double* v = in.V + key * dv;
        const double kk = K.finite ? s.kappa[j] : 0.0, kr = Rr.finite ? s.kappa_ref[j] : 0.0;
        for (long c = 0; c < dv; ++c) {
            const double av = std::fabs(v[c]), dvc = in.dV ? in.dV[key * dv + c] : 0.0;
            // (Q2): the term p_j v'_jc with |v'_jc - v_jc| <= dV_jc has relative error kappa_j
            // about v'_jc: p_j (kappa_j |v_jc| + (1 + kappa_j) dV_jc) from p_j v_jc.
            BK[c] += p * (av * kk + dvc * (1 + kk)), BR[c] += p * av * kr, pv[c] += p * av;
            sum_abs[c] += av + dvc, v_max[c] = std::max(v_max[c], av + dvc);
        }
    }
    const detail::RowSums sums{pv.data(), BK.data(), BR.data(), sum_abs.data(), v_max.data()};
    detail::finish_row(kernel, K, Rr, phi, n, dv, sums, std::log(l), out);
}

}  // namespace attnspec::kernels
