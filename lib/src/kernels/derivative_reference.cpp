// The float64 references of attention-vjp and attention-jvp and their rounding bounds
// (kernels/derivative_reference.hpp; the derivation is proofs/kernel_tolerance.md, (D1)-(D9)).
#include "attnspec/kernels/derivative_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnspec/base/rounding.hpp"
#include "check_compare.hpp"

namespace attnspec::kernels {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The units of one rounding model as (D1)-(D9) use them.
struct Units {
    double u_a = 0, u_in = 0, u_p = 0, u_out = 0, c_exp = 0;
    double tau_a = 0, tau_out = 0;
    double nu = 0;     // absolute error of one weight p_j from underflow (D1)
    double tau_s = 0;  // absolute error of one product term from underflow (D4)
    double gamma(double n) const { return gamma_n(n, u_a); }
};

Units units(const RoundingModel& M) {
    Units U;
    U.u_a = M.u_a, U.u_in = M.u_in, U.u_p = M.u_p, U.u_out = M.u_out, U.c_exp = M.c_exp;
    U.tau_a = M.tau_a, U.tau_out = M.tau_out;
    U.nu = 2 * (M.tau_p + 4 * M.tau_a);
    U.tau_s = M.tau_p + 4 * M.tau_a;
    return U;
}

// The per-key quantities of one query row under one model.
struct KeyTerms {
    std::vector<double> p, kappa;  // weights (widened for the kernel) and their relative errors
    std::vector<double> y, err_y;  // |y_j| (dP_j or ds_j, widened) and the bound on its error
    std::vector<double> a, eta;    // |a_j| = |y_j - c| (widened) and the bound on dS_j's error
};

// (D3)/(D7): the error of sum_j p^_j y^_j (any order, n + 1 roundings).
double weighted_sum_error(const Units& U, const KeyTerms& T, long n) {
    double s = 0, s_abs = 0;
    for (long j = 0; j < n; ++j) {
        s += T.p[j] * T.kappa[j] * T.y[j] + (T.p[j] * (1 + T.kappa[j]) + U.nu) * T.err_y[j] +
             U.nu * T.y[j];
        s_abs += T.p[j] * T.y[j];
    }
    const double g = U.gamma(static_cast<double>(n + 1));
    return s * (1 + g) + g * s_abs + static_cast<double>(n + 1) * U.tau_a;
}

// (D4)/(D8): eta_j, the error of p^_j (y^_j - c^) with |c^ - c| <= err_c, `ops` roundings in
// the accumulation format and one in P's storage format.
void product_errors(const Units& U, KeyTerms& T, long n, double err_c, int ops) {
    const double g = std::pow(1 + U.u_a, ops) * (1 + U.u_p) - 1;
    T.eta.resize(static_cast<size_t>(n));
    for (long j = 0; j < n; ++j) {
        const double e = T.err_y[j] + err_c;
        T.eta[j] = (T.p[j] * T.kappa[j] * T.a[j] + (T.p[j] * (1 + T.kappa[j]) + U.nu) * e +
                    U.nu * T.a[j]) *
                       (1 + g) +
                   g * T.p[j] * T.a[j] + U.tau_s;
    }
}

// The softmax of one row: analyze_row's reference and bounds, the weights p_j, and whether the
// bounds are finite (kernel: eps_l < 1/2, (D1); reference: its own bound finite).
struct RowSoftmax {
    RowScratch s;
    RowAnalysis fwd;
    std::vector<double> p;
    double phi = 0;
    bool finite = false;
};

void row_softmax(const RowInput& in, const RoundingModel& kernel, RowSoftmax& r) {
    analyze_row(in, kernel, r.s, r.fwd);
    double l = 0;
    for (long j = 0; j < in.n; ++j) l += r.s.t[j];
    r.p.resize(static_cast<size_t>(in.n));
    r.phi = 0;
    for (long j = 0; j < in.n; ++j) {
        r.p[j] = r.s.t[j] / l;
        r.phi = std::max(r.phi, r.s.kappa_ref[j]);
    }
    r.finite = std::isfinite(r.fwd.bound[0]) && std::isfinite(r.fwd.ref_error[0]) &&
               r.fwd.denominator_error < 0.5 && r.phi < 0.5;
}

// (D1): the relative errors of the weights. Reference: its kappa_ref. Kernel: the larger of the
// forward's kappa_j (B4) and the error of p_j = exp(x_j - lse) recomputed from the stored
// log-sum-exp (FlashAttention's backward); weights widened by 1 / (1 - phi).
void weights(const RowInput& in, const RowSoftmax& r, const RoundingModel& M, bool reference,
             KeyTerms& T) {
    const long n = in.n;
    T.p.resize(static_cast<size_t>(n)), T.kappa.resize(static_cast<size_t>(n));
    const double f_logit = (1 + M.u_in) * (1 + M.u_in) * (1 + gamma_n(in.d + 3.0, M.u_a)) - 1;
    const double beta = r.fwd.lse_bound, lse = std::fabs(r.fwd.lse);
    for (long j = 0; j < n; ++j) {
        if (reference) {
            T.p[j] = r.p[j], T.kappa[j] = r.s.kappa_ref[j];
            continue;
        }
        const double e = f_logit * r.s.A[j] + (in.d + 3.0) * M.tau_a;
        const double arg =
            e + beta + M.u_a * (std::fabs(r.s.x[j] - r.fwd.lse) + e + beta) + M.u_a * (lse + beta);
        const double k_lse = std::exp(arg) * (1 + M.c_exp * M.u_a) * (1 + M.u_p) * (1 + M.u_in) - 1;
        T.p[j] = r.p[j] / (1 - r.phi), T.kappa[j] = std::max(r.s.kappa[j], k_lse);
    }
}

// Output rounding and the reference's error: the bound of one element from the kernel's
// pre-rounding bound `B` and the reference's `R` (both before kBoundSafety).
void finish_element(const Units& U, double B, double R, double value, double& bound,
                    double& ref_error) {
    ref_error = R * kBoundSafety;
    bound = ((1 + U.u_out) * B + U.u_out * (std::fabs(value) + R) + U.tau_out + R) * kBoundSafety;
}

ReferenceTensor tensor_like(const Array& a) {
    ReferenceTensor t;
    t.value.shape = a.shape;
    const size_t n = a.values.size();
    t.value.values.assign(n, 0.0);
    t.bound.assign(n, 0.0), t.ref_error.assign(n, 0.0), t.first.assign(n, 0.0);
    return t;
}

// The weight error of a kernel rounding once per intermediate (the forward's floor weight).
double first_weight(const Units& U, const RowSoftmax& r) {
    return 2 * U.u_a * r.fwd.max_abs_logit + 4 * U.u_a + U.u_p;
}

// The per-row state of both references.
struct RowState {
    RowSoftmax r;
    KeyTerms TK, TR;  // the kernel's (widened) and the reference's terms
};

// Calls fn(b, h, row, in) for every query row that sees a key, after its softmax and both
// models' weights are in `st`.
template <class F>
void for_each_row(const AttentionProblem& p, const ProblemShape& sh, double s,
                  const RoundingModel& kernel, RowState& st, F&& fn) {
    const RoundingModel ref = reference_model();
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h)
            for (long i = 0; i < sh.Nq; ++i) {
                const RowInput in = detail::row_input(sh, p, p.mask, s, b, h, i);
                if (in.n == 0) continue;
                row_softmax(in, kernel, st.r);
                weights(in, st.r, kernel, false, st.TK);
                weights(in, st.r, ref, true, st.TR);
                fn(b, h, (b * sh.H + h) * sh.Nq + i, in);
            }
}

}  // namespace

VjpReference reference_vjp(const AttentionProblem& p, const Array& dout,
                           const RoundingModel& kernel) {
    const ProblemShape sh = problem_shape(p);
    detail::check_shape(dout, sh.out_shape(), "do");
    const double s = effective_scale(p, sh);
    const Units UK = units(kernel), UR = units(reference_model());
    VjpReference out{tensor_like(p.q), tensor_like(p.k), tensor_like(p.v)};
    // dK and dV sum over at most m query rows (D6), (D7).
    const long group = sh.H / sh.H_kv;  // exact: H_kv divides H (problem_shape)
    const double m = static_cast<double>(sh.Nq * group);
    const double gk = (1 + UK.u_in) * (1 + UK.gamma(m + 2));
    const double gv = (1 + UK.u_p) * (1 + UK.u_in) * (1 + UK.gamma(m + 1));
    const double grk = UR.gamma(m + 2), grv = UR.gamma(m + 1);
    std::vector<char> infinite(static_cast<size_t>(sh.B * sh.H_kv * sh.Nk), 0);
    RowState st;
    RowSoftmax& r = st.r;
    KeyTerms &TK = st.TK, &TR = st.TR;
    std::vector<double> dP, adP, ds, f, cols;
    const long d = sh.d, dv = sh.dv;
    for_each_row(p, sh, s, kernel, st, [&](long b, long h, long row, const RowInput& in) {
        const long n = in.n;
        const double* g = dout.values.data() + row * dv;
        const long kv0 = (b * sh.H_kv + sh.kv_head(h)) * sh.Nk;
        const std::vector<double>& o = r.fwd.o;
        double D = 0, eDR = 0, eDK = 0, absD = 0, absDw = 0, eD1 = 0;
        for (long c = 0; c < dv; ++c) {
            D += g[c] * o[c];
            const double ag = std::fabs(g[c]);
            absD += ag * std::fabs(o[c]);
            absDw += ag * (std::fabs(o[c]) + 2 * r.fwd.ref_error[c]);
            eDR += ag * r.fwd.ref_error[c];
            eDK += ag * (r.fwd.bound[c] + r.fwd.ref_error[c]);
        }
        // (D3a): D from the stored O, for both models.
        const double gDR = UR.gamma(dv + 1.0);
        const double gDK = (1 + UK.u_in) * (1 + UK.gamma(dv + 1.0)) - 1;
        eDR = eDR * (1 + gDR) + gDR * absD + (dv + 1.0) * UR.tau_a;
        eDK = eDK * (1 + gDK) + gDK * absDw + (dv + 1.0) * UK.tau_a;
        // (D2): dP_j and its error.
        dP.resize(static_cast<size_t>(n)), adP.resize(static_cast<size_t>(n));
        TR.y.resize(static_cast<size_t>(n)), TR.err_y.resize(static_cast<size_t>(n));
        TK.y.resize(static_cast<size_t>(n)), TK.err_y.resize(static_cast<size_t>(n));
        TR.a.resize(static_cast<size_t>(n)), TK.a.resize(static_cast<size_t>(n));
        const double gPR = UR.gamma(static_cast<double>(dv));
        const double gPK =
            (1 + UK.u_in) * (1 + UK.u_in) * (1 + UK.gamma(static_cast<double>(dv))) - 1;
        for (long j = 0; j < n; ++j) {
            const double* v = in.V + j * dv;
            double x = 0, ax = 0;
            for (long c = 0; c < dv; ++c) x += g[c] * v[c], ax += std::fabs(g[c] * v[c]);
            dP[j] = x, adP[j] = ax;
            TR.y[j] = std::fabs(x), TR.err_y[j] = gPR * ax + dv * UR.tau_a;
            TK.y[j] = std::fabs(x) + 2 * TR.err_y[j];
            TK.err_y[j] = gPK * ax + dv * UK.tau_a;
            TR.a[j] = std::fabs(x - D);
        }
        // The first-order error of D: the weights' (sum_j delta p_j dP_j), O's storage and D's
        // own rounding.
        const double w = first_weight(UK, r);
        for (long j = 0; j < n; ++j) eD1 += w * r.p[j] * TR.y[j];
        for (long c = 0; c < dv; ++c) eD1 += (UK.u_out + UK.u_a) * std::fabs(g[c] * o[c]);
        // (D3b): D as sum_j p_j dP_j; the kernel may use either.
        eDK = std::max(eDK, weighted_sum_error(UK, TK, n));
        for (long j = 0; j < n; ++j) TK.a[j] = TR.a[j] + 2 * (TR.err_y[j] + eDR);
        product_errors(UR, TR, n, eDR, 2);  // (D4)
        product_errors(UK, TK, n, eDK, 4);
        ds.resize(static_cast<size_t>(n)), f.resize(static_cast<size_t>(n));
        for (long j = 0; j < n; ++j) {
            ds[j] = r.p[j] * (dP[j] - D);
            f[j] = r.p[j] * ((w + 2 * UK.u_a + UK.u_p) * TR.a[j] + UK.u_a * adP[j] + eD1);
        }
        // (D5): the row of dQ.
        const double gq = (1 + UK.u_in) * (1 + UK.gamma(n + 2.0)), grq = UR.gamma(n + 2.0);
        cols.assign(static_cast<size_t>(6 * d), 0.0);  // row-major walk of K: 6 sums per c
        for (long j = 0; j < n; ++j) {
            const double* kr = in.K + j * d;
            const double w[6] = {ds[j],     TK.eta[j],        std::fabs(ds[j]) + 2 * TR.eta[j],
                                 TR.eta[j], std::fabs(ds[j]), f[j]};
            for (long c = 0; c < d; ++c) {
                double* acc = cols.data() + 6 * c;
                const double ak = std::fabs(kr[c]);
                acc[0] += w[0] * kr[c];
                for (int t = 1; t < 6; ++t) acc[t] += w[t] * ak;
            }
        }
        for (long c = 0; c < d; ++c) {
            const double* S = cols.data() + 6 * c;  // x, SK, SK2, SR, SR2, F
            const size_t e = static_cast<size_t>(row * d + c);
            const double B = s * (gq * S[1] + (gq - 1) * S[2]) + (n + 2.0) * UK.tau_a;
            const double R = 2 * (s * ((1 + grq) * S[3] + grq * S[4]) + (n + 2.0) * UR.tau_a);
            out.dq.value.values[e] = s * S[0];
            finish_element(UK, B, R, s * S[0], out.dq.bound[e], out.dq.ref_error[e]);
            if (!r.finite) out.dq.bound[e] = kInf;
            out.dq.first[e] = s * (S[5] + UK.u_a * S[4]);
        }
        // (D6), (D7): this row's terms of dK and dV, summed before the output rounding.
        for (long j = 0; j < n; ++j) {
            const long kvj = kv0 + j;
            if (!r.finite) infinite[kvj] = 1;
            const double ads = std::fabs(ds[j]);
            for (long c = 0; c < d; ++c) {
                const double aq = std::fabs(in.q[c]);
                const size_t e = static_cast<size_t>(kvj * d + c);
                out.dk.value.values[e] += s * ds[j] * in.q[c];
                out.dk.bound[e] += s * aq * (gk * TK.eta[j] + (gk - 1) * (ads + 2 * TR.eta[j]));
                out.dk.ref_error[e] += s * aq * ((1 + grk) * TR.eta[j] + grk * ads);
                out.dk.first[e] += s * aq * (f[j] + UK.u_a * ads);
            }
            for (long c = 0; c < dv; ++c) {
                const double ag = std::fabs(g[c]);
                const size_t e = static_cast<size_t>(kvj * dv + c);
                out.dv.value.values[e] += r.p[j] * g[c];
                out.dv.bound[e] += ag * (gv * (TK.p[j] * TK.kappa[j] + UK.nu) + (gv - 1) * TK.p[j]);
                out.dv.ref_error[e] +=
                    ag * ((1 + grv) * (r.p[j] * TR.kappa[j] + UR.nu) + grv * r.p[j]);
                out.dv.first[e] += ag * w * r.p[j];
            }
        }
    });
    struct Sum {
        ReferenceTensor* t;
        double terms;  // roundings of each element's sum
        long width;
    };
    for (const Sum& x : {Sum{&out.dk, m + 2, d}, Sum{&out.dv, m + 1, dv}})
        for (size_t e = 0; e < x.t->bound.size(); ++e) {
            const double B = x.t->bound[e] + x.terms * UK.tau_a;
            const double R = 2 * (x.t->ref_error[e] + x.terms * UR.tau_a);
            finish_element(UK, B, R, x.t->value.values[e], x.t->bound[e], x.t->ref_error[e]);
            if (infinite[e / static_cast<size_t>(x.width)]) x.t->bound[e] = kInf;
        }
    return out;
}

ReferenceTensor reference_jvp(const AttentionProblem& p, const Array& tq, const Array& tk,
                              const Array& tv, const RoundingModel& kernel) {
    const ProblemShape sh = problem_shape(p);
    detail::check_shape(tq, p.q.shape, "tq");
    detail::check_shape(tk, p.k.shape, "tk");
    detail::check_shape(tv, p.v.shape, "tv");
    const double s = effective_scale(p, sh);
    const Units UK = units(kernel), UR = units(reference_model());
    Array shaped;
    shaped.shape = sh.out_shape();
    shaped.values.assign(static_cast<size_t>(sh.B * sh.H * sh.Nq * sh.dv), 0.0);
    ReferenceTensor out = tensor_like(shaped);
    RowState st;
    RowSoftmax& r = st.r;
    KeyTerms &TK = st.TK, &TR = st.TR;
    std::vector<double> ds, ads, f, cols;
    const long d = sh.d, dv = sh.dv;
    const double nd = 2.0 * d + 3;  // the roundings of one logit tangent (D8)
    const double gsR = UR.gamma(nd), gsK = (1 + UK.u_in) * (1 + UK.u_in) * (1 + UK.gamma(nd)) - 1;
    for_each_row(p, sh, s, kernel, st, [&](long b, long h, long row, const RowInput& in) {
        const long n = in.n;
        const long kv = b * sh.H_kv + sh.kv_head(h);
        const double* tqi = tq.values.data() + row * d;
        const double* tK = tk.values.data() + kv * sh.Nk * d;
        const double* tV = tv.values.data() + kv * sh.Nk * dv;
        ds.resize(static_cast<size_t>(n)), f.resize(static_cast<size_t>(n));
        ads.resize(static_cast<size_t>(n));
        for (KeyTerms* T : {&TK, &TR}) {
            T->y.resize(static_cast<size_t>(n)), T->err_y.resize(static_cast<size_t>(n));
            T->a.resize(static_cast<size_t>(n));
        }
        double mean = 0, spds = 0, sp = 0;
        for (long j = 0; j < n; ++j) {
            const double* k = in.K + j * d;
            double x = 0, ax = 0;
            for (long c = 0; c < d; ++c) {
                x += tqi[c] * k[c] + in.q[c] * tK[j * d + c];
                ax += std::fabs(tqi[c] * k[c]) + std::fabs(in.q[c] * tK[j * d + c]);
            }
            ds[j] = s * x;
            TR.y[j] = std::fabs(ds[j]), TR.err_y[j] = gsR * s * ax + nd * UR.tau_a;
            TK.y[j] = TR.y[j] + 2 * TR.err_y[j];
            TK.err_y[j] = gsK * s * ax + nd * UK.tau_a;
            mean += r.p[j] * ds[j], spds += r.p[j] * s * ax, sp += r.p[j] * TR.y[j];
            ads[j] = s * ax;
        }
        const double muR = weighted_sum_error(UR, TR, n);  // (D8)
        const double muK = weighted_sum_error(UK, TK, n);
        const double w = first_weight(UK, r);
        for (long j = 0; j < n; ++j) {
            TR.a[j] = std::fabs(ds[j] - mean);
            TK.a[j] = TR.a[j] + 2 * (TR.err_y[j] + muR);
            f[j] =
                r.p[j] * ((w + 2 * UK.u_a + UK.u_p) * TR.a[j] + UK.u_a * (ads[j] + spds) + w * sp);
        }
        product_errors(UR, TR, n, muR, 2);
        product_errors(UK, TK, n, muK, 2);
        // (D9): dO_c = sum_j p_j (ds_j - m) v_jc + sum_j p_j tv_jc, 2n terms.
        const double go = (1 + UK.u_in) * (1 + UK.gamma(2.0 * n + 1)), gro = UR.gamma(2.0 * n + 1);
        cols.assign(static_cast<size_t>(6 * dv), 0.0);  // row-major walk of V and tV
        for (long j = 0; j < n; ++j) {
            const double* vr = in.V + j * dv;
            const double* tr = tV + j * dv;
            const double wj = r.p[j] * (ds[j] - mean);
            // weights of |v| and of |tv| in S1K, S2K, S1R, S2R, F
            const double wv[5] = {TK.eta[j], std::fabs(wj) + 2 * TR.eta[j], TR.eta[j],
                                  std::fabs(wj), f[j]};
            const double wt[5] = {TK.p[j] * TK.kappa[j] + UK.nu, TK.p[j],
                                  r.p[j] * TR.kappa[j] + UR.nu, r.p[j], w * r.p[j]};
            for (long c = 0; c < dv; ++c) {
                double* acc = cols.data() + 6 * c;
                const double av = std::fabs(vr[c]), at = std::fabs(tr[c]);
                acc[0] += wj * vr[c] + r.p[j] * tr[c];
                for (int t = 0; t < 5; ++t) acc[t + 1] += wv[t] * av + wt[t] * at;
            }
        }
        for (long c = 0; c < dv; ++c) {
            const double* S = cols.data() + 6 * c;  // x, S1K, S2K, S1R, S2R, F
            const size_t e = static_cast<size_t>(row * dv + c);
            const double B = go * S[1] + (go - 1) * S[2] + (2.0 * n + 1) * UK.tau_a;
            const double R = 2 * ((1 + gro) * S[3] + gro * S[4] + (2.0 * n + 1) * UR.tau_a);
            out.value.values[e] = S[0];
            finish_element(UK, B, R, S[0], out.bound[e], out.ref_error[e]);
            if (!r.finite) out.bound[e] = kInf;
            out.first[e] = S[5] + UK.u_a * S[4];
        }
    });
    return out;
}

}  // namespace attnspec::kernels
