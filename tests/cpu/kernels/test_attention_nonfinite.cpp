// check-kernel attention on inputs with NaN/Inf (kernels/attention_nonfinite.hpp): the stated
// propagation on small hand-built problems, the non-finite stress cases, and kernels written
// here. A correct float32 kernel (NumPy-style max-subtracted softmax) passes on every non-finite
// case; planted wrong ones -- NaN/Inf replaced by 0/+-FLT_MAX (numpy.nan_to_num), a max taken over
// the whole head (one row's NaN or +inf leaks to every row) -- are wrong, and an error of 0.1 in
// one element expected finite does not pass.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attnspec/kernels/attention_check.hpp"
#include "attnspec/kernels/attention_nonfinite.hpp"
#include "attnspec/kernels/stress.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::kernels;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

enum class Fault { none, nan_to_num, global_max, finite_error };

// float32 attention as NumPy writes it: x = s q k^T, m = x.max() (NaN propagates), t = exp(x - m),
// p = t / t.sum(), o = p v, lse = m + log(t.sum()). Fault::global_max takes m over every logit of
// the head; Fault::nan_to_num writes 0 for every NaN of o and lse.
void numpy_kernel(const AttentionProblem& p, Fault fault, Array& o, Array& lse) {
    const ProblemShape sh = problem_shape(p);
    const auto s = static_cast<float>(effective_scale(p, sh));
    o.shape = sh.out_shape(), lse.shape = sh.lse_shape();
    o.values.assign(static_cast<size_t>(sh.B * sh.H * sh.Nq * sh.dv), 0.0);
    lse.values.assign(static_cast<size_t>(sh.B * sh.H * sh.Nq), 0.0);
    auto nan_max = [](float a, float b) {
        return std::isnan(a) ? a : std::isnan(b) || b > a ? b : a;
    };
    for (long bh = 0; bh < sh.B * sh.H; ++bh) {
        const long kv = (bh / sh.H) * sh.H_kv + sh.kv_head(bh % sh.H);
        const double* K = p.k.values.data() + kv * sh.Nk * sh.d;
        const double* V = p.v.values.data() + kv * sh.Nk * sh.dv;
        std::vector<std::vector<float>> X(static_cast<size_t>(sh.Nq));
        float global = -std::numeric_limits<float>::infinity();
        for (long i = 0; i < sh.Nq; ++i) {
            const double* q = p.q.values.data() + (bh * sh.Nq + i) * sh.d;
            for (long j = 0; j < sh.visible(i, p.mask); ++j) {
                float dot = 0;
                for (long c = 0; c < sh.d; ++c)
                    dot += static_cast<float>(q[c]) * static_cast<float>(K[j * sh.d + c]);
                X[i].push_back(s * dot);
                global = nan_max(global, s * dot);
            }
        }
        for (long i = 0; i < sh.Nq; ++i) {
            const long row = bh * sh.Nq + i;
            if (X[i].empty()) continue;  // no visible key: zeros
            float m = -std::numeric_limits<float>::infinity(), l = 0;
            for (float x : X[i]) m = nan_max(m, x);
            if (fault == Fault::global_max) m = global;
            std::vector<float> t, acc(static_cast<size_t>(sh.dv), 0.f);
            for (float x : X[i]) l += t.emplace_back(std::exp(x - m));
            for (size_t j = 0; j < t.size(); ++j)
                for (long c = 0; c < sh.dv; ++c)
                    acc[c] += t[j] / l * static_cast<float>(V[j * sh.dv + c]);
            for (long c = 0; c < sh.dv; ++c) o.values[row * sh.dv + c] = acc[c];
            lse.values[row] = m + std::log(l);
        }
    }
    if (fault == Fault::nan_to_num)  // as numpy.nan_to_num: NaN -> 0, +-inf -> +-FLT_MAX
        for (Array* a : {&o, &lse})
            for (double& x : a->values)
                x = std::isnan(x)   ? 0.0
                    : std::isinf(x) ? std::copysign(std::numeric_limits<float>::max(), x)
                                    : x;
    if (fault != Fault::finite_error) return;
    const NonfiniteExpectation x = expected_nonfinite(p);  // the first element expected finite
    for (size_t e = 0; e < x.o.size(); ++e)
        if (x.o[e] == Expect::finite) {
            o.values[e] += 0.1;
            break;
        }
}

AttentionProblem small(long N, long d) {
    AttentionProblem p;
    p.q.shape = p.k.shape = p.v.shape = {N, d};
    p.q.values.assign(static_cast<size_t>(N * d), 0.5);
    p.k.values = p.q.values;
    p.v.values.assign(static_cast<size_t>(N * d), 1.0);
    for (long i = 0; i < N * d; ++i) p.v.values[i] = 0.1 * double(i);
    return p;
}

}  // namespace

TEST_CASE("check-kernel non-finite: the stated propagation", "[kernels]") {
    SECTION("NaN in v_jc: column c of the rows that see key j, either where masked") {
        AttentionProblem p = small(3, 4);
        p.v.values[1 * 4 + 2] = kNan;
        p.mask = MaskKind::causal;
        const NonfiniteExpectation x = expected_nonfinite(p);
        for (long i = 0; i < 3; ++i) {
            CHECK(x.lse[i] == Expect::finite);
            for (long c = 0; c < 4; ++c)
                CHECK(x.o[i * 4 + c] == (c != 2   ? Expect::finite
                                         : i >= 1 ? Expect::nonfinite
                                                  : Expect::either));  // row 0: masked key 1
        }
    }
    SECTION("NaN in q_i: row i; NaN in k_j: every row that sees j") {
        AttentionProblem p = small(3, 2);
        p.q.values[1 * 2 + 0] = kNan;
        NonfiniteExpectation x = expected_nonfinite(p);
        CHECK(x.lse == std::vector<Expect>{Expect::finite, Expect::nonfinite, Expect::finite});
        CHECK(x.o[2] == Expect::nonfinite);
        CHECK(x.o[3] == Expect::nonfinite);
        CHECK(x.o[5] == Expect::finite);
        p = small(3, 2);
        p.k.values[2 * 2 + 1] = kNan;
        p.mask = MaskKind::causal;  // only row 2 sees key 2; rows 0, 1 may read it masked
        x = expected_nonfinite(p);
        CHECK(x.lse == std::vector<Expect>{Expect::either, Expect::either, Expect::nonfinite});
        CHECK(x.o[0] == Expect::either);
    }
    SECTION("+inf in k_jc: +inf logits poison, -inf logits drop the key") {
        AttentionProblem p = small(3, 2);
        p.k.values[1 * 2 + 0] = kInf;
        p.q.values[0 * 2 + 0] = 1.0;   // x_01 = +inf: row 0 non-finite
        p.q.values[2 * 2 + 0] = -1.0;  // x_21 = -inf: key 1 has weight 0 in row 2
        p.q.values[1 * 2 + 0] = 0.0;   // 0 x inf = NaN: row 1 non-finite
        p.v.values[1 * 2 + 1] = kNan;  // read with weight 0 by row 2: either
        const NonfiniteExpectation x = expected_nonfinite(p);
        CHECK(x.lse == std::vector<Expect>{Expect::nonfinite, Expect::nonfinite, Expect::finite});
        CHECK(x.o[4] == Expect::finite);
        CHECK(x.o[5] == Expect::either);
        p.mask = MaskKind::causal;  // row 0 sees key 0 only: finite
        p.k.values[0] = -kInf;      // now x_00 = -inf: every visible logit -inf
        p.q.values[0] = 1.0;
        const NonfiniteExpectation y = expected_nonfinite(p);
        CHECK(y.o[0] == Expect::zero_or_nonfinite);
        CHECK(y.lse[0] == Expect::nonfinite);
    }
}

TEST_CASE("check-kernel non-finite: the stress cases", "[kernels][stress]") {
    const std::vector<std::int64_t> shape = {3, 24, 8};
    for (StressCase c : nonfinite_stress_cases()) {
        CAPTURE(stress_name(c));
        const AttentionProblem p = generate_stress(c, 5, shape, Format::fp16);
        const AttentionProblem g = generate_stress(StressCase::gaussian, 5, shape, Format::fp16);
        const AttentionProblem again = generate_stress(c, 5, shape, Format::fp16);
        CHECK(has_nonfinite_input(p));
        const std::string name = stress_name(c);
        auto pick = [&](const AttentionProblem& x) -> const Array& {
            return name.back() == 'q' ? x.q : name.back() == 'k' ? x.k : x.v;
        };
        const Array &a = pick(p), &ga = pick(g), &aa = pick(again);
        long planted = 0, differ = 0;
        for (size_t e = 0; e < a.values.size(); ++e) {
            planted += !std::isfinite(a.values[e]);
            differ += !(a.values[e] == ga.values[e]);
            CHECK((a.values[e] == aa.values[e] ||
                   (std::isnan(a.values[e]) && std::isnan(aa.values[e]))));
        }
        CHECK(planted == 3);  // one per head
        CHECK(differ == 3);   // the rest is the gaussian case
        const std::vector<StressCase> finite = stress_cases();
        CHECK(std::find(finite.begin(), finite.end(), c) == finite.end());
    }
}

TEST_CASE("check-kernel non-finite: correct and planted kernels", "[kernels]") {
    const std::vector<std::int64_t> shape = {2, 40, 16};
    for (StressCase c : nonfinite_stress_cases())
        for (MaskKind mask : {MaskKind::none, MaskKind::causal})
            for (Format f : {Format::fp32, Format::fp16})
                for (std::uint64_t seed : {1u, 2u}) {
                    CAPTURE(stress_name(c), mask_name(mask), format_name(f), seed);
                    AttentionProblem p = generate_stress(c, seed, shape, f);
                    p.mask = mask;
                    KernelCheckOptions opt;
                    opt.storage = f;
                    Array o, lse;
                    numpy_kernel(p, Fault::none, o, lse);
                    const KernelCheckResult r = check_attention(p, o, &lse, opt);
                    CHECK(r.verdict == KernelVerdict::pass);
                    CHECK(r.nonfinite_mismatch == 0);
                    CHECK(r.nonfinite_expected > 0);
                    CHECK(r.worst_bound_ratio <= 1);
                    numpy_kernel(p, Fault::nan_to_num, o, lse);
                    const KernelCheckResult z = check_attention(p, o, &lse, opt);
                    CHECK(z.verdict == KernelVerdict::wrong);
                    CHECK(z.nonfinite_mismatch > 0);
                    REQUIRE_FALSE(z.worst_by_bound.empty());
                    CHECK(std::isnan(z.worst_by_bound.front().reference));
                    CHECK(std::isfinite(z.worst_by_bound.front().got));
                    const NonfiniteExpectation x = expected_nonfinite(p);
                    if (std::count(x.o.begin(), x.o.end(), Expect::finite) > 0) {
                        numpy_kernel(p, Fault::finite_error, o, lse);
                        CHECK(check_attention(p, o, &lse, opt).verdict != KernelVerdict::pass);
                    }
                    if (c != StressCase::nan_q && c != StressCase::inf_k) continue;
                    // one row's NaN (nan-q) or +inf logit (inf-k) reaches the global max
                    numpy_kernel(p, Fault::global_max, o, lse);
                    const KernelCheckResult g = check_attention(p, o, &lse, opt);
                    CHECK(g.verdict == KernelVerdict::wrong);
                    CHECK(g.nonfinite > 0);
                    CHECK(g.nonfinite_mismatch > 0);
                }
}
