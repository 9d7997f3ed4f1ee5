// attnspec's plain derivatives of attention at a declared precision
// (kernels/derivative_baseline.hpp).
#include "attnspec/kernels/derivative_baseline.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "attention_block.hpp"
#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/base/parallel.hpp"
#include "attnspec/kernels/attention_baseline.hpp"
#include "check_compare.hpp"

namespace attnspec::kernels {
namespace {

// The rounding of the accumulation format (the coarser of the two, as kernel_model takes it).
struct Rounder {
    Format A;
    double operator()(double x) const { return round_to(x, A); }
};

Rounder rounder(Format storage, Format accumulate) {
    return {unit_roundoff(accumulate) < unit_roundoff(storage) ? accumulate : storage};
}

double dot(const Rounder& ra, const double* x, const double* y, long n) {
    double s = 0;
    for (long c = 0; c < n; ++c) s = ra(s + ra(x[c] * y[c]));
    return s;
}

Array zeros(const std::vector<std::int64_t>& shape, std::size_t n) {
    Array a;
    a.shape = shape;
    a.values.assign(n, 0.0);
    return a;
}

void store(Array& a, Format storage) {
    for (double& x : a.values) x = round_to(x, output_format(storage));
}

// The row form of baseline_vjp (fp64 storage with fp32 accumulation, or a boolean or additive
// mask; see the header).
void baseline_vjp_rows(const AttentionProblem& p, const Array& dout, Format storage,
                       Format accumulate, Array& dq, Array& dk, Array& dv) {
    const ProblemShape sh = problem_shape(p);
    const Rounder ra = rounder(storage, accumulate);
    const double s = ra(effective_scale(p, sh));
    dq = zeros(p.q.shape, p.q.values.size());
    dk = zeros(p.k.shape, p.k.values.size());
    dv = zeros(p.v.shape, p.v.values.size());
    std::vector<double> w, o, dS;
    std::vector<long> keys;
    const long d = sh.d, nv = sh.dv;
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h)
            for (long i = 0; i < sh.Nq; ++i) {
                const RowInput in = detail::row_input_any(sh, p, s, b, h, i, keys);
                if (in.n == 0) continue;
                const long row = (b * sh.H + h) * sh.Nq + i;
                const long kv0 = (b * sh.H_kv + sh.kv_head(h)) * sh.Nk;
                const double* g = dout.values.data() + row * nv;
                double m = 0, l = 0;
                baseline_weights(in, storage, accumulate, w, m, l);
                baseline_pv(in, w, storage, accumulate, o);
                const double D = dot(ra, g, o.data(), nv);
                dS.resize(static_cast<size_t>(in.n));
                for (long j = 0; j < in.n; ++j)
                    dS[j] =
                        round_to(ra(w[j] * ra(dot(ra, g, in.V + in.key(j) * nv, nv) - D)), storage);
                for (long c = 0; c < d; ++c) {
                    double x = 0;
                    for (long j = 0; j < in.n; ++j) x = ra(x + ra(dS[j] * in.K[in.key(j) * d + c]));
                    dq.values[row * d + c] = ra(s * x);
                }
                for (long j = 0; j < in.n; ++j) {
                    double* k = dk.values.data() + (kv0 + in.key(j)) * d;
                    double* v = dv.values.data() + (kv0 + in.key(j)) * nv;
                    for (long c = 0; c < d; ++c) k[c] = ra(k[c] + ra(dS[j] * in.q[c]));
                    for (long c = 0; c < nv; ++c) v[c] = ra(v[c] + ra(w[j] * g[c]));
                }
            }
    for (double& x : dk.values) x = ra(s * x);
    store(dq, storage), store(dk, storage), store(dv, storage);
}

void gemm(bool ta, bool tb, long m, long n, long k, double alpha, const double* A, long lda,
          const double* B, long ldb, double beta, double* C, long ldc) {
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                int(m), int(n), int(k), alpha, A, int(lda), B, int(ldb), beta, C, int(ldc));
}
void gemm(bool ta, bool tb, long m, long n, long k, float alpha, const float* A, long lda,
          const float* B, long ldb, float beta, float* C, long ldc) {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                int(m), int(n), int(k), alpha, A, int(lda), B, int(ldb), beta, C, int(ldc));
}

bool finite(const double* x, long n) {
    return std::all_of(x, x + n, [](double y) { return std::isfinite(y); });
}

// The plain forward's stored weights of the last block (baseline_block), in T.
const float* weights_of(const detail::BlockScratch& s, float*) { return s.Pf.data(); }
const double* weights_of(const detail::BlockScratch& s, double*) { return s.P.data(); }

// One head's dK and dV sums in the accumulation format T (N_k x d, N_k x d_v).
template <class T>
struct HeadSums {
    std::vector<T> k, v, q, g, kt, vt, dP, dS, dq;
    std::vector<double> o, lse;
    std::vector<RowInput> in;
    detail::BlockScratch s;
};

// Every row of head (b, h): dQ into dq (already scaled and rounded in A), dK and dV into hs.
template <class T>
void vjp_head(const AttentionProblem& p, const Array& dout, const ProblemShape& sh, double sc,
              Format storage, Format accumulate, long b, long h, Array& dq, HeadSums<T>& hs) {
    const Rounder ra = rounder(storage, accumulate);
    const long d = sh.d, nv = sh.dv, Nk = sh.Nk;
    const long kvh = b * sh.H_kv + sh.kv_head(h), q0 = (b * sh.H + h) * sh.Nq;
    const double* K = p.k.values.data() + kvh * Nk * d;
    const double* V = p.v.values.data() + kvh * Nk * nv;
    const double* Q = p.q.values.data() + q0 * d;
    const double* G = dout.values.data() + q0 * nv;
    detail::BaseHead bh;
    bh.set(K, V, Nk, d, nv, storage, accumulate);
    hs.k.assign(static_cast<size_t>(Nk * d), T(0)), hs.v.assign(static_cast<size_t>(Nk * nv), T(0));
    hs.q.assign(Q, Q + sh.Nq * d), hs.g.assign(G, G + sh.Nq * nv);  // exact: storage values
    hs.kt.assign(K, K + Nk * d), hs.vt.assign(V, V + Nk * nv);
    const bool fin =
        finite(K, Nk * d) && finite(V, Nk * nv) && finite(Q, sh.Nq * d) && finite(G, sh.Nq * nv);
    const long rows = p.mask == MaskKind::none || fin ? 64 : 1;  // no padding past inf (0 x inf)
    for (long i0 = 0; i0 < sh.Nq; i0 += rows) {
        const long count = std::min(rows, sh.Nq - i0);
        hs.in.resize(static_cast<size_t>(count));
        long n_max = 0;
        for (long r = 0; r < count; ++r) {
            hs.in[r] = detail::row_input(sh, p, p.mask, sc, b, h, i0 + r);
            n_max = std::max(n_max, hs.in[r].n);
        }
        if (n_max == 0) continue;
        hs.o.resize(static_cast<size_t>(count * nv)), hs.lse.resize(static_cast<size_t>(count));
        detail::baseline_block(hs.in.data(), count, bh, hs.s, hs.o.data(), hs.lse.data());
        const T* P = weights_of(hs.s, static_cast<T*>(nullptr));
        const size_t cells = static_cast<size_t>(count * n_max);
        const T* g = hs.g.data() + i0 * nv;
        hs.dP.resize(cells), hs.dS.resize(cells);
        gemm(false, true, count, n_max, nv, T(1), g, nv, hs.vt.data(), nv, T(0), hs.dP.data(),
             n_max);
        for (long r = 0; r < count; ++r) {
            T* dS = hs.dS.data() + r * n_max;
            std::fill(dS + hs.in[r].n, dS + n_max, T(0));  // keys this row does not see
            const double D = dot(ra, G + (i0 + r) * nv, hs.o.data() + r * nv, nv);
            for (long j = 0; j < hs.in[r].n; ++j) {
                const size_t at = static_cast<size_t>(r * n_max + j);
                hs.dS[at] = static_cast<T>(
                    round_to(ra(double(P[at]) * ra(double(hs.dP[at]) - D)), storage));
            }
        }
        hs.dq.resize(static_cast<size_t>(count * d));
        gemm(false, false, count, d, n_max, T(1), hs.dS.data(), n_max, hs.kt.data(), d, T(0),
             hs.dq.data(), d);
        for (long e = 0; e < count * d; ++e)
            dq.values[static_cast<size_t>((q0 + i0) * d + e)] = ra(sc * double(hs.dq[e]));
        gemm(true, false, n_max, d, count, T(1), hs.dS.data(), n_max, hs.q.data() + i0 * d, d, T(1),
             hs.k.data(), d);
        gemm(true, false, n_max, nv, count, T(1), P, n_max, g, nv, T(1), hs.v.data(), nv);
    }
}

// baseline_vjp a block of rows at a time in the accumulation format T (see the header).
template <class T>
void vjp_blocks(const AttentionProblem& p, const Array& dout, Format storage, Format accumulate,
                Array& dq, Array& dk, Array& dv) {
    const ProblemShape sh = problem_shape(p);
    const Rounder ra = rounder(storage, accumulate);
    const double sc = ra(effective_scale(p, sh));
    dq = zeros(p.q.shape, p.q.values.size());
    dk = zeros(p.k.shape, p.k.values.size());
    dv = zeros(p.v.shape, p.v.values.size());
    const BlasThreadsScope one_blas_thread(1);
    const int threads = std::max(1, available_threads());
    const long heads = sh.B * sh.H, kd = sh.Nk * sh.d, vd = sh.Nk * sh.dv;
    std::vector<HeadSums<T>> sums(static_cast<size_t>(threads));
    for (long h0 = 0; h0 < heads; h0 += threads) {
        const long wave = std::min<long>(threads, heads - h0);
        parallel_for_ordered(static_cast<size_t>(wave), threads, [&](size_t k) {
            const long bh = h0 + static_cast<long>(k);
            vjp_head<T>(p, dout, sh, sc, storage, accumulate, bh / sh.H, bh % sh.H, dq, sums[k]);
        });
        for (long k = 0; k < wave; ++k) {  // head order: the same sums for any thread count
            const long bh = h0 + k, kvh = (bh / sh.H) * sh.H_kv + sh.kv_head(bh % sh.H);
            const HeadSums<T>& hs = sums[static_cast<size_t>(k)];
            for (long e = 0; e < kd; ++e) {
                double& x = dk.values[static_cast<size_t>(kvh * kd + e)];
                x = ra(x + double(hs.k[e]));
            }
            for (long e = 0; e < vd; ++e) {
                double& x = dv.values[static_cast<size_t>(kvh * vd + e)];
                x = ra(x + double(hs.v[e]));
            }
        }
    }
    for (double& x : dk.values) x = ra(sc * x);
    store(dq, storage), store(dk, storage), store(dv, storage);
}

}  // namespace

void baseline_vjp(const AttentionProblem& p, const Array& dout, Format storage, Format accumulate,
                  Array& dq, Array& dk, Array& dv) {
    const Format A = unit_roundoff(accumulate) < unit_roundoff(storage) ? accumulate : storage;
    if ((A == Format::fp32 && storage == Format::fp64) || general_mask(p.mask))
        return baseline_vjp_rows(p, dout, storage, accumulate, dq, dk, dv);
    if (A == Format::fp32) return vjp_blocks<float>(p, dout, storage, accumulate, dq, dk, dv);
    vjp_blocks<double>(p, dout, storage, accumulate, dq, dk, dv);
}

void baseline_jvp(const AttentionProblem& p, const Array& tq, const Array& tk, const Array& tv,
                  Format storage, Format accumulate, Array& dout) {
    const ProblemShape sh = problem_shape(p);
    const Rounder ra = rounder(storage, accumulate);
    const double s = ra(effective_scale(p, sh));
    const long d = sh.d, nv = sh.dv;
    dout = zeros(sh.out_shape(), static_cast<size_t>(sh.B * sh.H * sh.Nq * nv));
    std::vector<double> w, ds;
    std::vector<long> keys;
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h)
            for (long i = 0; i < sh.Nq; ++i) {
                const RowInput in = detail::row_input_any(sh, p, s, b, h, i, keys);
                if (in.n == 0) continue;
                const long row = (b * sh.H + h) * sh.Nq + i, kv = b * sh.H_kv + sh.kv_head(h);
                const double* tqi = tq.values.data() + row * d;
                const double* tK = tk.values.data() + kv * sh.Nk * d;
                const double* tV = tv.values.data() + kv * sh.Nk * nv;
                double m = 0, l = 0;
                baseline_weights(in, storage, accumulate, w, m, l);
                ds.resize(static_cast<size_t>(in.n));
                double mean = 0;
                for (long j = 0; j < in.n; ++j) {
                    const long kj = in.key(j);
                    const double x =
                        ra(dot(ra, tqi, in.K + kj * d, d) + dot(ra, in.q, tK + kj * d, d));
                    ds[j] = ra(s * x);
                    mean = ra(mean + ra(w[j] * ds[j]));
                }
                for (long j = 0; j < in.n; ++j)
                    ds[j] = round_to(ra(w[j] * ra(ds[j] - mean)), storage);
                double* out = dout.values.data() + row * nv;
                for (long c = 0; c < nv; ++c) {
                    double x = 0;
                    for (long j = 0; j < in.n; ++j) {
                        x = ra(x + ra(ds[j] * in.V[in.key(j) * nv + c]));
                        x = ra(x + ra(w[j] * tV[in.key(j) * nv + c]));
                    }
                    out[c] = x;
                }
            }
    store(dout, storage);
}

}  // namespace attnspec::kernels
