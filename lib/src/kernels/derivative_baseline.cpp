// attnspec's plain derivatives of attention at a declared precision
// (kernels/derivative_baseline.hpp).
#include "attnspec/kernels/derivative_baseline.hpp"

#include <vector>

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

}  // namespace

void baseline_vjp(const AttentionProblem& p, const Array& dout, Format storage, Format accumulate,
                  Array& dq, Array& dk, Array& dv) {
    const ProblemShape sh = problem_shape(p);
    const Rounder ra = rounder(storage, accumulate);
    const double s = ra(effective_scale(p, sh));
    dq = zeros(p.q.shape, p.q.values.size());
    dk = zeros(p.k.shape, p.k.values.size());
    dv = zeros(p.v.shape, p.v.values.size());
    std::vector<double> w, o, dS;
    const long d = sh.d, nv = sh.dv;
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h)
            for (long i = 0; i < sh.Nq; ++i) {
                const RowInput in = detail::row_input(sh, p, p.mask, s, b, h, i);
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
                    dS[j] = round_to(ra(w[j] * ra(dot(ra, g, in.V + j * nv, nv) - D)), storage);
                for (long c = 0; c < d; ++c) {
                    double x = 0;
                    for (long j = 0; j < in.n; ++j) x = ra(x + ra(dS[j] * in.K[j * d + c]));
                    dq.values[row * d + c] = ra(s * x);
                }
                for (long j = 0; j < in.n; ++j) {
                    double* k = dk.values.data() + (kv0 + j) * d;
                    double* v = dv.values.data() + (kv0 + j) * nv;
                    for (long c = 0; c < d; ++c) k[c] = ra(k[c] + ra(dS[j] * in.q[c]));
                    for (long c = 0; c < nv; ++c) v[c] = ra(v[c] + ra(w[j] * g[c]));
                }
            }
    for (double& x : dk.values) x = ra(s * x);
    store(dq, storage), store(dk, storage), store(dv, storage);
}

void baseline_jvp(const AttentionProblem& p, const Array& tq, const Array& tk, const Array& tv,
                  Format storage, Format accumulate, Array& dout) {
    const ProblemShape sh = problem_shape(p);
    const Rounder ra = rounder(storage, accumulate);
    const double s = ra(effective_scale(p, sh));
    const long d = sh.d, nv = sh.dv;
    dout = zeros(sh.out_shape(), static_cast<size_t>(sh.B * sh.H * sh.Nq * nv));
    std::vector<double> w, ds;
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h)
            for (long i = 0; i < sh.Nq; ++i) {
                const RowInput in = detail::row_input(sh, p, p.mask, s, b, h, i);
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
                    const double x =
                        ra(dot(ra, tqi, in.K + j * d, d) + dot(ra, in.q, tK + j * d, d));
                    ds[j] = ra(s * x);
                    mean = ra(mean + ra(w[j] * ds[j]));
                }
                for (long j = 0; j < in.n; ++j)
                    ds[j] = round_to(ra(w[j] * ra(ds[j] - mean)), storage);
                double* out = dout.values.data() + row * nv;
                for (long c = 0; c < nv; ++c) {
                    double x = 0;
                    for (long j = 0; j < in.n; ++j) {
                        x = ra(x + ra(ds[j] * in.V[j * nv + c]));
                        x = ra(x + ra(w[j] * tV[j * nv + c]));
                    }
                    out[c] = x;
                }
            }
    store(dout, storage);
}

}  // namespace attnspec::kernels
