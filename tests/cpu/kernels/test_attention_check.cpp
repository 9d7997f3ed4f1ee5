// check-kernel attention (kernels/attention_check.hpp) on kernels written here. Correct ones --
// attnspec's own baseline, and a FlashAttention-style kernel in native float arithmetic (online
// softmax over blocks of 16 keys, fp32 accumulation) storing P and O in fp32, fp16 or bf16 --
// must pass on every stress case and stay within the rounding bound. Planted wrong ones -- scale
// 1/d instead of 1/sqrt(d), a causal mask off by one, softmax without the max subtraction at
// large logits, an extra relative error 1e-4 in a few fp32 elements, one key row dropped, the
// wrong key/value head under grouped heads -- must not pass.
#include <cmath>
#include <cstdio>
#include <limits>

#include "attnspec/kernels/attention_check.hpp"
#include "attnspec/kernels/attention_reference.hpp"
#include "attnspec/kernels/derivative_baseline.hpp"
#include "attnspec/kernels/derivative_check.hpp"
#include "attnspec/kernels/stress.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::kernels;

namespace {

enum class Fault { none, scale_1_over_d, causal_off_by_one, no_max, drop_key };

constexpr long kBlock = 16;  // keys per block of the online softmax

struct Online {
    float m = -std::numeric_limits<float>::infinity(), l = 0;
    std::vector<float> acc;
};

// One block [j0, j1) of keys into the running max, sum and accumulator of a row.
void online_block(Online& st, const float* x, long j0, long j1, const double* V, long dv,
                  Format storage, Fault fault) {
    float mb = st.m;
    for (long j = j0; j < j1; ++j) mb = std::max(mb, x[j - j0]);
    if (fault == Fault::no_max) mb = 0;
    const float alpha = st.m == -std::numeric_limits<float>::infinity() ? 0.f : std::exp(st.m - mb);
    st.l *= alpha;
    for (float& a : st.acc) a *= alpha;
    for (long j = j0; j < j1; ++j) {
        if (fault == Fault::drop_key && j == 3) continue;
        const float pj = std::exp(x[j - j0] - mb);
        st.l += pj;
        const auto pq = static_cast<float>(round_to(pj, storage));
        for (long c = 0; c < dv; ++c) st.acc[c] += pq * static_cast<float>(V[j * dv + c]);
    }
    st.m = mb;
}

// A FlashAttention-style kernel: float arithmetic, online softmax over blocks of kBlock keys, P
// rounded to `storage` before the PV product, O rounded to the output format of `storage`.
Array flash_kernel(const AttentionProblem& p, Format storage, Fault fault = Fault::none) {
    const ProblemShape sh = problem_shape(p);
    const auto s = static_cast<float>(fault == Fault::scale_1_over_d ? 1.0 / double(sh.d)
                                                                     : effective_scale(p, sh));
    Array o;
    o.shape = sh.out_shape();
    o.values.assign(static_cast<size_t>(sh.B * sh.H * sh.Nq * sh.dv), 0.0);
    std::vector<float> x(kBlock);
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h)
            for (long i = 0; i < sh.Nq; ++i) {
                const long row = (b * sh.H + h) * sh.Nq + i, kv = b * sh.H_kv + sh.kv_head(h);
                const double* q = p.q.values.data() + row * sh.d;
                const double* K = p.k.values.data() + kv * sh.Nk * sh.d;
                const double* V = p.v.values.data() + kv * sh.Nk * sh.dv;
                long n = sh.visible(i, p.mask);
                if (fault == Fault::causal_off_by_one) n = std::min(n + 1, sh.Nk);
                if (n == 0) continue;
                Online st;
                st.acc.assign(static_cast<size_t>(sh.dv), 0.f);
                for (long j0 = 0; j0 < n; j0 += kBlock) {
                    const long j1 = std::min(n, j0 + kBlock);
                    for (long j = j0; j < j1; ++j) {
                        float dot = 0;
                        for (long c = 0; c < sh.d; ++c)
                            dot += static_cast<float>(q[c]) * static_cast<float>(K[j * sh.d + c]);
                        x[j - j0] = dot * s;
                    }
                    online_block(st, x.data(), j0, j1, V, sh.dv, storage, fault);
                }
                for (long c = 0; c < sh.dv; ++c)
                    o.values[row * sh.dv + c] =
                        round_to(static_cast<double>(st.acc[c] / st.l), output_format(storage));
            }
    return o;
}

Array baseline(const AttentionProblem& p, Format storage, Array* lse = nullptr) {
    Array o, l;
    baseline_attention(p, storage, Format::fp32, o, l);
    if (lse) *lse = l;
    return o;
}

KernelCheckResult check(const AttentionProblem& p, const Array& o, Format storage,
                        const Array* lse = nullptr) {
    KernelCheckOptions opt;
    opt.storage = storage;
    return check_attention(p, o, lse, opt);
}

AttentionProblem stress(StressCase c, Format f, MaskKind mask = MaskKind::none,
                        std::vector<std::int64_t> shape = {2, 72, 24}) {
    AttentionProblem p = generate_stress(c, 11, shape, f);
    p.mask = mask;
    return p;
}

const char* why(const KernelCheckResult& r) { return r.summary.c_str(); }

}  // namespace

TEST_CASE("check-kernel reference: a closed form and its error bound", "[kernels]") {
    // All logits 0: p = (1/2, 1/2), o = (4 + 8) / 2 = 6 and lse = log 2 exactly in real numbers.
    const double q[] = {1.0}, K[] = {0.0, 0.0}, V[] = {4.0, 8.0};
    RowInput in;
    in.q = q, in.K = K, in.V = V, in.n = 2, in.d = 1, in.dv = 1, in.scale = 1;
    RowScratch s;
    RowAnalysis a;
    analyze_row(in, kernel_model(Format::fp16, Format::fp32, true), s, a);
    CHECK(a.o[0] == 6.0);
    CHECK(std::fabs(a.lse - std::log(2.0)) <= a.lse_bound);
    CHECK(a.ref_error[0] < 1e-14);
    // fp16 output: the bound holds at least the output's own rounding u_s |o| = 6 / 2048.
    CHECK(a.bound[0] >= 6.0 / 2048);
    CHECK(a.bound[0] < 6.0 * 0.01);
}

TEST_CASE("check-kernel: correct kernels pass on every stress case", "[kernels]") {
    for (Format f : {Format::fp32, Format::fp16, Format::bf16})
        for (StressCase c : stress_cases())
            for (MaskKind m : {MaskKind::none, MaskKind::causal}) {
                INFO(format_name(f) << " " << stress_name(c) << " " << mask_name(m));
                const AttentionProblem p = stress(c, f, m);
                const KernelCheckResult rb = check(p, baseline(p, f), f);
                CHECK(rb.verdict == KernelVerdict::pass);
                CHECK(rb.tensor_error == rb.tensor_baseline);  // the baseline against itself
                CHECK(rb.baseline_bound_ratio <= 1.0);
                const KernelCheckResult rf = check(p, flash_kernel(p, f), f);
                INFO(why(rf));
                CHECK(rf.verdict == KernelVerdict::pass);
                CHECK(rf.worst_bound_ratio <= 1.0);
            }
}

TEST_CASE("check-kernel: shapes (N, d), d_v != d, grouped heads, fully masked rows", "[kernels]") {
    AttentionProblem p = stress(StressCase::gaussian, Format::fp32, MaskKind::none, {48, 16});
    CHECK(check(p, flash_kernel(p, Format::fp32), Format::fp32).verdict == KernelVerdict::pass);
    p = stress(StressCase::gaussian, Format::fp16, MaskKind::causal, {4, 40, 16});
    p.k = stress(StressCase::gaussian, Format::fp16, MaskKind::none, {2, 40, 16}).k;
    p.v = stress(StressCase::heavy_tail, Format::fp16, MaskKind::none, {2, 40, 8}).v;
    CHECK(check(p, flash_kernel(p, Format::fp16), Format::fp16).verdict == KernelVerdict::pass);
    // The wrong key/value head: head h reads kv head h % 2 instead of h / 2.
    AttentionProblem swapped = p;
    swapped.k.values.clear(), swapped.v.values.clear();
    for (long h = 0; h < 4; ++h)
        for (const auto* src : {&p.k, &p.v}) {
            const long per = static_cast<long>(src->values.size()) / 2;
            auto& dst = src == &p.k ? swapped.k.values : swapped.v.values;
            dst.insert(dst.end(), src->values.begin() + (h % 2) * per,
                       src->values.begin() + (h % 2 + 1) * per);
        }
    swapped.k.shape = {4, 40, 16}, swapped.v.shape = {4, 40, 8};
    CHECK(check(p, baseline(swapped, Format::fp16), Format::fp16).verdict == KernelVerdict::wrong);
    // Causal with N_q = 6 > N_k = 4: rows 0 and 1 see no key; zeros and NaN are both accepted.
    AttentionProblem m = stress(StressCase::gaussian, Format::fp32, MaskKind::causal, {6, 8});
    m.k.shape = m.v.shape = {4, 8};
    m.k.values.resize(32), m.v.values.resize(32);
    Array o = baseline(m, Format::fp32);
    CHECK(o.values[0] == 0.0);
    KernelCheckResult r = check(m, o, Format::fp32);
    CHECK(r.verdict == KernelVerdict::pass);
    CHECK(r.masked_rows == 2);
    for (int c = 0; c < 8; ++c) o.values[c] = std::nan("");
    CHECK(check(m, o, Format::fp32).verdict == KernelVerdict::pass);
    o.values[0] = 0.5;
    r = check(m, o, Format::fp32);
    CHECK(r.verdict == KernelVerdict::wrong);
}

TEST_CASE("check-kernel: rank-4 shapes and a tf32 kernel fed fp32 data", "[kernels]") {
    const AttentionProblem p4 =
        stress(StressCase::rank_deficient_k, Format::bf16, MaskKind::causal, {2, 2, 24, 8});
    KernelCheckResult r = check(p4, flash_kernel(p4, Format::bf16), Format::bf16);
    CHECK(r.verdict == KernelVerdict::pass);
    CHECK(r.rows == 2 * 2 * 24);
    CHECK(r.worst_by_bound.at(0).index.size() == 4);
    // tf32: the data are fp32 (not representable in tf32); the kernel rounds q, k, v to tf32 on
    // entry, as the matrix units do, and writes fp32.
    const AttentionProblem p = stress(StressCase::gaussian, Format::fp32, MaskKind::none);
    AttentionProblem entered = p;
    for (Array* a : {&entered.q, &entered.k, &entered.v})
        for (double& x : a->values) x = round_to(x, Format::tf32);
    r = check(p, flash_kernel(entered, Format::tf32), Format::tf32);
    INFO(why(r));
    CHECK_FALSE(r.inputs_exact);
    CHECK(r.verdict == KernelVerdict::pass);
    CHECK(r.worst_bound_ratio <= 1.0);
    // the same kernel judged as fp32 is beyond the fp32 bound: tf32 is not fp32
    CHECK(check(p, flash_kernel(entered, Format::tf32), Format::fp32).verdict ==
          KernelVerdict::wrong);
}

TEST_CASE("check-kernel: planted wrong kernels are caught", "[kernels]") {
    const Format f = Format::fp32;
    const AttentionProblem g = stress(StressCase::gaussian, f);
    KernelCheckResult r = check(g, flash_kernel(g, f, Fault::scale_1_over_d), f);
    CHECK(r.verdict == KernelVerdict::wrong);
    r = check(g, flash_kernel(g, f, Fault::drop_key), f);
    CHECK(r.verdict == KernelVerdict::wrong);
    const AttentionProblem c = stress(StressCase::gaussian, f, MaskKind::causal);
    r = check(c, flash_kernel(c, f, Fault::causal_off_by_one), f);
    CHECK(r.verdict == KernelVerdict::wrong);
    const AttentionProblem big = stress(StressCase::large_logits, f);
    CHECK(check(big, flash_kernel(big, f), f).verdict == KernelVerdict::pass);
    r = check(big, flash_kernel(big, f, Fault::no_max), f);
    CHECK(r.verdict == KernelVerdict::wrong);
    CHECK(r.nonfinite > 0);
    // fp16 storage: the same faults
    const AttentionProblem h = stress(StressCase::spike_v, Format::fp16, MaskKind::causal);
    CHECK(check(h, flash_kernel(h, Format::fp16, Fault::causal_off_by_one), Format::fp16).verdict ==
          KernelVerdict::wrong);
    CHECK(check(h, flash_kernel(h, Format::fp16, Fault::scale_1_over_d), Format::fp16).verdict ==
          KernelVerdict::wrong);
}

TEST_CASE("check-kernel: an extra relative error 1e-4 in a few fp32 elements is not a pass",
          "[kernels]") {
    const Format f = Format::fp32;
    const AttentionProblem g = stress(StressCase::gaussian, f);
    Array o = flash_kernel(g, f);
    REQUIRE(check(g, o, f).verdict == KernelVerdict::pass);
    double max_change = 0;
    for (long row : {5L, 40L, 100L}) {  // in each row its largest element: |o| well above 0
        size_t at = static_cast<size_t>(row * 24);
        for (size_t c = at; c < static_cast<size_t>(row * 24 + 24); ++c)
            if (std::fabs(o.values[c]) > std::fabs(o.values[at])) at = c;
        const double was = o.values[at];
        o.values[at] = static_cast<double>(static_cast<float>(was * (1 + 1e-4)));
        max_change = std::max(max_change, std::fabs(o.values[at] - was));
    }
    CHECK(max_change < 1e-2);  // allclose(atol=1e-2) would accept this output
    const KernelCheckResult r = check(g, o, f);
    INFO(why(r));
    CHECK(r.verdict != KernelVerdict::pass);
    CHECK(r.rows_beyond_rule == 3);
}

TEST_CASE("check-kernel: a causal row never reads a non-finite key it cannot see", "[kernels]") {
    // The check runs blocks of 64 query rows through matrix products padded to the block's widest
    // key count; an infinite value in the last key must reach the last row only.
    AttentionProblem p = stress(StressCase::gaussian, Format::fp32, MaskKind::causal, {1, 130, 8});
    p.v.values[129 * 8] = std::numeric_limits<double>::infinity();
    const Array o = baseline(p, Format::fp32);
    long nonfinite = 0;
    for (long e = 0; e < 130 * 8; ++e) {
        INFO("element " << e);
        if (e < 129 * 8) CHECK(std::isfinite(o.values[e]));
        nonfinite += std::isfinite(o.values[e]) ? 0 : 1;
    }
    CHECK(nonfinite == 1);
    // The check states the same propagation (kernels/attention_nonfinite.hpp): v_129,0 = inf
    // makes column 0 of row 129, the only row that sees key 129, non-finite.
    const KernelCheckResult r = check(p, o, Format::fp32);
    CHECK(r.nonfinite_expected == 1);
    CHECK(r.nonfinite_mismatch == 0);
    CHECK(r.nonfinite == 0);
    CHECK(r.verdict == KernelVerdict::pass);
}

TEST_CASE("check-kernel: the block baselines with fp64 in storage or accumulation", "[kernels]") {
    // fp64 accumulation runs the baselines through dgemm, fp64 storage with fp32 accumulation
    // the row form: each is a correct kernel at its precisions (within the rounding bound).
    const std::pair<Format, Format> decls[] = {{Format::fp16, Format::fp64},
                                               {Format::fp32, Format::fp64},
                                               {Format::fp64, Format::fp32},
                                               {Format::fp64, Format::fp64}};
    for (const auto& [storage, accumulate] : decls)
        for (MaskKind m : {MaskKind::none, MaskKind::causal}) {
            INFO(format_name(storage) << " " << format_name(accumulate) << " " << mask_name(m));
            const AttentionProblem p = stress(StressCase::gaussian, storage, m, {2, 80, 16});
            KernelCheckOptions opt;
            opt.storage = storage, opt.accumulate = accumulate;
            Array o, lse;
            baseline_attention(p, storage, accumulate, o, lse);
            const KernelCheckResult r = check_attention(p, o, &lse, opt);
            INFO(why(r));
            CHECK(r.verdict == KernelVerdict::pass);
            CHECK(r.tensor_error == r.tensor_baseline);
            CHECK(r.worst_bound_ratio <= 1.0);
            const Array dout = generate_directions(StressCase::gaussian, 3,
                                                   {problem_shape(p).out_shape()}, storage)[0];
            Array dq, dk, dv;
            baseline_vjp(p, dout, storage, accumulate, dq, dk, dv);
            const VjpCheckResult rv = check_attention_vjp(p, dout, dq, dk, dv, opt);
            INFO(rv.summary);
            CHECK(rv.verdict == KernelVerdict::pass);
            CHECK(rv.dk.tensor_error == rv.dk.tensor_baseline);
            for (const KernelCheckResult* t : {&rv.dq, &rv.dk, &rv.dv})
                CHECK(t->worst_bound_ratio <= 1.0);
        }
}

TEST_CASE("check-kernel: log-sum-exp is checked when given", "[kernels]") {
    const AttentionProblem p = stress(StressCase::near_ties, Format::fp16, MaskKind::causal);
    Array lse;
    const Array o = baseline(p, Format::fp16, &lse);
    KernelCheckResult r = check(p, o, Format::fp16, &lse);
    CHECK(r.verdict == KernelVerdict::pass);
    CHECK(r.has_lse);
    CHECK(r.lse_bound_ratio <= 1.0);
    for (size_t i = 0; i < 3; ++i) lse.values[i * 7] += 1e-3;
    r = check(p, o, Format::fp16, &lse);
    CHECK(r.verdict == KernelVerdict::wrong);
    CHECK(r.lse_beyond_bound == 3);
}

TEST_CASE("check-kernel: shape mismatches are data errors", "[kernels]") {
    const AttentionProblem p = stress(StressCase::gaussian, Format::fp32);
    Array o = baseline(p, Format::fp32);
    o.shape = {2, 72, 23};
    CHECK(test::code_of([&] { check(p, o, Format::fp32); }) == ExitCode::DataError);
    AttentionProblem bad = p;
    bad.k.shape = {2, 72, 12}, bad.k.values.resize(2 * 72 * 12);
    CHECK(test::has(test::error_of([&] { problem_shape(bad); }), "feature dimension"));
}

// Tightness of the rounding bound (proofs/kernel_tolerance.md, "Measured tightness"): the worst
// error / bound of the correct kernels over the stress cases, and their worst error / allowed of
// the baseline rule, printed; at (H, N, d) = (2, 128, 64) they must also pass.
TEST_CASE("check-kernel: tightness of the rounding bound over the stress suite",
          "[kernels][tightness]") {
    for (Format f : {Format::fp32, Format::fp16, Format::bf16}) {
        double flash = 0, base = 0, rule = 0;
        std::string worst_case, worst_rule_case;
        for (StressCase c : stress_cases())
            for (MaskKind m : {MaskKind::none, MaskKind::causal}) {
                const AttentionProblem p = stress(c, f, m, {2, 128, 64});
                const KernelCheckResult rf = check(p, flash_kernel(p, f), f);
                INFO(format_name(f)
                     << " " << stress_name(c) << " " << mask_name(m) << ": " << why(rf));
                CHECK(rf.verdict == KernelVerdict::pass);
                const std::string name = std::string(stress_name(c)) + "/" + mask_name(m);
                if (rf.worst_bound_ratio > flash) flash = rf.worst_bound_ratio, worst_case = name;
                if (rf.worst_rule_ratio > rule) rule = rf.worst_rule_ratio, worst_rule_case = name;
                base = std::max(base, check(p, baseline(p, f), f).baseline_bound_ratio);
            }
        std::printf(
            "tightness %s (H, N, d) = (2, 128, 64): worst error/bound flash %.3g (%s), "
            "baseline %.3g; worst error/allowed flash %.3g (%s)\n",
            format_name(f), flash, worst_case.c_str(), base, rule, worst_rule_case.c_str());
        CHECK(flash <= 1.0);
        CHECK(base <= 1.0);
    }
}
