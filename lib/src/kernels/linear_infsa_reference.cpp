// The float64 Linear-InfSA reference of one head, its rounding bound (proofs/kernel_tolerance.md,
// "Linear-InfSA", (L1)-(L8)) and the plain kernel at a declared precision
// (lib/src/kernels/linear_infsa_reference.hpp).
#include "linear_infsa_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnspec/base/rounding.hpp"

namespace attnspec::kernels::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The reference's values and the magnitudes the bound is evaluated on.
struct Ref {
    double c = 0;             // 1/sqrt(d)
    double Se = 0, D = 0;     // sum_i e_i, sum_i e_i + eps
    std::vector<double> acc;  // sum_i e_i q~_il (d)
    std::vector<double> M;    // sum_i e_i |q~_il| (d)
    std::vector<double> Sq;   // sum_i |q~_il| (d)
    std::vector<double> qb;   // q_bar (d)
    std::vector<double> s;    // scores s_j (n_k)
    std::vector<double> x;    // logits x_j = c q_bar . k_j (n_k)
    double S = 0, D2 = 0;     // sum_j s_j, sum_j s_j + eps
    std::vector<double> n;    // sum_j s_j v_jc (d_v)
    std::vector<double> sv;   // sum_j s_j |v_jc| (d_v)
    std::vector<double> av;   // sum_j |v_jc| (d_v)
    std::vector<double> p;    // the output gamma n_c / D2 (d_v)
};

// One model's error figures; the reference's (W) widen the magnitudes of the kernel's pass.
struct Err {
    double dD = 0, dD2 = 0;
    std::vector<double> dacc, Eq, es, ex, dn, B, first;
};

// sum_l a_l b_l with four partial sums (any order is within the reference's own bound).
double dot(const double* a, const double* b, long n) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    long l = 0;
    for (; l + 4 <= n; l += 4)
        s0 += a[l] * b[l], s1 += a[l + 1] * b[l + 1], s2 += a[l + 2] * b[l + 2],
            s3 += a[l + 3] * b[l + 3];
    for (; l < n; ++l) s0 += a[l] * b[l];
    return (s0 + s1) + (s2 + s3);
}

// The reference's two sweeps (L1)-(L7): q_bar, the scores (into r.s when `keep_scores`), S, n
// and the output o. Reads each input once; a key with s_j = 0 skips its value row.
void pooled(const HeadInput& in, Ref& r, bool keep_scores, std::vector<double>& o) {
    const long nq = in.nq, nk = in.nk, d = in.d, dv = in.dv;
    r.c = 1.0 / std::sqrt(static_cast<double>(d));
    r.acc.assign(d, 0.0), r.qb.assign(d, 0.0);
    r.Se = 0;
    for (long i = 0; i < nq; ++i) {
        const double* q = in.Q + i * d;
        const double e = r.c * std::sqrt(dot(q, q, d)), w = e * r.c;
        r.Se += e;
        for (long l = 0; l < d; ++l) r.acc[l] += w * q[l];
    }
    r.D = r.Se + in.par.eps;
    for (long l = 0; l < d && r.D > 0; ++l) r.qb[l] = r.acc[l] / r.D;
    if (keep_scores) r.s.assign(nk, 0.0), r.x.assign(nk, 0.0);
    r.n.assign(dv, 0.0);
    r.S = 0;
    for (long j = 0; j < nk; ++j) {
        const double x = r.c * dot(r.qb.data(), in.K + j * d, d), s = std::max(0.0, x);
        if (keep_scores) r.s[j] = s, r.x[j] = x;
        if (s == 0) continue;
        r.S += s;
        const double* v = in.V + j * dv;
        for (long c = 0; c < dv; ++c) r.n[c] += s * v[c];
    }
    r.D2 = r.S + in.par.eps;
    o.assign(dv, 0.0);
    for (long c = 0; c < dv && r.S > 0; ++c) o[c] = in.par.gamma * r.n[c] / r.D2;
}

// pooled() and the magnitudes the bound needs (a third sweep over Q, a fourth over V).
void reference(const HeadInput& in, Ref& r, std::vector<double>& o) {
    pooled(in, r, true, o);
    const long nq = in.nq, nk = in.nk, d = in.d, dv = in.dv;
    r.M.assign(d, 0.0), r.Sq.assign(d, 0.0), r.sv.assign(dv, 0.0), r.av.assign(dv, 0.0);
    for (long i = 0; i < nq; ++i) {
        const double* q = in.Q + i * d;
        const double e = r.c * std::sqrt(dot(q, q, d));
        for (long l = 0; l < d; ++l) {
            const double aq = std::fabs(r.c * q[l]);
            r.M[l] += e * aq, r.Sq[l] += aq;
        }
    }
    for (long j = 0; j < nk; ++j)
        for (long c = 0; c < dv; ++c) {
            const double av = std::fabs(in.V[j * dv + c]);
            r.sv[c] += r.s[j] * av, r.av[c] += av;
        }
    r.p = o;
}

// (L1)-(L8) for model M on the reference's values; W: the reference's own figures (magnitudes
// widened by them), null for the reference's pass.
void errors(const HeadInput& in, const Ref& r, const RoundingModel& M, const Err* W, Err& E) {
    const long nq = in.nq, nk = in.nk, d = in.d, dv = in.dv;
    const double u = M.u_a, t = M.tau_a, eps = in.par.eps, g = std::fabs(in.par.gamma);
    // Sums of non-negative double terms: relative error <= gamma_{n + 8} (2^-53) each.
    const double wide = W ? 1 + gamma_n(static_cast<double>(nq + nk + d + dv + 8)) : 1.0;
    auto w = [W](const std::vector<double> Err::*f, long i) { return W ? (W->*f)[i] : 0.0; };
    const double gd = gamma_n(static_cast<double>(d + 4), u);
    const double eta_e = (1 + M.u_in) * (1 + gd) - 1;                         // (L1)
    const double b_e = std::sqrt(static_cast<double>(d) * t) * (1 + gd) + t;  // (L1)
    const double fnq = static_cast<double>(nq), fnk = static_cast<double>(nk);
    const double Se = r.Se * wide;
    const double dSe =
        eta_e * Se + fnq * b_e + gamma_n(fnq - 1, u) * ((1 + eta_e) * Se + fnq * b_e) + fnq * t;
    const double Dlo = r.D - (W ? W->dD : 0.0), Dhi = r.D * wide + (W ? W->dD : 0.0);
    E.dD = dSe + u * eps + u * (Dhi + dSe + u * eps);  // (L2)
    const double eps_D = Dlo > 0 ? E.dD / Dlo : kInf;
    const double f_acc = (1 + M.u_in) * (1 + gamma_n(fnq + 3, u));
    const double f_qb = (1 + u) * (1 + M.u_p);
    E.dacc.assign(d, 0.0), E.Eq.assign(d, 0.0);
    for (long l = 0; l < d && r.Se > 0; ++l) {  // (L3), (L4); all-zero queries: q_bar = 0 exactly
        E.dacc[l] = ((1 + eta_e) * f_acc - 1) * r.M[l] * wide + b_e * f_acc * r.Sq[l] * wide +
                    (fnq + 3) * t;
        const double acc = std::fabs(r.acc[l]) + w(&Err::dacc, l);
        E.Eq[l] = eps_D < 1 ? (E.dacc[l] + eps_D * acc) / (Dlo * (1 - eps_D)) * f_qb +
                                  (f_qb - 1) * (std::fabs(r.qb[l]) + w(&Err::Eq, l)) + t + M.tau_p
                            : kInf;
    }
    const double f_x = (1 + M.u_in) * (1 + gamma_n(static_cast<double>(d + 2), u));
    E.es.assign(nk, 0.0), E.ex.assign(nk, 0.0);
    // (L6) sums over the keys whose sign is sure (x_j beyond its error: P positive; the negative
    // ones add exactly 0), with w_jc = gamma v_jc - p_c: G = sum_P k_j w_j^T (d x d_v), KP =
    // sum_P k_j, and per column the rest (rounding given q_bar^, score storage) and the keys of
    // uncertain sign (their whole es_j).
    std::vector<double> G(static_cast<size_t>(d * dv), 0.0), KP(d, 0.0), restw(dv, 0.0),
        ambw(dv, 0.0), ev(dv, 0.0), sv(dv, 0.0), wsP(dv, 0.0), wj(dv);
    double sum_es = 0, S_hi = 0, rest_sum = 0, amb_sum = 0;
    for (long j = 0; j < nk; ++j) {  // (L5): the scores
        const double* k = in.K + j * d;
        const double* v = in.V + j * dv;
        double Kq = 0, A = 0;
        for (long l = 0; l < d; ++l) {
            const double ak = std::fabs(k[l]);
            Kq += ak * E.Eq[l], A += ak * (std::fabs(r.qb[l]) + w(&Err::Eq, l) + E.Eq[l]);
        }
        Kq *= r.c * wide, A *= r.c * wide;
        const double rho = (f_x - 1) * A + static_cast<double>(d + 2) * t;  // the dot's rounding
        E.ex[j] = Kq * f_x + rho;
        const double s_hi = r.s[j] + w(&Err::es, j);
        E.es[j] = E.ex[j] * (1 + M.u_p) + M.u_p * s_hi + M.tau_p;
        sum_es += E.es[j], S_hi += s_hi;
        const double thr = E.ex[j] + w(&Err::ex, j);
        const bool pos = r.x[j] > thr, amb = !pos && r.x[j] >= -thr;
        const double rest = rho + M.u_p * (s_hi + E.ex[j]) + M.tau_p;
        if (pos) rest_sum += rest;
        if (amb) amb_sum += E.es[j];
        for (long c = 0; c < dv; ++c) {
            const double av = std::fabs(v[c]);
            wj[c] = in.par.gamma * v[c] - r.p[c];
            ev[c] += E.es[j] * av, sv[c] += s_hi * av;
            const double aw = std::fabs(wj[c]) + w(&Err::B, c);
            if (pos) restw[c] += rest * aw, wsP[c] += r.s[j] * aw;
            if (amb) ambw[c] += E.es[j] * aw;
        }
        if (!pos) continue;
        for (long l = 0; l < d; ++l) {
            KP[l] += k[l];
            double* Gl = G.data() + l * dv;
            for (long c = 0; c < dv; ++c) Gl[c] += k[l] * wj[c];
        }
    }
    S_hi *= wide;
    // (L6): the kernel's scores in exact arithmetic, p~ = gamma sum s^ v / (sum s^ + eps), differ
    // from p by sum_j delta_j w_j / (D2 + sum delta), delta_j = c k_j . dq_bar + rest_j on P.
    double KPE = 0;
    for (long l = 0; l < d; ++l) KPE += std::fabs(KP[l]) * E.Eq[l];
    KPE *= r.c * wide;
    const double dsum = KPE + (rest_sum + amb_sum) * wide;  // |sum_j delta_j|
    const double D2lo = r.D2 - (W ? W->dD2 : 0.0) - dsum;
    const double St_hi = S_hi + sum_es, Dt_hi = St_hi + eps;
    const double dDt = gamma_n(fnk - 1, u) * St_hi + fnk * t + u * eps +
                       u * (Dt_hi + gamma_n(fnk - 1, u) * St_hi + fnk * t + u * eps);
    E.dD2 = dsum + dDt;  // |D2^ - D2| (the kernel's pass lowers D2 by the reference's)
    const double eps_t = D2lo > 0 ? dDt / D2lo : kInf;  // (L7): the sum, eps, the divisor rounded
    const double eta_t = (1 + M.u_p) * (1 + M.u_in) * (1 + gamma_n(fnk + 4, u)) - 1;
    E.dn.assign(dv, 0.0), E.B.assign(dv, kInf), E.first.assign(dv, 0.0);
    for (long c = 0; c < dv; ++c) {
        double GE = 0, Gq = 0;  // sum_l |G_lc| E_l (the q_bar error), sum_l |G_lc| |q_bar_l|
        const double p_unc = w(&Err::B, c);  // the reference's own error on p_c
        for (long l = 0; l < d; ++l) {
            const double Gabs = std::fabs(G[l * dv + c]) + p_unc * std::fabs(KP[l]);
            GE += Gabs * E.Eq[l], Gq += Gabs * std::fabs(r.qb[l]);
        }
        const double T = (r.c * GE + restw[c] + ambw[c]) * wide;
        E.dn[c] = ev[c] * wide;  // |n~_c - n_c|: the numerator on the kernel's scores
        const double n_hi = std::fabs(r.n[c]) + w(&Err::dn, c) + E.dn[c];
        if (eps_t < 1)
            E.B[c] = T / D2lo +
                     g / (D2lo * (1 - eps_t)) * (eta_t * (sv[c] + ev[c]) * wide + eps_t * n_hi) +
                     g * (1 + eta_t) * (M.tau_p + 2 * t) * r.av[c] * wide +
                     g * (2 * fnk * t / std::min(1.0, D2lo) + 2 * t);  // products' underflow
        if (r.D2 > 0)  // the floor: q_bar and each score rounded once, then sum, division, gamma
            E.first[c] = (u + M.u_p) * (r.c * Gq + wsP[c]) / r.D2 + 3 * u * std::fabs(r.p[c]);
    }
}

}  // namespace

void analyze_head(const HeadInput& in, const RoundingModel& kernel, HeadAnalysis& out) {
    Ref r;
    reference(in, r, out.o);
    Err R, K;
    errors(in, r, reference_model(), nullptr, R);
    errors(in, r, kernel, &R, K);
    const long dv = in.dv;
    out.bound.assign(dv, kInf), out.ref_error.assign(dv, kInf), out.first = K.first;
    for (long c = 0; c < dv; ++c) {  // (L8)
        const double ref = R.B[c];
        out.ref_error[c] = ref * kBoundSafety;
        out.bound[c] = ((1 + kernel.u_out) * K.B[c] + kernel.u_out * (std::fabs(out.o[c]) + ref) +
                        kernel.tau_out + ref) *
                       kBoundSafety;
        if (std::isnan(out.bound[c])) out.bound[c] = kInf;
    }
}

void reference_head(const HeadInput& in, std::vector<double>& o) {
    Ref r;
    pooled(in, r, false, o);
}

void baseline_head(const HeadInput& in, Format storage, Format accumulate, std::vector<double>& o) {
    const Format A = unit_roundoff(accumulate) < unit_roundoff(storage) ? accumulate : storage;
    auto ra = [A](double x) { return round_to(x, A); };
    const long nq = in.nq, nk = in.nk, d = in.d, dv = in.dv;
    const double c = ra(1.0 / std::sqrt(static_cast<double>(d)));
    const double eps = ra(in.par.eps), gamma = ra(in.par.gamma);
    std::vector<double> acc(d, 0.0), qb(d, 0.0), n(dv, 0.0);
    double Se = 0;
    for (long i = 0; i < nq; ++i) {
        const double* q = in.Q + i * d;
        double ss = 0;
        for (long l = 0; l < d; ++l) ss = ra(ss + ra(q[l] * q[l]));
        const double e = ra(c * ra(std::sqrt(ss)));
        Se = ra(Se + e);
        for (long l = 0; l < d; ++l) acc[l] = ra(acc[l] + ra(e * ra(c * q[l])));
    }
    const double D = ra(Se + eps);
    for (long l = 0; l < d && D > 0; ++l) qb[l] = round_to(ra(acc[l] / D), storage);
    double S = 0;
    for (long j = 0; j < nk; ++j) {
        const double* k = in.K + j * d;
        const double* v = in.V + j * dv;
        double x = 0;
        for (long l = 0; l < d; ++l) x = ra(x + ra(qb[l] * k[l]));
        const double s = round_to(std::max(0.0, ra(c * x)), storage);
        S = ra(S + s);
        for (long col = 0; col < dv; ++col) n[col] = ra(n[col] + ra(s * v[col]));
    }
    o.assign(dv, 0.0);
    if (S == 0) return;
    const double D2 = ra(S + eps);
    for (long col = 0; col < dv; ++col)
        o[col] = round_to(ra(gamma * ra(n[col] / D2)), output_format(storage));
}

}  // namespace attnspec::kernels::detail
