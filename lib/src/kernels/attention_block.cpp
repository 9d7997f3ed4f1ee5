// check-kernel attention a block of query rows at a time through BLAS (attention_block.hpp).
#include "attention_block.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "attention_rows.hpp"
#include "attnspec/kernels/attention_baseline.hpp"
#include "attnspec/kernels/exp_lanes.hpp"

namespace attnspec::kernels::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// C (m x n, row-major, ldc) = alpha A (m x k, lda) op(B) (+ beta C); B is n x k (trans) or k x n.
void gemm(long m, long n, long k, double alpha, const double* A, long lda, const double* B,
          long ldb, bool trans_b, double* C, long ldc) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, int(m), int(n),
                int(k), alpha, A, int(lda), B, int(ldb), 0.0, C, int(ldc));
}
void gemm(long m, long n, long k, float alpha, const float* A, long lda, const float* B, long ldb,
          bool trans_b, float* C, long ldc) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, int(m), int(n),
                int(k), alpha, A, int(lda), B, int(ldb), 0.0f, C, int(ldc));
}

// p_j = exp(x_j - m) in fp32, correctly rounded as float(std::exp(double(x_j - m))) gives it:
// exp_lanes' value e (within 4 u of exp) and std::exp's (within 1 ulp, 2 u) lie within 6 u e of
// each other, so where e (1 - 2^-48) and e (1 + 2^-48) round to the same float (2^-48 = 32 u),
// so does std::exp's value; elsewhere (about 2^-23 of the keys) std::exp itself.
void fp32_exp(const float* x, float m, long n, std::vector<double>& t, std::vector<double>& e,
              float* p) {
    t.resize(static_cast<size_t>(n)), e.resize(static_cast<size_t>(n));
    for (long j = 0; j < n; ++j) t[j] = static_cast<double>(x[j] - m);
    exp_lanes(t.data(), e.data(), n);
    int unsure = 0;
    for (long j = 0; j < n; ++j) {
        const float lo = static_cast<float>(e[j] * (1 - 0x1p-48));
        const float hi = static_cast<float>(e[j] * (1 + 0x1p-48));
        p[j] = lo, unsure |= lo != hi;
    }
    if (unsure)
        for (long j = 0; j < n; ++j)
            if (p[j] != static_cast<float>(e[j] * (1 + 0x1p-48)))
                p[j] = static_cast<float>(std::exp(t[j]));
}

long max_visible(const RowInput* in, long count) {
    long n = 0;
    for (long r = 0; r < count; ++r) n = std::max(n, in[r].n);
    return n;
}

}  // namespace

void KvHead::set(const double* K_, const double* V, long N_, long d_, long dv_) {
    K = K_, N = N_, d = d_, dv = dv_;
    absK.resize(static_cast<size_t>(N * d));
    for (long e = 0; e < N * d; ++e) absK[e] = std::fabs(K[e]);
    VV.resize(static_cast<size_t>(N * 2 * dv)), absV.resize(static_cast<size_t>(N * dv));
    sum_abs.resize(static_cast<size_t>(N * dv)), v_max.resize(static_cast<size_t>(N * dv));
    for (long j = 0; j < N; ++j)
        for (long c = 0; c < dv; ++c) {
            const double v = V[j * dv + c], av = std::fabs(v);
            VV[j * 2 * dv + c] = v, VV[j * 2 * dv + dv + c] = av, absV[j * dv + c] = av;
            const long e = j * dv + c;
            sum_abs[e] = (j ? sum_abs[e - dv] : 0.0) + av;
            v_max[e] = std::max(j ? v_max[e - dv] : 0.0, av);
        }
}

void analyze_block(const RowInput* in, long count, const KvHead& kv, const RoundingModel& kernel,
                   BlockScratch& s, RowAnalysis* out) {
    const long n_max = max_visible(in, count), d = kv.d, dv = kv.dv;
    for (long r = 0; r < count; ++r)
        if (in[r].n == 0) analyze_row(in[r], kernel, s.row, out[r]);  // fully masked
    if (n_max == 0) return;
    const size_t cells = static_cast<size_t>(count * n_max);
    s.Q.resize(static_cast<size_t>(count * d));
    for (long e = 0; e < count * d; ++e) s.Q[e] = std::fabs(in[0].q[e]);
    s.X.resize(cells), s.A.resize(cells), s.P.resize(cells), s.W.resize(2 * cells);
    const double scale = in[0].scale;
    gemm(count, n_max, d, scale, in[0].q, d, kv.K, d, true, s.X.data(), n_max);
    gemm(count, n_max, d, scale, s.Q.data(), d, kv.absK.data(), d, true, s.A.data(), n_max);
    s.t.resize(static_cast<size_t>(n_max));
    s.kK.resize(cells), s.kR.resize(cells);
    std::vector<ModelRow> K(static_cast<size_t>(count)), R(K);
    std::vector<double> L(static_cast<size_t>(count)), M(L);
    for (long r = 0; r < count; ++r) {
        const long n = in[r].n;
        double* p = s.P.data() + r * n_max;
        double *wk = s.W.data() + r * n_max, *wr = s.W.data() + cells + r * n_max;
        for (double* row : {p, wk, wr}) std::fill(row + n, row + n_max, 0.0);  // keys not seen
        if (n == 0) continue;
        const double *x = s.X.data() + r * n_max, *A = s.A.data() + r * n_max;
        RowLogits lg;
        lg.x = x, lg.A = A, lg.t = s.t.data(), lg.n = n, lg.d = d;
        double lo = 0, m = 0;
        lane_min_max(x, n, lo, m);
        const double A_max = lane_max(A, n, 0.0);
        // max(0, |x_j|) over the x_j that are not NaN (both skip NaN, as lane_max does)
        const double big = lo <= m ? std::max(std::fabs(lo), std::fabs(m)) : 0.0;
        double* t = s.t.data();
        for (long j = 0; j < n; ++j) t[j] = x[j] - m;
        if (lo - m >= -kExpLanesRange)  // every x_j - m in [lo - m, 0] (rounding is monotone)
            exp_lanes_in_range(t, t, n);
        else
            exp_lanes(t, t, n);
        const double l = sum_in_order(t, n);
        for (long j = 0; j < n; ++j) p[j] = t[j] / l;
        lg.m = m, lg.l = l, lg.A_max = A_max, lg.p = p;
        out[r].max_abs_logit = big, out[r].masked = false;
        R[r] = model_row(reference_model(), lg, 0.0, s.kR.data() + r * n_max);
        const double phi = R[r].k_max;
        const bool ok = R[r].finite && phi < 0.5;
        K[r] = model_row(kernel, lg, ok ? phi : 0.0, s.kK.data() + r * n_max);
        const double *kK = s.kK.data() + r * n_max, *kR = s.kR.data() + r * n_max;
        if (K[r].finite)
            for (long j = 0; j < n; ++j) wk[j] = p[j] * kK[j];
        else
            std::fill(wk, wk + n, 0.0);
        if (R[r].finite)
            for (long j = 0; j < n; ++j) wr[j] = p[j] * kR[j];
        else
            std::fill(wr, wr + n, 0.0);
        L[r] = l, M[r] = m;
    }
    s.OPV.resize(static_cast<size_t>(count * 2 * dv)),
        s.B.resize(static_cast<size_t>(2 * count * dv));
    gemm(count, 2 * dv, n_max, 1.0, s.P.data(), n_max, kv.VV.data(), 2 * dv, false, s.OPV.data(),
         2 * dv);
    gemm(2 * count, dv, n_max, 1.0, s.W.data(), n_max, kv.absV.data(), dv, false, s.B.data(), dv);
    for (long r = 0; r < count; ++r) {
        const long n = in[r].n;
        if (n == 0) continue;
        const double* opv = s.OPV.data() + r * 2 * dv;
        out[r].o.assign(opv, opv + dv);
        out[r].lse = M[r] + std::log(L[r]);
        const RowSums sums{opv + dv, s.B.data() + r * dv, s.B.data() + (count + r) * dv,
                           kv.sum_abs.data() + (n - 1) * dv, kv.v_max.data() + (n - 1) * dv};
        finish_row(kernel, K[r], R[r], R[r].k_max, n, dv, sums, std::log(L[r]), out[r]);
    }
}

void BaseHead::set(const double* K_, const double* V_, long N, long d, long dv, Format storage_,
                   Format accumulate_) {
    K = K_, V = V_, storage = storage_, accumulate = accumulate_;
    A = unit_roundoff(accumulate) < unit_roundoff(storage) ? accumulate : storage;
    single = A == Format::fp32 && storage != Format::fp64;
    rows = A == Format::fp32 && storage == Format::fp64;
    if (!single) return;
    Kf.assign(K, K + N * d), Vf.assign(V, V + N * dv);  // exact: fp32 holds the storage values
}

void baseline_block(const RowInput* in, long count, const BaseHead& bh, BlockScratch& s, double* o,
                    double* lse) {
    const long n_max = max_visible(in, count), d = in[0].d, dv = in[0].dv;
    if (bh.rows || n_max == 0) {
        std::vector<double> row;
        for (long r = 0; r < count; ++r) {
            baseline_row(in[r], bh.storage, bh.accumulate, row, lse[r], s.t);
            std::copy(row.begin(), row.end(), o + r * dv);
        }
        return;
    }
    const size_t cells = static_cast<size_t>(count * n_max);
    const Format out_format = output_format(bh.storage);
    std::vector<double> ml(static_cast<size_t>(2 * count));
    if (bh.single) {
        s.Qf.assign(in[0].q, in[0].q + count * d), s.Xf.resize(cells), s.Pf.resize(cells);
        const float scale = static_cast<float>(in[0].scale);
        gemm(count, n_max, d, scale, s.Qf.data(), d, bh.Kf.data(), d, true, s.Xf.data(), n_max);
        for (long r = 0; r < count; ++r) {
            const long n = in[r].n;
            const float* x = s.Xf.data() + r * n_max;
            float* p = s.Pf.data() + r * n_max;
            std::fill(p + n, p + n_max, 0.0f);  // keys this row does not see
            const float m = lane_max(x, n, -std::numeric_limits<float>::infinity());
            float l = 0;
            fp32_exp(x, m, n, s.t, s.e, p);
            for (long j = 0; j < n; ++j) l += p[j];
            if (bh.storage == Format::fp32)  // round_to(p, fp32) = p for a float p
                for (long j = 0; j < n; ++j) p[j] = p[j] / l;
            else
                for (long j = 0; j < n; ++j)
                    p[j] = static_cast<float>(round_to(static_cast<double>(p[j] / l), bh.storage));
            ml[2 * r] = m, ml[2 * r + 1] = l;
        }
        s.Of.resize(static_cast<size_t>(count * dv));
        gemm(count, dv, n_max, 1.0f, s.Pf.data(), n_max, bh.Vf.data(), dv, false, s.Of.data(), dv);
        for (long e = 0; e < count * dv; ++e) o[e] = round_to(s.Of[e], out_format);
    } else {
        s.X.resize(cells), s.P.resize(cells);
        gemm(count, n_max, d, in[0].scale, in[0].q, d, bh.K, d, true, s.X.data(), n_max);
        for (long r = 0; r < count; ++r) {
            const long n = in[r].n;
            const double* x = s.X.data() + r * n_max;
            double* p = s.P.data() + r * n_max;
            std::fill(p + n, p + n_max, 0.0);  // keys this row does not see
            const double m = lane_max(x, n, -kInf);
            double l = 0;
            for (long j = 0; j < n; ++j) l += (p[j] = std::exp(x[j] - m));
            for (long j = 0; j < n; ++j) p[j] = round_to(p[j] / l, bh.storage);
            ml[2 * r] = m, ml[2 * r + 1] = l;
        }
        gemm(count, dv, n_max, 1.0, s.P.data(), n_max, bh.V, dv, false, o, dv);
        for (long e = 0; e < count * dv; ++e) o[e] = round_to(o[e], out_format);
    }
    for (long r = 0; r < count; ++r) {
        if (in[r].n == 0) {
            std::fill(o + r * dv, o + (r + 1) * dv, 0.0), lse[r] = -kInf;
            continue;
        }
        lse[r] = round_to(ml[2 * r] + round_to(std::log(ml[2 * r + 1]), bh.A), bh.A);
    }
}

}  // namespace attnspec::kernels::detail
