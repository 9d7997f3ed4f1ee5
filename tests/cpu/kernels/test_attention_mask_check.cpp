// check-kernel attention under boolean and additive masks (kernels/attention_problem.hpp,
// MaskKind): correct kernels -- attnspec's baseline and a plain kernel in native float arithmetic
// adding the mask to the scaled logits in fp32, P and O stored in fp32 or fp16 -- must pass on
// generated masks with fully masked rows; planted wrong ones -- a kernel that ignores the boolean
// mask, one reading the mask transposed (M_ji), one scaling the additive mask by s, one flipping
// its sign -- must not pass. Shape and value errors of the mask are refused.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>

#include "attnspec/base/errors.hpp"
#include "attnspec/kernels/attention_check.hpp"
#include "attnspec/kernels/derivative_check.hpp"
#include "attnspec/kernels/stress.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::kernels;

namespace {

enum class Fault { none, ignore_mask, transposed, scaled_by_s, sign_flipped };

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// A plain kernel in float: x_j = fl(s q.k) + M_ij in fp32 (hidden keys -inf), max-shifted
// softmax, P rounded to `storage`, O = P V in fp32 rounded to the output format. A row with no
// visible key writes zeros (FlashAttention's convention).
Array float_kernel(const AttentionProblem& p, Format storage, Fault fault = Fault::none) {
    const ProblemShape sh = problem_shape(p);
    const auto s = static_cast<float>(effective_scale(p, sh));
    Array o;
    o.shape = sh.out_shape();
    o.values.assign(static_cast<size_t>(sh.B * sh.H * sh.Nq * sh.dv), 0.0);
    std::vector<float> x(static_cast<size_t>(sh.Nk));
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h)
            for (long i = 0; i < sh.Nq; ++i) {
                const long row = (b * sh.H + h) * sh.Nq + i, kv = b * sh.H_kv + sh.kv_head(h);
                const double* q = p.q.values.data() + row * sh.d;
                const double* K = p.k.values.data() + kv * sh.Nk * sh.d;
                const double* V = p.v.values.data() + kv * sh.Nk * sh.dv;
                float m = kNegInf;
                for (long j = 0; j < sh.Nk; ++j) {
                    float dot = 0;
                    for (long c = 0; c < sh.d; ++c)
                        dot += static_cast<float>(q[c]) * static_cast<float>(K[j * sh.d + c]);
                    const long at = fault == Fault::transposed ? sh.mask_row(b, h, j) + i
                                                               : sh.mask_row(b, h, i) + j;
                    const auto M = static_cast<float>(p.mask_array.values[at]);
                    float xj = dot * s;
                    if (p.mask == MaskKind::boolean)
                        xj = M != 0 || fault == Fault::ignore_mask ? xj : kNegInf;
                    else if (fault == Fault::scaled_by_s)
                        xj = (dot + M) * s;
                    else
                        xj = fault == Fault::sign_flipped ? xj - M : xj + M;
                    x[j] = xj, m = std::max(m, xj);
                }
                if (m == kNegInf) continue;  // fully masked: zeros
                float l = 0;
                for (float& xj : x) l += (xj = std::exp(xj - m));
                std::vector<float> acc(static_cast<size_t>(sh.dv), 0.f);
                for (long j = 0; j < sh.Nk; ++j) {
                    const auto pj = static_cast<float>(round_to(x[j] / l, storage));
                    for (long c = 0; c < sh.dv; ++c)
                        acc[c] += pj * static_cast<float>(V[j * sh.dv + c]);
                }
                for (long c = 0; c < sh.dv; ++c)
                    o.values[row * sh.dv + c] =
                        round_to(static_cast<double>(acc[c]), output_format(storage));
            }
    return o;
}

AttentionProblem masked(StressCase c, Format f, MaskKind mask,
                        std::vector<std::int64_t> shape = {2, 48, 16}) {
    AttentionProblem p = generate_stress(c, 5, shape, f);
    p.mask = mask;
    p.mask_array = generate_mask(mask, 5, shape, f);
    return p;
}

KernelCheckResult check(const AttentionProblem& p, const Array& o, Format storage,
                        const Array* lse = nullptr) {
    KernelCheckOptions opt;
    opt.storage = storage;
    return check_attention(p, o, lse, opt);
}

int code_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return static_cast<int>(e.code());
    }
    return 0;
}

}  // namespace

TEST_CASE("check-kernel masks: the generated mask has holes and fully masked rows", "[kernels]") {
    const Array m = generate_mask(MaskKind::boolean, 5, {2, 48, 16}, Format::fp32);
    REQUIRE(m.shape == std::vector<std::int64_t>{2, 48, 48});
    CHECK(m.values == generate_mask(MaskKind::boolean, 5, {2, 48, 16}, Format::fp32).values);
    long full = 0, holes = 0;
    for (long r = 0; r < 2 * 48; ++r) {
        long seen = 0;
        for (long j = 0; j < 48; ++j) {
            seen += m.values[r * 48 + j] != 0;
            holes += j > 0 && m.values[r * 48 + j] != 0 && m.values[r * 48 + j - 1] == 0;
        }
        full += seen == 0;
    }
    CHECK(full >= 2 * 3);  // rows 7, 23, 39 of each head
    CHECK(holes > 0);      // visible keys after a hidden one: no prefix
    const Array a = generate_mask(MaskKind::additive, 5, {2, 48, 16}, Format::fp16);
    for (std::size_t e = 0; e < a.values.size(); ++e)
        CHECK((a.values[e] == -HUGE_VAL) == (m.values[e] == 0));
}

TEST_CASE("check-kernel masks: correct kernels pass with each mask", "[kernels]") {
    for (Format f : {Format::fp32, Format::fp16})
        for (MaskKind mk : {MaskKind::boolean, MaskKind::additive})
            for (StressCase c : {StressCase::gaussian, StressCase::large_logits,
                                 StressCase::spike_v, StressCase::heavy_tail}) {
                INFO(format_name(f) << " " << mask_name(mk) << " " << stress_name(c));
                const AttentionProblem p = masked(c, f, mk);
                Array bo, bl;
                baseline_attention(p, f, Format::fp32, bo, bl);
                KernelCheckResult r = check(p, bo, f, &bl);
                INFO(r.summary);
                CHECK(r.verdict == KernelVerdict::pass);
                CHECK(r.masked_rows >= 6);
                CHECK(r.baseline_bound_ratio <= 1.0);
                r = check(p, float_kernel(p, f), f);
                INFO(r.summary);
                CHECK(r.verdict == KernelVerdict::pass);
                CHECK(r.worst_bound_ratio <= 1.0);
            }
    // Rank 4 with the mask broadcast over batches and heads, shape (1, 1, N_q, N_k).
    AttentionProblem p =
        masked(StressCase::gaussian, Format::fp32, MaskKind::additive, {2, 2, 24, 8});
    p.mask_array = generate_mask(MaskKind::additive, 9, {1, 1, 24, 8}, Format::fp32);
    CHECK(check(p, float_kernel(p, Format::fp32), Format::fp32).verdict == KernelVerdict::pass);
}

TEST_CASE("check-kernel masks: planted mask faults are caught", "[kernels]") {
    for (Format f : {Format::fp32, Format::fp16}) {
        INFO(format_name(f));
        AttentionProblem b = masked(StressCase::gaussian, f, MaskKind::boolean);
        CHECK(check(b, float_kernel(b, f, Fault::ignore_mask), f).verdict == KernelVerdict::wrong);
        CHECK(check(b, float_kernel(b, f, Fault::transposed), f).verdict == KernelVerdict::wrong);
        AttentionProblem a = masked(StressCase::gaussian, f, MaskKind::additive);
        CHECK(check(a, float_kernel(a, f, Fault::transposed), f).verdict == KernelVerdict::wrong);
        CHECK(check(a, float_kernel(a, f, Fault::scaled_by_s), f).verdict == KernelVerdict::wrong);
        CHECK(check(a, float_kernel(a, f, Fault::sign_flipped), f).verdict == KernelVerdict::wrong);
        // The mask ignored by the checker itself: the same kernel judged against no mask fails.
        AttentionProblem none = b;
        none.mask = MaskKind::none, none.mask_array = Array{};
        CHECK(check(none, float_kernel(b, f), f).verdict == KernelVerdict::wrong);
    }
    // A fully masked row holding a value: wrong; all NaN there: pass.
    AttentionProblem p = masked(StressCase::gaussian, Format::fp32, MaskKind::boolean);
    Array o = float_kernel(p, Format::fp32);
    const long dv = 16, row = 7;  // row 7 of head 0 is fully masked
    for (long c = 0; c < dv; ++c) o.values[row * dv + c] = std::nan("");
    CHECK(check(p, o, Format::fp32).verdict == KernelVerdict::pass);
    o.values[row * dv] = 0.25;
    CHECK(check(p, o, Format::fp32).verdict == KernelVerdict::wrong);
}

TEST_CASE("check-kernel masks: bad mask arrays and operations without masks", "[kernels]") {
    AttentionProblem p = masked(StressCase::gaussian, Format::fp32, MaskKind::boolean);
    const Array o = float_kernel(p, Format::fp32);
    const int data = static_cast<int>(ExitCode::DataError);
    AttentionProblem bad = p;
    bad.mask_array.shape = {2, 48, 47};
    CHECK(code_of([&] { check(bad, o, Format::fp32); }) == data);
    bad = p;
    bad.mask_array.shape = {3, 48, 48}, bad.mask_array.values.resize(3 * 48 * 48, 1.0);
    CHECK(code_of([&] { check(bad, o, Format::fp32); }) == data);
    bad = p;
    bad.mask_array.values[3] = 0.5;  // not boolean
    CHECK(code_of([&] { check(bad, o, Format::fp32); }) == data);
    bad = masked(StressCase::gaussian, Format::fp32, MaskKind::additive);
    bad.mask_array.values[3] = std::nan("");
    CHECK(code_of([&] { check(bad, o, Format::fp32); }) == data);
    bad.mask_array.values[3] = HUGE_VAL;
    CHECK(code_of([&] { check(bad, o, Format::fp32); }) == data);
    bad = p;
    bad.mask = MaskKind::causal;  // an array with a mask that reads none
    CHECK(code_of([&] { check(bad, o, Format::fp32); }) == data);
    // NaN/Inf inputs: their stated propagation is for masks none and causal only.
    for (const MaskKind m : {MaskKind::boolean, MaskKind::additive}) {
        AttentionProblem nf = masked(StressCase::nan_k, Format::fp32, m);
        CHECK(code_of([&] { check(nf, o, Format::fp32); }) == data);
        nf.mask = MaskKind::none, nf.mask_array = Array{};
        CHECK(code_of([&] { check(nf, o, Format::fp32); }) == 0);  // accepted without the mask
    }
    // attention-vjp and attention-jvp take these masks (test_derivative_mask_check.cpp) and,
    // as attention, refuse NaN/Inf inputs under them.
    const AttentionProblem nf = masked(StressCase::nan_k, Format::fp32, MaskKind::additive);
    const KernelCheckOptions opt;
    CHECK(code_of([&] { check_attention_vjp(nf, o, nf.q, nf.k, nf.v, opt); }) == data);
    CHECK(code_of([&] { check_attention_jvp(nf, nf.q, nf.k, nf.v, o, opt); }) == data);
    CHECK(code_of([&] { check_attention_vjp(p, o, p.q, p.k, p.v, opt); }) == 0);
}

// Tightness under masks (proofs/kernel_tolerance.md, "Boolean and additive masks"): the worst
// error / bound of the float kernel and the baseline over every stress case with generated
// boolean and additive masks (seed 5) at (H, N, d) = (2, 128, 64), printed; all must pass.
TEST_CASE("check-kernel masks: tightness of the rounding bound", "[kernels][tightness]") {
    for (Format f : {Format::fp32, Format::fp16, Format::bf16})
        for (MaskKind mk : {MaskKind::boolean, MaskKind::additive}) {
            double worst = 0, base = 0, rule = 0;
            std::string worst_case;
            for (StressCase c : stress_cases()) {
                const AttentionProblem p = masked(c, f, mk, {2, 128, 64});
                const KernelCheckResult r = check(p, float_kernel(p, f), f);
                INFO(format_name(f)
                     << " " << mask_name(mk) << " " << stress_name(c) << ": " << r.summary);
                CHECK(r.verdict == KernelVerdict::pass);
                if (r.worst_bound_ratio > worst)
                    worst = r.worst_bound_ratio, worst_case = stress_name(c);
                rule = std::max(rule, r.worst_rule_ratio);
                Array bo, bl;
                baseline_attention(p, f, Format::fp32, bo, bl);
                base = std::max(base, check(p, bo, f).baseline_bound_ratio);
            }
            std::printf(
                "tightness %s %s (2, 128, 64): worst error/bound float kernel %.3g (%s), "
                "baseline %.3g; worst error/allowed %.3g\n",
                format_name(f), mask_name(mk), worst, worst_case.c_str(), base, rule);
            CHECK(worst <= 1.0);
            CHECK(base <= 1.0);
        }
}

// Additive masks that hide keys with a large finite value instead of -inf (-1e9, or the dtype's
// lowest value as Hugging Face does) in every row that keeps a key: those keys' weights
// underflow, the bound stays finite on every row, and mask faults are still wrong. (A row whose
// every key had the large value would not be fully masked, and its logits s q.k + M would lose
// q.k to the rounding of M in fp32: no finite bound there, rightly; the fully masked rows keep
// -inf here.)
TEST_CASE("check-kernel masks: large finite negative additive values", "[kernels]") {
    for (Format f : {Format::fp32, Format::fp16})
        for (double big :
             {-1e9, f == Format::fp16 ? -65504.0 : double(std::numeric_limits<float>::lowest())}) {
            if (f == Format::fp16 && big == -1e9) continue;  // not an fp16 value
            INFO(format_name(f) << " " << big);
            AttentionProblem p = masked(StressCase::heavy_tail, f, MaskKind::additive);
            const long N = 48;
            for (long row = 0; row < 2 * N; ++row) {
                double* m = p.mask_array.values.data() + row * N;
                if (std::all_of(m, m + N, [](double x) { return x == -HUGE_VAL; })) continue;
                std::replace(m, m + N, -HUGE_VAL, big);
            }
            KernelCheckResult r = check(p, float_kernel(p, f), f);
            INFO(r.summary);
            CHECK(r.verdict == KernelVerdict::pass);
            CHECK(r.masked_rows == 6);
            CHECK(r.worst_bound_ratio <= 1.0);
            CHECK(r.worst_bound_ratio > 1e-4);  // finite bounds, not +inf everywhere
            CHECK(std::isfinite(r.max_reference_error));
            CHECK(check(p, float_kernel(p, f, Fault::transposed), f).verdict ==
                  KernelVerdict::wrong);
            CHECK(check(p, float_kernel(p, f, Fault::scaled_by_s), f).verdict ==
                  KernelVerdict::wrong);
        }
}
