// check-kernel attention-vjp and linear-infsa on the denormal-range stress case
// (StressCase::denormal, proofs/kernel_tolerance.md "Denormal-range inputs"). Plain float kernels
// written here that keep subnormals (gradual underflow, as IEEE arithmetic and the CPU do) must
// pass; the same kernels flushing subnormals to zero (FTZ/DAZ: inputs, float results and outputs)
// get the verdict the contract states (fp16: wrong; bf16, fp32: fail).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "attnspec/kernels/derivative_check.hpp"
#include "attnspec/kernels/linear_infsa_check.hpp"
#include "attnspec/kernels/stress.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::kernels;

namespace {

// x, or a zero of its sign when it is below the smallest normal of `f` (flush to zero).
double flushed(double x, Format f) {
    return std::fabs(x) < smallest_normal(f) ? std::copysign(0.0, x) : x;
}

// The roundings of a float kernel storing `storage`, flushing subnormals when `ftz`.
struct Float {
    Format storage;
    bool ftz;
    bool scale_first = false;  // vjp: dS scaled by s before the dQ, dK sums (not after)
    float in(double x) const { return static_cast<float>(ftz ? flushed(x, storage) : x); }
    float operator()(float x) const {
        return static_cast<float>(ftz ? flushed(x, Format::fp32) : x);
    }
    double out(float x) const {
        const Format f = output_format(storage);
        const double y = round_to(x, f);
        return ftz ? flushed(y, f) : y;
    }
};

// dQ, dK, dV in float arithmetic, one query row at a time: P_i by a max-subtracted softmax,
// D_i = dO_i.O_i, dS_ij = P_ij (dO_i.v_j - D_i), dQ_i = s sum_j dS_ij k_j, dK_j = s sum_i dS_ij q_i
// (s applied after the sums, as FlashAttention-2 does, or before them: scale_first), dV_j +=
// P_ij dO_i; one head per K/V head (no grouping), mask none or causal.
void float_vjp(const AttentionProblem& p, const Array& dout, const Float& F, Array& dq, Array& dk,
               Array& dv) {
    const ProblemShape sh = problem_shape(p);
    const long N = sh.Nk, d = sh.d, heads = sh.B * sh.H;
    const auto s = static_cast<float>(effective_scale(p, sh));
    std::vector<float> Q(p.q.values.size()), K(Q.size()), V(Q.size()), dO(Q.size());
    for (size_t e = 0; e < Q.size(); ++e)
        Q[e] = F.in(p.q.values[e]), K[e] = F.in(p.k.values[e]), V[e] = F.in(p.v.values[e]),
        dO[e] = F.in(dout.values[e]);
    std::vector<float> gq(Q.size(), 0.f), gk(Q.size(), 0.f), gv(Q.size(), 0.f), P(N), o(d);
    for (long h = 0; h < heads; ++h)
        for (long i = 0; i < sh.Nq; ++i) {
            const long n = sh.visible(i, p.mask), at = h * N * d;
            const float* q = &Q[at + i * d];
            const float* g = &dO[at + i * d];
            float m = -std::numeric_limits<float>::infinity(), l = 0, D = 0;
            for (long j = 0; j < n; ++j) {
                float x = 0;
                for (long c = 0; c < d; ++c) x = F(x + F(q[c] * K[at + j * d + c]));
                m = std::max(m, P[j] = F(x * s));
            }
            for (long j = 0; j < n; ++j) l = F(l + (P[j] = F(std::exp(P[j] - m))));
            std::fill(o.begin(), o.end(), 0.f);
            for (long j = 0; j < n; ++j) {
                P[j] = F(P[j] / l);
                for (long c = 0; c < d; ++c) o[c] = F(o[c] + F(P[j] * V[at + j * d + c]));
            }
            for (long c = 0; c < d; ++c) D = F(D + F(g[c] * o[c]));
            for (long j = 0; j < n; ++j) {
                float dp = 0;
                for (long c = 0; c < d; ++c) dp = F(dp + F(g[c] * V[at + j * d + c]));
                const float ds = F.scale_first ? F(s * F(P[j] * F(dp - D))) : F(P[j] * F(dp - D));
                for (long c = 0; c < d; ++c) {
                    float& a = gq[at + i * d + c];
                    a = F(a + F(ds * K[at + j * d + c]));
                    float& b = gk[at + j * d + c];
                    b = F(b + F(ds * q[c]));
                    float& v = gv[at + j * d + c];
                    v = F(v + F(P[j] * g[c]));
                }
            }
        }
    const float t = F.scale_first ? 1.f : s;  // FlashAttention-2 scales dQ and dK at the end
    dq = p.q, dk = p.k, dv = p.v;
    for (size_t e = 0; e < Q.size(); ++e)
        dq.values[e] = F.out(F(t * gq[e])), dk.values[e] = F.out(F(t * gk[e])),
        dv.values[e] = F.out(gv[e]);
}

// Linear-InfSA in float arithmetic (linear_infsa_check.hpp): q~ = q / sqrt(d), e_i = ||q~_i||,
// q_bar = sum e_i q~_i / (sum e_i + eps), s_j = max(0, q_bar.k_j / sqrt(d)), then the weights
// a_j = s_j / (sum s + eps) and o = gamma sum_j a_j v_j, broadcast to every row.
Array float_linear_infsa(const AttentionProblem& p, const LinearInfsaParams& par, const Float& F) {
    const ProblemShape sh = problem_shape(p);
    const long N = sh.Nk, d = sh.d, heads = sh.B * sh.H;
    const float r = F(1.f / std::sqrt(static_cast<float>(d))), eps = F(float(par.eps));
    Array o = p.v;
    std::vector<float> qt(d), qbar(d), sc(N), acc(d);
    for (long h = 0; h < heads; ++h) {
        const long at = h * N * d;
        std::fill(qbar.begin(), qbar.end(), 0.f);
        float E = 0, S = 0;
        for (long i = 0; i < N; ++i) {
            float e2 = 0;
            for (long c = 0; c < d; ++c)
                e2 = F(e2 + F((qt[c] = F(F.in(p.q.values[at + i * d + c]) * r)) * qt[c]));
            const float e = F(std::sqrt(e2));
            E = F(E + e);
            for (long c = 0; c < d; ++c) qbar[c] = F(qbar[c] + F(e * qt[c]));
        }
        for (long c = 0; c < d; ++c) qbar[c] = F(qbar[c] / F(E + eps));
        for (long j = 0; j < N; ++j) {
            float x = 0;
            for (long c = 0; c < d; ++c) x = F(x + F(qbar[c] * F.in(p.k.values[at + j * d + c])));
            S = F(S + (sc[j] = std::max(0.f, F(x * r))));
        }
        std::fill(acc.begin(), acc.end(), 0.f);
        for (long j = 0; j < N; ++j) {
            const float a = S > 0 ? F(sc[j] / F(S + eps)) : 0.f;  // 0 when every s_j is 0
            for (long c = 0; c < d; ++c)
                acc[c] = F(acc[c] + F(a * F.in(p.v.values[at + j * d + c])));
        }
        for (long i = 0; i < N; ++i)
            for (long c = 0; c < d; ++c)
                o.values[at + i * d + c] = F.out(F(static_cast<float>(par.gamma) * acc[c]));
    }
    return o;
}

struct Figures {
    KernelVerdict verdict = KernelVerdict::pass;
    double bound = 0, rule = 0;  // worst error/bound, error/allowed
};

Figures vjp_figures(const AttentionProblem& p, const Array& dout, Format f, bool ftz,
                    bool scale_first = false) {
    Array dq, dk, dv;
    float_vjp(p, dout, {f, ftz, scale_first}, dq, dk, dv);
    KernelCheckOptions opt;
    opt.storage = f;
    const VjpCheckResult r = check_attention_vjp(p, dout, dq, dk, dv, opt);
    Figures x;
    x.verdict = r.verdict;
    for (const KernelCheckResult* t : {&r.dq, &r.dk, &r.dv})
        x.bound = std::max(x.bound, t->worst_bound_ratio),
        x.rule = std::max(x.rule, t->worst_rule_ratio);
    return x;
}

Figures infsa_figures(const AttentionProblem& p, const LinearInfsaParams& par, Format f, bool ftz) {
    KernelCheckOptions opt;
    opt.storage = f;
    const KernelCheckResult r =
        check_linear_infsa(p, par, float_linear_infsa(p, par, {f, ftz}), opt);
    return {r.verdict, r.worst_bound_ratio, r.worst_rule_ratio};
}

AttentionProblem denormal(Format f, MaskKind m, const std::vector<std::int64_t>& shape) {
    AttentionProblem p = generate_stress(StressCase::denormal, 11, shape, f);
    p.mask = m;
    return p;
}

}  // namespace

TEST_CASE("check-kernel vjp and linear-infsa denormal: keeping subnormals passes and FTZ not",
          "[kernels]") {
    const std::vector<std::int64_t> shape = {2, 48, 16};
    for (Format f : {Format::fp16, Format::bf16, Format::fp32}) {
        const KernelVerdict flush = f == Format::fp16 ? KernelVerdict::wrong : KernelVerdict::fail;
        for (MaskKind m : {MaskKind::none, MaskKind::causal}) {
            INFO(format_name(f) << " " << mask_name(m));
            const AttentionProblem p = denormal(f, m, shape);
            const Array dout = generate_directions(StressCase::denormal, 11, {shape}, f)[0];
            const Figures ok = vjp_figures(p, dout, f, false);
            CHECK(ok.verdict == KernelVerdict::pass);
            CHECK(ok.bound <= 1);
            CHECK(vjp_figures(p, dout, f, true).verdict == flush);
        }
        const AttentionProblem p = generate_linear_infsa("denormal", 11, shape, f);
        const AttentionProblem g = generate_stress(StressCase::gaussian, 11, shape, f);
        CHECK((p.q.values == g.q.values && p.k.values == g.k.values));
        CHECK(p.v.values == generate_stress(StressCase::denormal, 11, shape, f).v.values);
        CHECK(std::all_of(p.v.values.begin(), p.v.values.end(),
                          [f](double x) { return x >= 0 && x < smallest_normal(f); }));
        const Figures ok = infsa_figures(p, {}, f, false);
        CHECK(ok.verdict == KernelVerdict::pass);
        CHECK(ok.bound <= 1);
        CHECK(infsa_figures(p, {}, f, true).verdict == flush);
    }
}

// The figures of proofs/kernel_tolerance.md ("Denormal-range inputs"), hidden from the default
// suite: build/tests/attnspec_tests_cpu "[tightness]".
TEST_CASE("check-kernel vjp and linear-infsa denormal: tightness", "[kernels][tightness][.]") {
    const std::vector<std::int64_t> shape = {2, 128, 64};
    for (Format f : {Format::fp16, Format::bf16, Format::fp32}) {
        Figures ok, ftz, first;
        for (MaskKind m : {MaskKind::none, MaskKind::causal}) {
            const AttentionProblem p = denormal(f, m, shape);
            const Array dout = generate_directions(StressCase::denormal, 11, {shape}, f)[0];
            const Figures a = vjp_figures(p, dout, f, false), b = vjp_figures(p, dout, f, true);
            const Figures c = vjp_figures(p, dout, f, false, true);
            CHECK(a.bound <= 1);
            ok.bound = std::max(ok.bound, a.bound), ok.rule = std::max(ok.rule, a.rule);
            ftz.bound = std::max(ftz.bound, b.bound), ftz.rule = std::max(ftz.rule, b.rule);
            ftz.verdict = std::max(ftz.verdict, b.verdict);
            first.bound = std::max(first.bound, c.bound), first.rule = std::max(first.rule, c.rule);
        }
        std::printf(
            "denormal vjp %s (H, N, d) = (2, 128, 64): plain error/bound %.3g, error/allowed %.3g; "
            "flush %.3g, %.3g (%s); s before the sums %.3g, %.3g\n",
            format_name(f), ok.bound, ok.rule, ftz.bound, ftz.rule, verdict_name(ftz.verdict),
            first.bound, first.rule);
        const AttentionProblem p = generate_linear_infsa("denormal", 11, shape, f);
        const Figures a = infsa_figures(p, {}, f, false), b = infsa_figures(p, {}, f, true);
        CHECK(a.bound <= 1);
        std::printf(
            "denormal linear-infsa %s (H, N, d) = (2, 128, 64): plain error/bound %.3g, "
            "error/allowed %.3g; flush %.3g, %.3g (%s)\n",
            format_name(f), a.bound, a.rule, b.bound, b.rule, verdict_name(b.verdict));
    }
}
