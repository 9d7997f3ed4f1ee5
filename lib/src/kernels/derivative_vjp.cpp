// The float64 reference of attention-vjp and its rounding bounds, a block of query rows of one
// head at a time with the products through BLAS (kernels/derivative_reference.hpp; the derivation
// is proofs/kernel_tolerance.md, (D1)-(D7)).
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "attention_block.hpp"
#include "attention_rows.hpp"
#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/base/parallel.hpp"
#include "attnspec/kernels/derivative_reference.hpp"
#include "check_compare.hpp"
#include "derivative_terms.hpp"

namespace attnspec::kernels {
namespace {

using namespace detail::terms;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr long kBlock = 64;

// C (m x n) = alpha op(A) op(B) + beta C, row-major.
void gemm(bool ta, bool tb, long m, long n, long k, double alpha, const double* A, long lda,
          const double* B, long ldb, double beta, double* C, long ldc) {
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                int(m), int(n), int(k), alpha, A, int(lda), B, int(ldb), beta, C, int(ldc));
}

bool finite(const double* x, long n) {
    return std::all_of(x, x + n, [](double y) { return std::isfinite(y); });
}

// One head's sums over its query rows of dK and dV (value, kernel bound, reference error, first
// order: 4 x N_k x d and 4 x N_k x d_v) and the keys some row without a finite bound sees.
struct HeadSums {
    std::vector<double> k, v;
    std::vector<char> infinite;
};

// What every row's bound shares.
struct Setup {
    const AttentionProblem& p;
    const ProblemShape sh;
    const Array& dout;
    const RoundingModel& kernel;
    double s;
    Units UK, UR;
    double gk, gv, grk, grv;
};

// Per-block scratch beyond the forward's.
struct VjpScratch {
    detail::BlockScratch fwd;
    std::vector<RowAnalysis> rows;
    std::vector<RowInput> in;
    std::vector<double> absQ, absG, dP, adP, DS, W5, WK, WV, SQ;
    KeyTerms TK, TR;
    std::vector<double> ds, f;
    std::vector<std::vector<long>> keys;  // boolean/additive masks: each row's visible keys
    std::vector<double> Pc, absM;         // and its packed weights and |M_j| (additive)
};

// analyze_block's results under a boolean or additive mask, where each row sees its own keys:
// every row through analyze_row, X, A, kK, kR and (w.Pc, w.absM) p_j, |M_j| packed (entry j of
// row r at r N_k: its j-th visible key), P scattered to the keys' columns (0 elsewhere), so that
// the products over all N_k keys give a masked key nothing.
void analyze_masked(VjpScratch& w, long count, long Nk, const RoundingModel& kernel) {
    detail::BlockScratch& f = w.fwd;
    const size_t cells = static_cast<size_t>(count * Nk);
    for (auto* v : {&f.X, &f.A, &f.kK, &f.kR, &w.Pc, &w.absM}) v->resize(cells);
    f.P.assign(cells, 0.0);
    for (long r = 0; r < count; ++r) {
        const RowInput& in = w.in[r];
        analyze_row(in, kernel, f.row, w.rows[r]);
        const size_t at = static_cast<size_t>(r * Nk);
        double l = 0;
        for (long j = 0; j < in.n; ++j) l += f.row.t[j];
        for (long j = 0; j < in.n; ++j) {
            f.X[at + j] = f.row.x[j], f.A[at + j] = f.row.A[j];
            f.kK[at + j] = f.row.kappa[j], f.kR[at + j] = f.row.kappa_ref[j];
            w.Pc[at + j] = f.row.t[j] / l, f.P[at + in.key(j)] = w.Pc[at + j];
            w.absM[at + j] = in.bias ? f.row.absM[j] : 0.0;
        }
    }
}

// Rows i0 .. i0 + count - 1 of head (b, h): dQ into out, dK and dV terms into hs.
void block(const Setup& S, const detail::KvHead& kv, long b, long h, long i0, long count,
           VjpScratch& w, VjpReference& out, HeadSums& hs) {
    const ProblemShape& sh = S.sh;
    const long d = sh.d, dv = sh.dv;
    const Units &UK = S.UK, &UR = S.UR;
    w.in.resize(static_cast<size_t>(count)), w.rows.resize(static_cast<size_t>(count));
    w.keys.resize(static_cast<size_t>(count));
    const bool masked = general_mask(S.p.mask);  // rows see their own keys, not a prefix
    long n_max = 0;
    for (long r = 0; r < count; ++r) {
        w.in[r] = detail::row_input_any(sh, S.p, S.s, b, h, i0 + r, w.keys[r]);
        n_max = std::max(n_max, w.in[r].n);
    }
    if (n_max == 0) return;  // fully masked rows: dQ = 0, nothing to dK and dV
    if (masked) {
        n_max = sh.Nk;  // the products run over every key, a masked one with weight 0
        analyze_masked(w, count, n_max, S.kernel);
    } else {
        detail::analyze_block(w.in.data(), count, kv, S.kernel, w.fwd, w.rows.data());
    }
    const long row0 = (b * sh.H + h) * sh.Nq + i0;
    const double* G = S.dout.values.data() + row0 * dv;
    const double* Q = w.in[0].q;
    const size_t cells = static_cast<size_t>(count * n_max);
    w.absQ.resize(static_cast<size_t>(count * d)), w.absG.resize(static_cast<size_t>(count * dv));
    for (long e = 0; e < count * d; ++e) w.absQ[e] = std::fabs(Q[e]);
    for (long e = 0; e < count * dv; ++e) w.absG[e] = std::fabs(G[e]);
    w.dP.resize(cells), w.adP.resize(cells);
    gemm(false, true, count, n_max, dv, 1.0, G, dv, kv.VV.data(), 2 * dv, 0.0, w.dP.data(), n_max);
    gemm(false, true, count, n_max, dv, 1.0, w.absG.data(), dv, kv.absV.data(), dv, 0.0,
         w.adP.data(), n_max);
    w.DS.resize(cells), w.W5.resize(5 * cells), w.WK.resize(3 * cells), w.WV.resize(3 * cells);
    std::vector<char> row_finite(static_cast<size_t>(count), 0);
    const RoundingModel& M = S.kernel;
    const double f_logit = (1 + M.u_in) * (1 + M.u_in) * (1 + gamma_n(d + 3.0, M.u_a)) - 1;
    // exp(arg)(1 + c_exp u_a)(1 + u_p)(1 + u_in) - 1 = expm1(arg) c + (c - 1), (D1).
    const double cm1 = M.c_exp * M.u_a + M.u_p + M.u_in + M.c_exp * M.u_a * (M.u_p + M.u_in) +
                       M.u_p * M.u_in + M.c_exp * M.u_a * M.u_p * M.u_in;
    KeyTerms &TK = w.TK, &TR = w.TR;
    for (long r = 0; r < count; ++r) {
        const RowInput& in = w.in[r];
        const long n = in.n;
        const size_t at = static_cast<size_t>(r * n_max);
        for (double* m : {w.DS.data(), w.W5.data(), w.WK.data(), w.WV.data()}) {
            const long parts = m == w.DS.data() ? 1 : m == w.W5.data() ? 5 : 3;
            for (long t = 0; t < parts; ++t)  // zero weights for the keys this row does not see
                std::fill(m + t * cells + at + (masked ? 0 : n), m + t * cells + at + n_max, 0.0);
        }
        if (n == 0) continue;
        const RowAnalysis& fw = w.rows[r];
        // Per-key values packed (entry j: visible key in.key(j)); dP and the products' weights
        // by key column.
        const double *x = w.fwd.X.data() + at, *A = w.fwd.A.data() + at;
        const double *p = (masked ? w.Pc : w.fwd.P).data() + at, *kK = w.fwd.kK.data() + at;
        const double* kR = w.fwd.kR.data() + at;
        const double* absM = in.bias ? w.absM.data() + at : nullptr;
        double phi = 0;
        for (long j = 0; j < n; ++j) phi = std::max(phi, kR[j]);
        const bool fin = std::isfinite(fw.bound[0]) && std::isfinite(fw.ref_error[0]) &&
                         fw.denominator_error < 0.5 && phi < 0.5;
        row_finite[r] = fin;
        // (D1): the weights of both models.
        const size_t nn = static_cast<size_t>(n);
        for (KeyTerms* T : {&TK, &TR}) {
            T->p.resize(nn), T->kappa.resize(nn), T->y.resize(nn), T->err_y.resize(nn);
            T->a.resize(nn);
        }
        const double beta = fw.lse_bound, lse = std::fabs(fw.lse);
        for (long j = 0; j < n; ++j) {
            TR.p[j] = p[j], TR.kappa[j] = kR[j];
            const double e =
                detail::logit_error(M, f_logit * A[j] + (d + 3.0) * M.tau_a, absM, j, x[j]);
            const double arg =
                e + beta + M.u_a * (std::fabs(x[j] - fw.lse) + e + beta) + M.u_a * (lse + beta);
            double k_lse = detail::expm1_upper(arg) * (1 + cm1) + cm1;
            if (detail::negligible_weight(M, absM, x[j] - fw.lse + arg)) k_lse = 0;
            TK.p[j] = p[j] / (1 - phi), TK.kappa[j] = std::max(kK[j], k_lse);
        }
        const double* g = G + r * dv;
        const double* o = fw.o.data();
        double D = 0, eDR = 0, eDK = 0, absD = 0, absDw = 0, eD1 = 0;
        for (long c = 0; c < dv; ++c) {
            D += g[c] * o[c];
            const double ag = std::fabs(g[c]);
            absD += ag * std::fabs(o[c]);
            absDw += ag * (std::fabs(o[c]) + 2 * fw.ref_error[c]);
            eDR += ag * fw.ref_error[c];
            eDK += ag * (fw.bound[c] + fw.ref_error[c]);
        }
        // (D3a): D from the stored O, for both models.
        const double gDR = UR.gamma(dv + 1.0);
        const double gDK = (1 + UK.u_in) * (1 + UK.gamma(dv + 1.0)) - 1;
        eDR = eDR * (1 + gDR) + gDR * absD + (dv + 1.0) * UR.tau_a;
        eDK = eDK * (1 + gDK) + gDK * absDw + (dv + 1.0) * UK.tau_a;
        // (D2): dP_j and its error.
        const double* dP = w.dP.data() + at;
        const double* adP = w.adP.data() + at;
        const double gPR = UR.gamma(static_cast<double>(dv));
        const double gPK =
            (1 + UK.u_in) * (1 + UK.u_in) * (1 + UK.gamma(static_cast<double>(dv))) - 1;
        for (long j = 0; j < n; ++j) {
            const long kj = in.key(j);
            TR.y[j] = std::fabs(dP[kj]), TR.err_y[j] = gPR * adP[kj] + dv * UR.tau_a;
            TK.y[j] = std::fabs(dP[kj]) + 2 * TR.err_y[j];
            TK.err_y[j] = gPK * adP[kj] + dv * UK.tau_a;
            TR.a[j] = std::fabs(dP[kj] - D);
        }
        // The first-order error of D: the weights' (sum_j delta p_j dP_j), O's storage and D's
        // own rounding.
        const double wf = first_weight(UK, fw.max_abs_logit);
        for (long j = 0; j < n; ++j) eD1 += wf * p[j] * TR.y[j];
        for (long c = 0; c < dv; ++c) eD1 += (UK.u_out + UK.u_a) * std::fabs(g[c] * o[c]);
        // (D3b): D as sum_j p_j dP_j; the kernel may use either.
        eDK = std::max(eDK, weighted_sum_error(UK, TK, n));
        for (long j = 0; j < n; ++j) TK.a[j] = TR.a[j] + 2 * (TR.err_y[j] + eDR);
        product_errors(UR, TR, n, eDR, 2);  // (D4)
        product_errors(UK, TK, n, eDK, 4);
        // The weights of the products below: dS (dQ's value), the five sums of dQ's bound
        // (D5) over |K|, dK's three over |Q| (D6) and dV's three over |dO| (D7).
        double* DS = w.DS.data() + at;
        double* W5[5];
        for (int t = 0; t < 5; ++t) W5[t] = w.W5.data() + t * cells + at;
        double* WK[3] = {w.WK.data() + at, w.WK.data() + cells + at, w.WK.data() + 2 * cells + at};
        double* WV[3] = {w.WV.data() + at, w.WV.data() + cells + at, w.WV.data() + 2 * cells + at};
        for (long j = 0; j < n; ++j) {
            const long kj = in.key(j);
            const double ds = p[j] * (dP[kj] - D), ads = std::fabs(ds);
            const double fj =
                p[j] * ((wf + 2 * UK.u_a + UK.u_p) * TR.a[j] + UK.u_a * adP[kj] + eD1);
            DS[kj] = ds;
            W5[0][kj] = TK.eta[j], W5[1][kj] = ads + 2 * TR.eta[j], W5[2][kj] = TR.eta[j];
            W5[3][kj] = ads, W5[4][kj] = fj;
            WK[0][kj] = S.gk * TK.eta[j] + (S.gk - 1) * (ads + 2 * TR.eta[j]);
            WK[1][kj] = (1 + S.grk) * TR.eta[j] + S.grk * ads;
            WK[2][kj] = fj + UK.u_a * ads;
            WV[0][kj] = S.gv * (TK.p[j] * TK.kappa[j] + UK.nu) + (S.gv - 1) * TK.p[j];
            WV[1][kj] = (1 + S.grv) * (p[j] * TR.kappa[j] + UR.nu) + S.grv * p[j];
            WV[2][kj] = wf * p[j];
            if (!fin) hs.infinite[kj] = 1;
        }
    }
    // (D5): the rows of dQ.
    w.SQ.resize(static_cast<size_t>(6 * count * d));
    gemm(false, false, count, d, n_max, 1.0, w.DS.data(), n_max, kv.K, d, 0.0, w.SQ.data(), d);
    gemm(false, false, 5 * count, d, n_max, 1.0, w.W5.data(), n_max, kv.absK.data(), d, 0.0,
         w.SQ.data() + count * d, d);
    const double s = S.s;
    for (long r = 0; r < count; ++r) {
        const long n = w.in[r].n;
        if (n == 0) continue;
        const double gq = (1 + UK.u_in) * (1 + UK.gamma(n + 2.0)), grq = UR.gamma(n + 2.0);
        for (long c = 0; c < d; ++c) {
            double Sx[6];
            for (int t = 0; t < 6; ++t) Sx[t] = w.SQ[(t * count + r) * d + c];
            const size_t e = static_cast<size_t>((row0 + r) * d + c);
            const double B = s * (gq * Sx[1] + (gq - 1) * Sx[2]) + (n + 2.0) * UK.tau_a;
            const double R = 2 * (s * ((1 + grq) * Sx[3] + grq * Sx[4]) + (n + 2.0) * UR.tau_a);
            out.dq.value.values[e] = s * Sx[0];
            finish_element(UK, B, R, s * Sx[0], out.dq.bound[e], out.dq.ref_error[e]);
            if (!row_finite[r]) out.dq.bound[e] = kInf;
            out.dq.first[e] = s * (Sx[5] + UK.u_a * Sx[4]);
        }
    }
    // (D6), (D7): this block's terms of dK and dV, added to the head's sums.
    const long kd = sh.Nk * d, vd = sh.Nk * dv;
    gemm(true, false, n_max, d, count, s, w.DS.data(), n_max, Q, d, 1.0, hs.k.data(), d);
    for (int t = 0; t < 3; ++t)
        gemm(true, false, n_max, d, count, s, w.WK.data() + t * cells, n_max, w.absQ.data(), d, 1.0,
             hs.k.data() + (t + 1) * kd, d);
    gemm(true, false, n_max, dv, count, 1.0, w.fwd.P.data(), n_max, G, dv, 1.0, hs.v.data(), dv);
    for (int t = 0; t < 3; ++t)
        gemm(true, false, n_max, dv, count, 1.0, w.WV.data() + t * cells, n_max, w.absG.data(), dv,
             1.0, hs.v.data() + (t + 1) * vd, dv);
}

// Every row of head (b, h) into out (dQ) and hs (its dK and dV sums).
void head(const Setup& S, long b, long h, VjpScratch& w, VjpReference& out, HeadSums& hs) {
    const ProblemShape& sh = S.sh;
    const long kvh = b * sh.H_kv + sh.kv_head(h);
    const double* K = S.p.k.values.data() + kvh * sh.Nk * sh.d;
    const double* V = S.p.v.values.data() + kvh * sh.Nk * sh.dv;
    detail::KvHead kv;
    kv.set(K, V, sh.Nk, sh.d, sh.dv);
    hs.k.assign(static_cast<size_t>(4 * sh.Nk * sh.d), 0.0);
    hs.v.assign(static_cast<size_t>(4 * sh.Nk * sh.dv), 0.0);
    hs.infinite.assign(static_cast<size_t>(sh.Nk), 0);
    // Padding to a block's widest key count multiplies zeros by the other rows' operands: with a
    // causal mask and a non-finite operand in the head, one row at a time (0 x inf is NaN).
    const long q0 = (b * sh.H + h) * sh.Nq;
    const bool fin = finite(K, sh.Nk * sh.d) && finite(V, sh.Nk * sh.dv) &&
                     finite(S.p.q.values.data() + q0 * sh.d, sh.Nq * sh.d) &&
                     finite(S.dout.values.data() + q0 * sh.dv, sh.Nq * sh.dv);
    const long rows = S.p.mask == MaskKind::none || fin ? kBlock : 1;
    for (long i0 = 0; i0 < sh.Nq; i0 += rows)
        block(S, kv, b, h, i0, std::min(rows, sh.Nq - i0), w, out, hs);
}

}  // namespace

VjpReference reference_vjp(const AttentionProblem& p, const Array& dout,
                           const RoundingModel& kernel) {
    const ProblemShape sh = problem_shape(p);
    detail::check_shape(dout, sh.out_shape(), "do");
    detail::refuse_nonfinite_masked(p, {&dout}, "attention-vjp");
    Setup S{p, sh, dout, kernel, effective_scale(p, sh), units(kernel), units(reference_model()),
            0, 0,  0,    0};
    VjpReference out{tensor_like(p.q), tensor_like(p.k), tensor_like(p.v)};
    // dK and dV sum over at most m query rows (D6), (D7).
    const long group = sh.H / sh.H_kv;  // exact: H_kv divides H (problem_shape)
    const double m = static_cast<double>(sh.Nq * group);
    S.gk = (1 + S.UK.u_in) * (1 + S.UK.gamma(m + 2));
    S.gv = (1 + S.UK.u_p) * (1 + S.UK.u_in) * (1 + S.UK.gamma(m + 1));
    S.grk = S.UR.gamma(m + 2), S.grv = S.UR.gamma(m + 1);
    std::vector<char> infinite(static_cast<size_t>(sh.B * sh.H_kv * sh.Nk), 0);
    // Heads `threads` at a time, one BLAS thread each; each head's sums are added in head order,
    // so the results are the same for any thread count.
    const BlasThreadsScope one_blas_thread(1);
    const int threads = available_threads();
    const long heads = sh.B * sh.H;
    std::vector<HeadSums> sums(static_cast<size_t>(std::max(1, threads)));
    std::vector<VjpScratch> scratch(sums.size());
    const long kd = sh.Nk * sh.d, vd = sh.Nk * sh.dv;
    for (long h0 = 0; h0 < heads; h0 += threads) {
        const long wave = std::min<long>(threads, heads - h0);
        parallel_for_ordered(static_cast<size_t>(wave), threads, [&](size_t k) {
            const long bh = h0 + static_cast<long>(k);
            head(S, bh / sh.H, bh % sh.H, scratch[k], out, sums[k]);
        });
        for (long k = 0; k < wave; ++k) {
            const long bh = h0 + k, kvh = (bh / sh.H) * sh.H_kv + sh.kv_head(bh % sh.H);
            const HeadSums& hs = sums[static_cast<size_t>(k)];
            for (long e = 0; e < kd; ++e) {
                const size_t at = static_cast<size_t>(kvh * kd + e);
                out.dk.value.values[at] += hs.k[e], out.dk.bound[at] += hs.k[kd + e];
                out.dk.ref_error[at] += hs.k[2 * kd + e], out.dk.first[at] += hs.k[3 * kd + e];
            }
            for (long e = 0; e < vd; ++e) {
                const size_t at = static_cast<size_t>(kvh * vd + e);
                out.dv.value.values[at] += hs.v[e], out.dv.bound[at] += hs.v[vd + e];
                out.dv.ref_error[at] += hs.v[2 * vd + e], out.dv.first[at] += hs.v[3 * vd + e];
            }
            for (long j = 0; j < sh.Nk; ++j)
                if (hs.infinite[j]) infinite[static_cast<size_t>(kvh * sh.Nk + j)] = 1;
        }
    }
    struct Sum {
        ReferenceTensor* t;
        double terms;  // roundings of each element's sum
        long width;
    };
    const Units &UK = S.UK, &UR = S.UR;
    for (const Sum& x : {Sum{&out.dk, m + 2, sh.d}, Sum{&out.dv, m + 1, sh.dv}})
        for (size_t e = 0; e < x.t->bound.size(); ++e) {
            const double B = x.t->bound[e] + x.terms * UK.tau_a;
            const double R = 2 * (x.t->ref_error[e] + x.terms * UR.tau_a);
            finish_element(UK, B, R, x.t->value.values[e], x.t->bound[e], x.t->ref_error[e]);
            if (infinite[e / static_cast<size_t>(x.width)]) x.t->bound[e] = kInf;
        }
    return out;
}

}  // namespace attnspec::kernels
