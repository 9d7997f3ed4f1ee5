// check-kernel attention-vjp and attention-jvp (kernels/derivative_check.hpp). The references
// against the complex-step derivative of a dense float64 forward (exact to rounding); correct
// kernels -- attnspec's own baselines, and FlashAttention-2-style kernels written here in float
// arithmetic (P recomputed from the log-sum-exp, dS and P stored in the declared format, blocks of
// 16 keys) -- pass at fp32, fp16 and bf16 and stay within the rounding bound; planted wrong ones
// -- a dV that drops one query row's contribution, dK scaled by 1/d, a causal mask off by one, a
// JVP without its tv term -- must not pass.
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <string>

#include "attnspec/kernels/derivative_baseline.hpp"
#include "attnspec/kernels/derivative_check.hpp"
#include "attnspec/kernels/derivative_reference.hpp"
#include "attnspec/kernels/stress.hpp"
#include "derivative_case.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::kernels;
using namespace attnspec::kernels::test_deriv;

namespace {

// Dense forward O = softmax(s Q K^T + M) V in complex arithmetic (the shift by the real max
// leaves the result unchanged); fully masked rows give 0.
std::vector<Cplx> dense_forward(const ProblemShape& sh, MaskKind mask, double s,
                                const std::vector<Cplx>& q, const std::vector<Cplx>& k,
                                const std::vector<Cplx>& v) {
    std::vector<Cplx> o(static_cast<size_t>(sh.B * sh.H * sh.Nq * sh.dv));
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h)
            for (long i = 0; i < sh.Nq; ++i) {
                const long row = (b * sh.H + h) * sh.Nq + i, kv = b * sh.H_kv + sh.kv_head(h);
                const long n = sh.visible(i, mask);
                std::vector<Cplx> x(static_cast<size_t>(n));
                double m = -1e300;
                for (long j = 0; j < n; ++j) {
                    for (long c = 0; c < sh.d; ++c)
                        x[j] += s * q[row * sh.d + c] * k[(kv * sh.Nk + j) * sh.d + c];
                    m = std::max(m, x[j].real());
                }
                Cplx l = 0;
                for (Cplx& t : x) l += (t = std::exp(t - m));
                for (long j = 0; j < n; ++j)
                    for (long c = 0; c < sh.dv; ++c)
                        o[row * sh.dv + c] += x[j] / l * v[(kv * sh.Nk + j) * sh.dv + c];
            }
    return o;
}

constexpr double kStep = 1e-30;  // complex step: exact to rounding for any step this small

// A small grouped problem: q (2, Nq, 3), k (1, Nk, 3), v (1, Nk, 2).
AttentionProblem tiny(long Nq, long Nk, MaskKind mask) {
    AttentionProblem p;
    p.q = generate_stress(StressCase::gaussian, 3, {2, Nq, 3}, Format::fp64).q;
    const AttentionProblem kv = generate_stress(StressCase::gaussian, 4, {1, Nk, 3}, Format::fp64);
    p.k = kv.k;
    p.v = generate_stress(StressCase::gaussian, 5, {1, Nk, 2}, Format::fp64).v;
    p.mask = mask;
    return p;
}

enum class Fault { none, drop_dv_row, dk_scale_1_over_d, causal_off_by_one, no_tv };
constexpr long kBlock = 16;
constexpr long kDroppedRow = 5;

// The float forward pieces of one row for the kernels below: logits, lse, p_j = exp(x_j - lse).
struct FloatRow {
    std::vector<float> x, p;
    float lse = 0;
};

void float_row(const AttentionProblem& p, const ProblemShape& sh, float s, long row, long kv,
               long n, FloatRow& r) {
    r.x.assign(static_cast<size_t>(n), 0.f), r.p.resize(static_cast<size_t>(n));
    const double* q = p.q.values.data() + row * sh.d;
    float m = -std::numeric_limits<float>::infinity(), l = 0;
    for (long j = 0; j < n; ++j) {
        const double* k = p.k.values.data() + (kv * sh.Nk + j) * sh.d;
        float dot = 0;
        for (long c = 0; c < sh.d; ++c) dot += static_cast<float>(q[c]) * static_cast<float>(k[c]);
        r.x[j] = dot * s;
    }
    for (long j0 = 0; j0 < n; j0 += kBlock) {  // online max and sum over blocks
        float mb = m;
        for (long j = j0; j < std::min(n, j0 + kBlock); ++j) mb = std::max(mb, r.x[j]);
        l *= m == -std::numeric_limits<float>::infinity() ? 0.f : std::exp(m - mb);
        for (long j = j0; j < std::min(n, j0 + kBlock); ++j) l += std::exp(r.x[j] - mb);
        m = mb;
    }
    r.lse = m + std::log(l);
    for (long j = 0; j < n; ++j) r.p[j] = std::exp(r.x[j] - r.lse);
}

float fl(double x, Format f) { return static_cast<float>(round_to(x, f)); }

// FlashAttention-2-style backward: O and lse from a float forward, D = rowsum(dO o O) with O
// stored, P recomputed from lse, dS = P (dP - D) and P stored in `storage`, float sums.
Grads flash_vjp(const AttentionProblem& p, const Array& dout, Format storage,
                Fault fault = Fault::none) {
    const ProblemShape sh = problem_shape(p);
    const auto s = static_cast<float>(effective_scale(p, sh));
    const Format out = output_format(storage);
    std::vector<float> dq(p.q.values.size()), dk(p.k.values.size()), dv(p.v.values.size());
    FloatRow r;
    std::vector<float> o(static_cast<size_t>(sh.dv));
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h)
            for (long i = 0; i < sh.Nq; ++i) {
                const long row = (b * sh.H + h) * sh.Nq + i, kv = b * sh.H_kv + sh.kv_head(h);
                long n = sh.visible(i, p.mask);
                if (fault == Fault::causal_off_by_one) n = std::min(n + 1, sh.Nk);
                if (n == 0) continue;
                float_row(p, sh, s, row, kv, n, r);
                const double* g = dout.values.data() + row * sh.dv;
                std::fill(o.begin(), o.end(), 0.f);
                for (long j = 0; j < n; ++j)
                    for (long c = 0; c < sh.dv; ++c)
                        o[c] += fl(r.p[j], storage) *
                                static_cast<float>(p.v.values[(kv * sh.Nk + j) * sh.dv + c]);
                float D = 0;
                for (long c = 0; c < sh.dv; ++c) D += static_cast<float>(g[c]) * fl(o[c], out);
                for (long j = 0; j < n; ++j) {
                    const long kj = kv * sh.Nk + j;
                    float dP = 0;
                    for (long c = 0; c < sh.dv; ++c)
                        dP += static_cast<float>(g[c]) *
                              static_cast<float>(p.v.values[kj * sh.dv + c]);
                    const float ds = fl(r.p[j] * (dP - D), storage), pq = fl(r.p[j], storage);
                    for (long c = 0; c < sh.d; ++c) {
                        dq[row * sh.d + c] += ds * static_cast<float>(p.k.values[kj * sh.d + c]);
                        dk[kj * sh.d + c] += ds * static_cast<float>(p.q.values[row * sh.d + c]);
                    }
                    if (fault == Fault::drop_dv_row && i == kDroppedRow) continue;
                    for (long c = 0; c < sh.dv; ++c)
                        dv[kj * sh.dv + c] += pq * static_cast<float>(g[c]);
                }
            }
    const float sk = fault == Fault::dk_scale_1_over_d ? 1.f / static_cast<float>(sh.d) : s;
    Grads G{p.q, p.k, p.v};
    for (size_t e = 0; e < dq.size(); ++e) G.dq.values[e] = fl(dq[e] * s, out);
    for (size_t e = 0; e < dk.size(); ++e) G.dk.values[e] = fl(dk[e] * sk, out);
    for (size_t e = 0; e < dv.size(); ++e) G.dv.values[e] = fl(dv[e], out);
    return G;
}

// Forward-mode: p from lse, ds_j = s (tq.k_j + q.tk_j), m = sum p ds, w_j = p_j (ds_j - m) and P
// stored in `storage`, dO = sum w v + sum p tv in float.
Array flash_jvp(const AttentionProblem& p, const std::vector<Array>& t, Format storage,
                Fault fault = Fault::none) {
    const ProblemShape sh = problem_shape(p);
    const auto s = static_cast<float>(effective_scale(p, sh));
    Array out;
    out.shape = sh.out_shape();
    out.values.assign(static_cast<size_t>(sh.B * sh.H * sh.Nq * sh.dv), 0.0);
    FloatRow r;
    std::vector<float> ds, acc(static_cast<size_t>(sh.dv));
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h)
            for (long i = 0; i < sh.Nq; ++i) {
                const long row = (b * sh.H + h) * sh.Nq + i, kv = b * sh.H_kv + sh.kv_head(h);
                const long n = sh.visible(i, p.mask);
                if (n == 0) continue;
                float_row(p, sh, s, row, kv, n, r);
                ds.assign(static_cast<size_t>(n), 0.f);
                float mean = 0;
                for (long j = 0; j < n; ++j) {
                    const long kj = kv * sh.Nk + j;
                    for (long c = 0; c < sh.d; ++c)
                        ds[j] += static_cast<float>(t[0].values[row * sh.d + c]) *
                                     static_cast<float>(p.k.values[kj * sh.d + c]) +
                                 static_cast<float>(p.q.values[row * sh.d + c]) *
                                     static_cast<float>(t[1].values[kj * sh.d + c]);
                    ds[j] *= s;
                    mean += r.p[j] * ds[j];
                }
                std::fill(acc.begin(), acc.end(), 0.f);
                for (long j = 0; j < n; ++j) {
                    const long kj = kv * sh.Nk + j;
                    const float w = fl(r.p[j] * (ds[j] - mean), storage), pq = fl(r.p[j], storage);
                    for (long c = 0; c < sh.dv; ++c) {
                        acc[c] += w * static_cast<float>(p.v.values[kj * sh.dv + c]);
                        if (fault != Fault::no_tv)
                            acc[c] += pq * static_cast<float>(t[2].values[kj * sh.dv + c]);
                    }
                }
                for (long c = 0; c < sh.dv; ++c)
                    out.values[row * sh.dv + c] = fl(acc[c], output_format(storage));
            }
    return out;
}

}  // namespace

TEST_CASE("check-kernel vjp and jvp: the references are the exact derivatives", "[kernels]") {
    for (auto [Nq, Nk, mask] :
         {std::tuple{4L, 5L, MaskKind::none}, std::tuple{4L, 5L, MaskKind::causal},
          std::tuple{6L, 4L, MaskKind::causal}}) {
        INFO("Nq " << Nq << " Nk " << Nk << " " << mask_name(mask));
        const AttentionProblem p = tiny(Nq, Nk, mask);
        const ProblemShape sh = problem_shape(p);
        const double s = effective_scale(p, sh);
        const Array dout =
            generate_directions(StressCase::gaussian, 6, {sh.out_shape()}, Format::fp64)[0];
        const RoundingModel M = kernel_model(Format::fp32, Format::fp32, true);
        // vjp: element x of q, k or v: sum(dO o Im O(x + i h)) / h.
        const VjpReference ref = reference_vjp(p, dout, M);
        const Array* inputs[] = {&p.q, &p.k, &p.v};
        const ReferenceTensor* refs[] = {&ref.dq, &ref.dk, &ref.dv};
        for (int which = 0; which < 3; ++which) {
            std::vector<double> exact(inputs[which]->values.size());
            for (size_t e = 0; e < exact.size(); ++e) {
                std::vector<Cplx> z[3] = {complexify(p.q), complexify(p.k), complexify(p.v)};
                z[which][e] += Cplx(0, kStep);
                const std::vector<Cplx> o = dense_forward(sh, mask, s, z[0], z[1], z[2]);
                for (size_t c = 0; c < o.size(); ++c)
                    exact[e] += dout.values[c] * o[c].imag() / kStep;
            }
            INFO("tensor " << which);
            check_reference(*refs[which], exact);
        }
        // jvp: Im O(q + i h tq, k + i h tk, v + i h tv) / h.
        const std::vector<Array> t = generate_directions(
            StressCase::gaussian, 7, {p.q.shape, p.k.shape, p.v.shape}, Format::fp64);
        const std::vector<Cplx> o =
            dense_forward(sh, mask, s, complexify(p.q, &t[0], kStep), complexify(p.k, &t[1], kStep),
                          complexify(p.v, &t[2], kStep));
        std::vector<double> exact(o.size());
        for (size_t c = 0; c < o.size(); ++c) exact[c] = o[c].imag() / kStep;
        check_reference(reference_jvp(p, t[0], t[1], t[2], M), exact);
    }
}

TEST_CASE("check-kernel vjp and jvp: correct kernels pass on every stress case", "[kernels]") {
    for (Format f : {Format::fp32, Format::fp16, Format::bf16})
        for (StressCase c : stress_cases())
            for (MaskKind m : {MaskKind::none, MaskKind::causal}) {
                INFO(format_name(f) << " " << stress_name(c) << " " << mask_name(m));
                const Case k = make_case(c, f, m, {2, 40, 16});
                const VjpCheckResult rb = vjp(k, baseline_grads(k, f), f);
                INFO(rb.summary);
                CHECK(rb.verdict == KernelVerdict::pass);
                CHECK(rb.dk.tensor_error == rb.dk.tensor_baseline);
                CHECK(vjp_bound_ratio(rb) <= 1.0);
                const VjpCheckResult rf = vjp(k, flash_vjp(k.p, k.dout, f), f);
                INFO(rf.summary << " | " << rf.dq.summary << " | " << rf.dk.summary << " | "
                                << rf.dv.summary);
                CHECK(rf.verdict == KernelVerdict::pass);
                const KernelCheckResult jb = jvp(k, baseline_tangent(k, f), f);
                INFO(jb.summary);
                CHECK(jb.verdict == KernelVerdict::pass);
                CHECK(jb.baseline_bound_ratio <= 1.0);
                const KernelCheckResult jf = jvp(k, flash_jvp(k.p, k.tang, f), f);
                INFO(jf.summary);
                CHECK(jf.verdict == KernelVerdict::pass);
            }
}

TEST_CASE("check-kernel vjp and jvp: planted wrong kernels are caught", "[kernels]") {
    for (Format f : {Format::fp32, Format::fp16, Format::bf16}) {
        INFO(format_name(f));
        const Case g = make_case(StressCase::gaussian, f, MaskKind::none);
        // dV without query row 5's contribution (issue 31's planted fault)
        VjpCheckResult r = vjp(g, flash_vjp(g.p, g.dout, f, Fault::drop_dv_row), f);
        INFO(r.summary);
        CHECK(r.verdict == KernelVerdict::wrong);
        CHECK(r.dv.verdict == KernelVerdict::wrong);
        CHECK(r.dq.verdict == KernelVerdict::pass);
        r = vjp(g, flash_vjp(g.p, g.dout, f, Fault::dk_scale_1_over_d), f);
        CHECK(r.dk.verdict == KernelVerdict::wrong);
        const Case c = make_case(StressCase::gaussian, f, MaskKind::causal);
        r = vjp(c, flash_vjp(c.p, c.dout, f, Fault::causal_off_by_one), f);
        CHECK(r.verdict == KernelVerdict::wrong);
        KernelCheckResult j = jvp(g, flash_jvp(g.p, g.tang, f, Fault::no_tv), f);
        INFO(j.summary);
        CHECK(j.verdict == KernelVerdict::wrong);
        // NaN where the reference is finite
        Array o = flash_jvp(c.p, c.tang, f);
        o.values[7] = std::nan("");
        j = jvp(c, o, f);
        CHECK(j.verdict == KernelVerdict::wrong);
        CHECK(j.nonfinite == 1);
    }
}

TEST_CASE(
    "check-kernel vjp and jvp: shapes (N, d), d_v != d, grouped and rank-4 heads, masked rows",
    "[kernels]") {
    const Format f = Format::fp16;
    Case k = make_case(StressCase::spike_v, f, MaskKind::causal, {48, 16});
    CHECK(vjp(k, flash_vjp(k.p, k.dout, f), f).verdict == KernelVerdict::pass);
    CHECK(jvp(k, flash_jvp(k.p, k.tang, f), f).verdict == KernelVerdict::pass);
    // grouped: 4 query heads on 2 K/V heads, d_v = 8 != d = 16; N_q = 24 > N_k = 20 (causal:
    // rows 0 .. 3 see no key; dQ and dO there are zeros or NaN)
    k = make_case(StressCase::heavy_tail, f, MaskKind::causal, {4, 24, 16});
    const AttentionProblem kv = generate_stress(StressCase::gaussian, 2, {2, 20, 16}, f);
    k.p.k = kv.k;
    k.p.v = generate_stress(StressCase::gaussian, 3, {2, 20, 8}, f).v;
    k.dout = generate_directions(StressCase::gaussian, 4, {{4, 24, 8}}, f)[0];
    k.tang =
        generate_directions(StressCase::gaussian, 5, {{4, 24, 16}, {2, 20, 16}, {2, 20, 8}}, f);
    Grads g = flash_vjp(k.p, k.dout, f);
    VjpCheckResult r = vjp(k, g, f);
    INFO(r.summary);
    CHECK(r.verdict == KernelVerdict::pass);
    CHECK(r.dq.masked_rows == 4 * 4);
    CHECK(r.dk.rows == 2 * 20);
    for (int c = 0; c < 16; ++c) g.dq.values[c] = std::nan("");
    CHECK(vjp(k, g, f).verdict == KernelVerdict::pass);
    g.dq.values[16] = 0.25;  // row 1 is masked: only zeros or NaN there
    CHECK(vjp(k, g, f).dq.verdict == KernelVerdict::wrong);
    // K, V (or their tangents) expanded to one head per query head: head h takes K/V head
    // head_of(h) of 2
    const auto expand = [](const Array& a, long (*head_of)(long)) {
        Array e = a;
        e.shape[0] = 4;
        const auto half = static_cast<std::ptrdiff_t>(a.values.size() / 2);
        e.values.clear();
        for (long h = 0; h < 4; ++h)
            e.values.insert(e.values.end(), a.values.begin() + head_of(h) * half,
                            a.values.begin() + (head_of(h) + 1) * half);
        return e;
    };
    // dK, dV of grouped heads sum over the query heads sharing a K/V head: a kernel run on the
    // expanded K, V passes when it sums heads 2g and 2g + 1, and is wrong with head 2g alone
    AttentionProblem expanded = k.p;
    const auto right = [](long h) { return h / 2; };
    expanded.k = expand(k.p.k, right), expanded.v = expand(k.p.v, right);
    const Grads per_head = flash_vjp(expanded, k.dout, f);
    Grads summed = flash_vjp(k.p, k.dout, f), first_only = summed;
    for (auto [sum, one, all] : {std::tuple{&summed.dk, &first_only.dk, &per_head.dk},
                                 std::tuple{&summed.dv, &first_only.dv, &per_head.dv}}) {
        const size_t half = sum->values.size() / 2;  // one K/V head
        for (size_t g = 0; g < 2; ++g)
            for (size_t e = 0; e < half; ++e) {
                const double a = all->values[(2 * g) * half + e];
                const double b = all->values[(2 * g + 1) * half + e];
                sum->values[g * half + e] = round_to(a + b, f);
                one->values[g * half + e] = a;
            }
    }
    r = vjp(k, summed, f);
    INFO(r.summary);
    CHECK(r.verdict == KernelVerdict::pass);
    r = vjp(k, first_only, f);
    CHECK(r.dk.verdict == KernelVerdict::wrong);
    CHECK(r.dv.verdict == KernelVerdict::wrong);
    // the wrong K/V head: query head h reads K/V head h % 2 instead of h / 2 (K, V and their
    // tangents expanded to 4 heads that way)
    const auto wrong_heads = [&](const Array& a) {
        return expand(a, [](long h) { return h % 2; });
    };
    AttentionProblem swapped = k.p;
    swapped.k = wrong_heads(k.p.k), swapped.v = wrong_heads(k.p.v);
    const Array wrong =
        flash_jvp(swapped, {k.tang[0], wrong_heads(k.tang[1]), wrong_heads(k.tang[2])}, f);
    CHECK(jvp(k, wrong, f).verdict == KernelVerdict::wrong);
    CHECK(jvp(k, flash_jvp(k.p, k.tang, f), f).verdict == KernelVerdict::pass);
    // tf32: fp32 data, a kernel rounding every operand (q, k, v, dO, tangents) to tf32 on entry
    // and writing fp32; judged as fp32 it is beyond the fp32 bound
    k = make_case(StressCase::gaussian, Format::fp32, MaskKind::causal, {2, 40, 16});
    Case entered = k;
    for (Array* a : {&entered.p.q, &entered.p.k, &entered.p.v, &entered.dout, &entered.tang[0],
                     &entered.tang[1], &entered.tang[2]})
        for (double& x : a->values) x = round_to(x, Format::tf32);
    r = vjp(k, flash_vjp(entered.p, entered.dout, Format::tf32), Format::tf32);
    INFO(r.summary);
    CHECK_FALSE(r.dq.inputs_exact);
    CHECK(r.verdict == KernelVerdict::pass);
    CHECK(r.dq.worst_bound_ratio <= 1.0);
    CHECK(vjp(k, flash_vjp(entered.p, entered.dout, Format::tf32), Format::fp32).verdict ==
          KernelVerdict::wrong);
    const KernelCheckResult jt =
        jvp(k, flash_jvp(entered.p, entered.tang, Format::tf32), Format::tf32);
    INFO(jt.summary);
    CHECK(jt.verdict == KernelVerdict::pass);
    // rank 4 at bf16, and shape errors
    k = make_case(StressCase::rank_deficient_k, Format::bf16, MaskKind::none, {2, 2, 24, 8});
    r = vjp(k, flash_vjp(k.p, k.dout, Format::bf16), Format::bf16);
    CHECK(r.verdict == KernelVerdict::pass);
    CHECK(r.dq.worst_by_bound.at(0).index.size() == 4);
    g = baseline_grads(k, Format::bf16);
    g.dk.shape = {2, 2, 24, 4};
    CHECK(test::code_of([&] { vjp(k, g, Format::bf16); }) == ExitCode::DataError);
    Case bad = k;
    bad.dout.shape = {2, 2, 24, 7};
    CHECK(test::code_of([&] { vjp(bad, baseline_grads(k, Format::bf16), Format::bf16); }) ==
          ExitCode::DataError);
}

// Tightness of the rounding bounds (proofs/kernel_tolerance.md, "Derivatives: measured
// tightness"): the worst error / bound of the correct kernels over the stress cases and both
// masks at (H, N, d) = (2, 128, 64), and their worst error / allowed, printed; they must pass.
// Hidden from the default suite (about 20 s): build/tests/attnspec_tests_cpu "[tightness]".
TEST_CASE("check-kernel vjp and jvp: tightness of the rounding bounds", "[kernels][tightness][.]") {
    for (Format f : {Format::fp32, Format::fp16, Format::bf16}) {
        double fv = 0, bv = 0, rv = 0, fj = 0, bj = 0, rj = 0;
        std::string cv, cj;
        for (StressCase c : stress_cases())
            for (MaskKind m : {MaskKind::none, MaskKind::causal}) {
                const Case k = make_case(c, f, m, {2, 128, 64});
                const std::string name = std::string(stress_name(c)) + "/" + mask_name(m);
                const VjpCheckResult r = vjp(k, flash_vjp(k.p, k.dout, f), f);
                INFO(format_name(f) << " " << name << ": " << r.summary);
                CHECK(r.verdict == KernelVerdict::pass);
                if (vjp_bound_ratio(r) > fv) fv = vjp_bound_ratio(r), cv = name;
                rv = std::max(
                    {rv, r.dq.worst_rule_ratio, r.dk.worst_rule_ratio, r.dv.worst_rule_ratio});
                bv = std::max(bv, vjp_bound_ratio(vjp(k, baseline_grads(k, f), f)));
                const KernelCheckResult j = jvp(k, flash_jvp(k.p, k.tang, f), f);
                INFO(j.summary);
                CHECK(j.verdict == KernelVerdict::pass);
                if (j.worst_bound_ratio > fj) fj = j.worst_bound_ratio, cj = name;
                rj = std::max(rj, j.worst_rule_ratio);
                bj = std::max(bj, jvp(k, baseline_tangent(k, f), f).worst_bound_ratio);
            }
        std::printf(
            "tightness %s (H, N, d) = (2, 128, 64): vjp worst error/bound flash %.3g (%s), "
            "baseline %.3g, worst error/allowed flash %.3g; jvp flash %.3g (%s), baseline "
            "%.3g, worst error/allowed flash %.3g\n",
            format_name(f), fv, cv.c_str(), bv, rv, fj, cj.c_str(), bj, rj);
        CHECK(fv <= 1.0);
        CHECK(bv <= 1.0);
        CHECK(fj <= 1.0);
        CHECK(bj <= 1.0);
    }
}
