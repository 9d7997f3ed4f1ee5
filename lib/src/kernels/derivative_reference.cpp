// The float64 reference of attention-jvp and its rounding bounds, row by row (attention-vjp:
// derivative_vjp.cpp; kernels/derivative_reference.hpp; proofs/kernel_tolerance.md, (D1)-(D9)).
#include "attnspec/kernels/derivative_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attention_rows.hpp"
#include "attnspec/base/parallel.hpp"
#include "attnspec/base/rounding.hpp"
#include "check_compare.hpp"
#include "derivative_terms.hpp"

namespace attnspec::kernels {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using namespace detail::terms;

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
    const double* absM = in.bias ? r.s.absM.data() : nullptr;
    for (long j = 0; j < n; ++j) {
        if (reference) {
            T.p[j] = r.p[j], T.kappa[j] = r.s.kappa_ref[j];
            continue;
        }
        const double e =
            detail::logit_error(M, f_logit * r.s.A[j] + (in.d + 3.0) * M.tau_a, absM, j, r.s.x[j]);
        const double arg =
            e + beta + M.u_a * (std::fabs(r.s.x[j] - r.fwd.lse) + e + beta) + M.u_a * (lse + beta);
        double k_lse = std::exp(arg) * (1 + M.c_exp * M.u_a) * (1 + M.u_p) * (1 + M.u_in) - 1;
        if (detail::negligible_weight(M, absM, r.s.x[j] - r.fwd.lse + arg)) k_lse = 0;
        T.p[j] = r.p[j] / (1 - r.phi), T.kappa[j] = std::max(r.s.kappa[j], k_lse);
    }
}

// The per-row state of both references and the scratch of one row's tangent (one per thread).
struct RowState {
    RowSoftmax r;
    KeyTerms TK, TR;  // the kernel's (widened) and the reference's terms
    std::vector<double> ds, ads, f, cols;
    std::vector<long> keys;  // the row's visible keys under a boolean/additive mask
};

constexpr long kRows = 64;  // query rows per work item of reference_jvp

}  // namespace

ReferenceTensor reference_jvp(const AttentionProblem& p, const Array& tq, const Array& tk,
                              const Array& tv, const RoundingModel& kernel, int threads) {
    const ProblemShape sh = problem_shape(p);
    detail::refuse_nonfinite_masked(p, {&tq, &tk, &tv}, "attention-jvp");
    detail::check_shape(tq, p.q.shape, "tq");
    detail::check_shape(tk, p.k.shape, "tk");
    detail::check_shape(tv, p.v.shape, "tv");
    const double s = effective_scale(p, sh);
    const Units UK = units(kernel), UR = units(reference_model());
    const RoundingModel ref = reference_model();
    Array shaped;
    shaped.shape = sh.out_shape();
    shaped.values.assign(static_cast<size_t>(sh.B * sh.H * sh.Nq * sh.dv), 0.0);
    ReferenceTensor out = tensor_like(shaped);
    const long d = sh.d, dv = sh.dv;
    const double nd = 2.0 * d + 3;  // the roundings of one logit tangent (D8)
    const double gsR = UR.gamma(nd), gsK = (1 + UK.u_in) * (1 + UK.u_in) * (1 + UK.gamma(nd)) - 1;
    // Query row `row` (batch b, head h, index i) into its own elements of `out`: every row is the
    // same computation on any thread, so the results do not depend on the thread count.
    const auto one_row = [&](long b, long h, long i, RowState& st) {
        const RowInput in = detail::row_input_any(sh, p, s, b, h, i, st.keys);
        const long n = in.n;
        if (n == 0) return;
        RowSoftmax& r = st.r;
        KeyTerms &TK = st.TK, &TR = st.TR;
        row_softmax(in, kernel, r);
        weights(in, r, kernel, false, TK);
        weights(in, r, ref, true, TR);
        const long row = (b * sh.H + h) * sh.Nq + i;
        std::vector<double>&ds = st.ds, &ads = st.ads, &f = st.f, &cols = st.cols;
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
            const double* k = in.K + in.key(j) * d;
            const double* tk_j = tK + in.key(j) * d;
            double x = 0, ax = 0;
            for (long c = 0; c < d; ++c) {
                x += tqi[c] * k[c] + in.q[c] * tk_j[c];
                ax += std::fabs(tqi[c] * k[c]) + std::fabs(in.q[c] * tk_j[c]);
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
        const double w = first_weight(UK, r.fwd.max_abs_logit);
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
            const double* vr = in.V + in.key(j) * dv;
            const double* tr = tV + in.key(j) * dv;
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
    };
    const long rows = sh.B * sh.H * sh.Nq, items = (rows + kRows - 1) / kRows;
    parallel_for_ordered(static_cast<size_t>(items), threads > 0 ? threads : available_threads(),
                         [&](size_t k) {
                             thread_local RowState st;  // reused by the calling thread
                             const long r0 = static_cast<long>(k) * kRows;
                             for (long row = r0; row < std::min(rows, r0 + kRows); ++row)
                                 one_row(row / (sh.H * sh.Nq), row / sh.Nq % sh.H, row % sh.Nq, st);
                         });
    return out;
}

}  // namespace attnspec::kernels
