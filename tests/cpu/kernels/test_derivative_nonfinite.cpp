// check-kernel attention-vjp and attention-jvp on inputs with NaN/Inf
// (kernels/derivative_nonfinite.hpp): the stated propagation on small hand-built problems, the
// seeded non-finite stress cases of the directions, and kernels: attnspec's plain derivatives
// (kernels/derivative_baseline.hpp, IEEE arithmetic throughout) pass on every non-finite case;
// planted wrong ones -- NaN/Inf replaced by 0 (numpy.nan_to_num), one row's NaN spread to every
// row of its head, an error of 0.1 in one element expected finite -- do not.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attnspec/kernels/derivative_baseline.hpp"
#include "attnspec/kernels/derivative_nonfinite.hpp"
#include "attnspec/kernels/stress.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::kernels;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr Expect F = Expect::finite, N = Expect::nonfinite, E = Expect::either;

AttentionProblem small(long n, long d) {
    AttentionProblem p;
    p.q.shape = p.k.shape = p.v.shape = {n, d};
    for (long i = 0; i < n * d; ++i) {
        p.q.values.push_back(0.3 + 0.1 * double(i % 5));
        p.k.values.push_back(0.2 - 0.05 * double(i % 7));
        p.v.values.push_back(0.1 * double(i));
    }
    return p;
}

// Row r of a pattern of width w, all equal to e.
bool row_is(const std::vector<Expect>& x, long r, long w, Expect e) {
    return std::all_of(x.begin() + r * w, x.begin() + (r + 1) * w,
                       [e](Expect y) { return y == e; });
}

enum class Fault { none, nan_to_num, spread, finite_error };

// The fault applied to `a` (one output tensor, heads of `rows` rows); finite_error adds 0.1 to
// the first element `x` expects finite (false when there is none). Returns whether it changed an
// element `x` expects finite.
bool plant(Array& a, const std::vector<Expect>& x, long rows, Fault f) {
    const long w = static_cast<long>(a.shape.back()), head = rows * w;
    bool changed = false;
    if (f == Fault::nan_to_num)
        for (double& v : a.values)
            if (!std::isfinite(v)) v = 0;
    if (f == Fault::spread)
        for (long h0 = 0; h0 < static_cast<long>(a.values.size()); h0 += head) {
            const auto b = a.values.begin() + h0;
            if (std::all_of(b, b + head, [](double v) { return std::isfinite(v); })) continue;
            for (long e = h0; e < h0 + head; ++e)
                changed = changed || x[static_cast<size_t>(e)] == F, a.values[e] = kNan;
        }
    if (f == Fault::finite_error) {
        const auto it = std::find(x.begin(), x.end(), F);
        if (it == x.end()) return false;
        a.values[static_cast<size_t>(it - x.begin())] += 0.1;
        changed = true;
    }
    return changed;
}

}  // namespace

TEST_CASE("check-kernel vjp non-finite: the stated propagation", "[kernels]") {
    SECTION("NaN in q_i: dQ_i, every dK and dV row; the other dQ rows finite") {
        AttentionProblem p = small(3, 2);
        p.q.values[1 * 2 + 0] = kNan;
        const VjpExpectation x = expected_vjp_nonfinite(p, small(3, 2).v);
        CHECK(row_is(x.dq, 0, 2, F));
        CHECK(row_is(x.dq, 1, 2, N));
        CHECK(row_is(x.dq, 2, 2, F));
        CHECK(std::all_of(x.dk.begin(), x.dk.end(), [](Expect e) { return e == N; }));
        CHECK(std::all_of(x.dv.begin(), x.dv.end(), [](Expect e) { return e == N; }));
    }
    SECTION("NaN in dO_ic: dQ_i, every dK row, column c of dV") {
        AttentionProblem p = small(3, 2);
        Array dout = small(3, 2).v;
        dout.values[2 * 2 + 1] = kNan;
        const VjpExpectation x = expected_vjp_nonfinite(p, dout);
        CHECK(row_is(x.dq, 1, 2, F));
        CHECK(row_is(x.dq, 2, 2, N));
        CHECK(std::all_of(x.dk.begin(), x.dk.end(), [](Expect e) { return e == N; }));
        for (long j = 0; j < 3; ++j) CHECK((x.dv[j * 2] == F && x.dv[j * 2 + 1] == N));
    }
    SECTION("NaN in v_j under causal: dV unaffected, rows before j either") {
        AttentionProblem p = small(3, 2);
        p.mask = MaskKind::causal;
        p.v.values[2 * 2 + 0] = kNan;
        const VjpExpectation x = expected_vjp_nonfinite(p, small(3, 2).v);
        CHECK(row_is(x.dq, 0, 2, E));  // key 2 masked: 0 x NaN in a whole-block kernel
        CHECK(row_is(x.dq, 2, 2, N));
        for (long j = 0; j < 3; ++j) CHECK(row_is(x.dk, j, 2, N));
        CHECK(std::none_of(x.dv.begin(), x.dv.end(), [](Expect e) { return e == N; }));
    }
    SECTION("-inf logit: the key dropped, the row's elements either") {
        AttentionProblem p = small(3, 2);
        p.k.values[1 * 2 + 0] = kInf;
        p.q.values[0] = -1.0;  // x_01 = -inf: row 0 weighted-0; rows 1, 2 (q > 0) poisoned
        const VjpExpectation x = expected_vjp_nonfinite(p, small(3, 2).v);
        CHECK(row_is(x.dq, 0, 2, E));
        CHECK(row_is(x.dq, 1, 2, N));
        CHECK(row_is(x.dk, 0, 2, N));
    }
}

TEST_CASE("check-kernel vjp non-finite: grouped heads share dK and dV", "[kernels]") {
    AttentionProblem p = generate_stress(StressCase::gaussian, 4, {1, 2, 12, 8}, Format::fp32);
    const AttentionProblem kv =
        generate_stress(StressCase::gaussian, 5, {1, 1, 12, 8}, Format::fp32);
    p.k = kv.k, p.v = kv.v;  // two query heads on one K/V head
    Array dout = generate_directions(StressCase::gaussian, 4, {{1, 2, 12, 8}}, Format::fp32)[0];
    p.q.values[(12 + 3) * 8 + 1] = kNan;  // head 1, row 3
    const VjpExpectation x = expected_vjp_nonfinite(p, dout);
    for (long i = 0; i < 12; ++i) CHECK(row_is(x.dq, i, 8, F));  // head 0 untouched
    CHECK(row_is(x.dq, 12 + 3, 8, N));
    for (long j = 0; j < 12; ++j) CHECK((row_is(x.dk, j, 8, N) && row_is(x.dv, j, 8, N)));
    Array dq, dk, dv;
    baseline_vjp(p, dout, Format::fp32, Format::fp32, dq, dk, dv);
    KernelCheckOptions opt;
    const VjpCheckResult r = check_attention_vjp(p, dout, dq, dk, dv, opt);
    INFO(r.summary);
    CHECK(r.verdict == KernelVerdict::pass);
    dq.values[0] = kNan;  // a NaN in head 0 where the pattern wants a finite value
    CHECK(check_attention_vjp(p, dout, dq, dk, dv, opt).verdict == KernelVerdict::wrong);
}

TEST_CASE("check-kernel jvp non-finite: the stated propagation", "[kernels]") {
    AttentionProblem p = small(3, 2);
    Array tq = small(3, 2).q, tk = small(3, 2).k, tv = small(3, 2).v;
    SECTION("NaN in tk_j: every row that sees j; masked: either") {
        tk.values[1 * 2 + 1] = kNan;
        p.mask = MaskKind::causal;
        const std::vector<Expect> x = expected_jvp_nonfinite(p, tq, tk, tv);
        CHECK(row_is(x, 0, 2, E));
        CHECK(row_is(x, 1, 2, N));
        CHECK(row_is(x, 2, 2, N));
    }
    SECTION("Inf in tv_jc or v_jc: column c only") {
        tv.values[0 * 2 + 1] = -kInf;
        const std::vector<Expect> x = expected_jvp_nonfinite(p, tq, tk, tv);
        for (long i = 0; i < 3; ++i) CHECK((x[i * 2] == F && x[i * 2 + 1] == N));
    }
    SECTION("NaN in tq_i: row i only") {
        tq.values[2 * 2] = kNan;
        const std::vector<Expect> x = expected_jvp_nonfinite(p, tq, tk, tv);
        CHECK(row_is(x, 1, 2, F));
        CHECK(row_is(x, 2, 2, N));
    }
}

TEST_CASE("check-kernel derivative non-finite: the stress cases", "[kernels][stress]") {
    const std::vector<std::int64_t> shape = {3, 20, 8};
    for (bool vjp : {true, false})
        for (StressCase c : derivative_nonfinite_cases(vjp)) {
            CAPTURE(stress_name(c), vjp);
            const AttentionProblem p = generate_stress(c, 9, shape, Format::fp16);
            std::vector<std::vector<std::int64_t>> shapes = {shape};
            if (!vjp) shapes = {shape, shape, shape};
            const std::vector<Array> d = generate_directions(c, 9, shapes, Format::fp16);
            const std::vector<Array> again = generate_directions(c, 9, shapes, Format::fp16);
            std::vector<const Array*> all = {&p.q, &p.k, &p.v};
            long planted = 0;
            for (size_t a = 0; a < d.size(); ++a) {
                all.push_back(&d[a]);
                for (size_t e = 0; e < d[a].values.size(); ++e) {
                    const double x = d[a].values[e], y = again[a].values[e];
                    planted += !std::isfinite(x);
                    CHECK((x == y || (std::isnan(x) && std::isnan(y))));
                }
            }
            CHECK(any_nonfinite(all));
            const std::string name = stress_name(c);
            const bool in_qkv = name.size() == 5;  // nan-q .. inf-v
            CHECK(planted == (in_qkv ? 0 : 3));    // else one per head
        }
    CHECK_THROWS_AS(generate_directions(StressCase::nan_tq, 1, {{4, 2}}, Format::fp32), Error);
    CHECK_THROWS_AS(
        generate_directions(StressCase::nan_do, 1, {{4, 2}, {4, 2}, {4, 2}}, Format::fp32), Error);
}

TEST_CASE("check-kernel derivative non-finite: correct and planted kernels", "[kernels]") {
    const std::vector<std::int64_t> shape = {2, 24, 8};
    long spread_changes = 0, error_changes = 0;
    for (bool vjp : {true, false})
        for (StressCase c : derivative_nonfinite_cases(vjp))
            for (MaskKind mask : {MaskKind::none, MaskKind::causal})
                for (std::uint64_t seed : {1u, 2u}) {
                    CAPTURE(stress_name(c), vjp, mask_name(mask), seed);
                    AttentionProblem p = generate_stress(c, seed, shape, Format::fp32);
                    p.mask = mask;
                    KernelCheckOptions opt;
                    std::vector<std::vector<std::int64_t>> shapes = {shape};
                    if (!vjp) shapes = {shape, shape, shape};
                    const std::vector<Array> d = generate_directions(c, seed, shapes, Format::fp32);
                    for (Fault f :
                         {Fault::none, Fault::nan_to_num, Fault::spread, Fault::finite_error}) {
                        CAPTURE(static_cast<int>(f));
                        KernelVerdict v;
                        long mismatch = 0, expected = 0;
                        bool changed = false;
                        if (vjp) {
                            Array dq, dk, dv;
                            baseline_vjp(p, d[0], Format::fp32, Format::fp32, dq, dk, dv);
                            const VjpExpectation x = expected_vjp_nonfinite(p, d[0]);
                            for (auto [a, e] : {std::pair{&dq, &x.dq}, {&dk, &x.dk}, {&dv, &x.dv}})
                                changed = plant(*a, *e, 24, f) || changed;
                            const VjpCheckResult r = check_attention_vjp(p, d[0], dq, dk, dv, opt);
                            v = r.verdict;
                            for (const KernelCheckResult* t : {&r.dq, &r.dk, &r.dv})
                                mismatch += t->nonfinite_mismatch,
                                    expected += t->nonfinite_expected;
                        } else {
                            Array o;
                            baseline_jvp(p, d[0], d[1], d[2], Format::fp32, Format::fp32, o);
                            changed = plant(o, expected_jvp_nonfinite(p, d[0], d[1], d[2]), 24, f);
                            const KernelCheckResult r =
                                check_attention_jvp(p, d[0], d[1], d[2], o, opt);
                            v = r.verdict, mismatch = r.nonfinite_mismatch;
                            expected = r.nonfinite_expected;
                        }
                        CHECK(expected > 0);
                        if (f == Fault::none) {
                            CHECK(v == KernelVerdict::pass);
                            CHECK(mismatch == 0);
                        }
                        if (f == Fault::nan_to_num) {
                            CHECK(v == KernelVerdict::wrong);
                            CHECK(mismatch > 0);
                        }
                        if (f == Fault::spread && changed) {
                            ++spread_changes;
                            CHECK(v == KernelVerdict::wrong);
                            CHECK(mismatch > 0);
                        }
                        if (f == Fault::finite_error && changed) {
                            ++error_changes;
                            CHECK(v != KernelVerdict::pass);
                        }
                    }
                }
    CHECK(spread_changes > 20);  // the spread reaches elements expected finite in most cases
    CHECK(error_changes > 40);
}
