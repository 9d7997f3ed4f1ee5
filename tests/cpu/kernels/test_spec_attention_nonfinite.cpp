// check-kernel spec-attention on x or weights holding NaN/Inf (kernels/spec_attention_check.hpp,
// expected_spec_attention_nonfinite): the stated propagation on small hand-built problems (a NaN
// row of x under causal and no mask, a NaN entry of W_V and of W_Q, an Inf in x that gives some
// rows a -inf logit: the key drops out), the refusals (the SVD correction of a non-finite weight,
// a boolean mask), and kernels: plain SpecA kernels written here (float and double, a softmax
// with or without the -inf-max guard, one that skips keys of weight 0) and attnspec's baseline
// pass on every non-finite case; planted wrong ones -- NaN/Inf replaced by 0 (numpy.nan_to_num),
// a NaN spread over the whole output, an error of 0.1 in one element expected finite, a kernel
// that reads x's Inf as 0 -- do not pass.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attnspec/kernels/spec_attention_check.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::kernels;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A SpecA kernel in arithmetic T with the lambda correction: W' = W + lambda I and Q, K, V = X W'
// stored in `storage`, the logits over row i's visible keys (causal: a prefix), the max-shifted
// softmax, O = P V rounded to the output format. `guard`: an all -inf row gives 0 (FlashAttention)
// instead of NaN; `skip_zero`: keys of weight 0 are left out of P V; `inf_as_zero`: x's NaN/Inf
// read as 0 (planted).
struct Plain {
    bool guard = false, skip_zero = false, inf_as_zero = false;
};

template <class T>
Array plain_kernel(const SpecAttentionProblem& p, Format storage, Plain k = {}) {
    const long B = p.x.shape.size() == 3 ? p.x.shape[0] : 1;
    const long N = p.x.shape[p.x.shape.size() - 2], D = p.x.shape.back();
    const long d = p.w_q.shape[1], dv = p.w_v.shape[1];
    const auto st = [&](double v) { return static_cast<T>(round_to(v, storage)); };
    const auto proj = [&](const Array& w, long b, long i, long c) {
        T acc = 0;
        for (long a = 0; a < D; ++a) {
            double x = p.x.values[static_cast<size_t>((b * N + i) * D + a)];
            if (k.inf_as_zero && !std::isfinite(x)) x = 0;
            const double wc =
                w.values[static_cast<size_t>(a * w.shape[1] + c)] + (a == c ? p.lambda : 0.0);
            acc += st(x) * st(wc);
        }
        return st(static_cast<double>(acc));
    };
    const T s = static_cast<T>(1 / std::sqrt(static_cast<double>(d)));
    Array o;
    o.shape = p.x.shape, o.shape.back() = dv;
    o.values.resize(static_cast<size_t>(B * N * dv));
    std::vector<T> Q(N * d), K(N * d), V(N * dv), x(N);
    for (long b = 0; b < B; ++b) {
        for (long i = 0; i < N; ++i) {
            for (long c = 0; c < d; ++c) Q[i * d + c] = proj(p.w_q, b, i, c);
            for (long c = 0; c < d; ++c) K[i * d + c] = proj(p.w_k, b, i, c);
            for (long c = 0; c < dv; ++c) V[i * dv + c] = proj(p.w_v, b, i, c);
        }
        for (long i = 0; i < N; ++i) {
            const long n = p.mask == MaskKind::causal ? i + 1 : N;
            T m = -std::numeric_limits<T>::infinity();
            bool nan = false;
            for (long j = 0; j < n; ++j) {
                T dot = 0;
                for (long c = 0; c < d; ++c) dot += Q[i * d + c] * K[j * d + c];
                x[j] = dot * s;
                nan |= std::isnan(x[j]);
                m = std::max(m, x[j]);
            }
            double* out = o.values.data() + (b * N + i) * dv;
            if (k.guard && m == -std::numeric_limits<T>::infinity() && !nan) {
                std::fill(out, out + dv, 0.0);
                continue;
            }
            T l = 0;
            for (long j = 0; j < n; ++j) l += x[j] = std::exp(x[j] - m);
            for (long c = 0; c < dv; ++c) {
                T acc = 0;
                for (long j = 0; j < n; ++j) {
                    const T w = st(x[j] / l);
                    if (k.skip_zero && w == 0) continue;
                    acc += w * V[j * dv + c];
                }
                out[c] = round_to(static_cast<double>(acc), output_format(storage));
            }
        }
    }
    return o;
}

KernelCheckOptions at(Format f) {
    KernelCheckOptions opt;
    opt.storage = f;
    return opt;
}

// A problem of N tokens with D = d = 2 and the given rows of x and weights (row-major), lambda 0.
SpecAttentionProblem tiny(std::vector<double> x, std::vector<double> wq, std::vector<double> wk,
                          std::vector<double> wv, MaskKind mask = MaskKind::none) {
    SpecAttentionProblem p;
    p.x.shape = {static_cast<std::int64_t>(x.size() / 2), 2}, p.x.values = std::move(x);
    p.w_q.shape = p.w_k.shape = p.w_v.shape = {2, 2};
    p.w_q.values = std::move(wq), p.w_k.values = std::move(wk), p.w_v.values = std::move(wv);
    p.lambda = 0, p.mask = mask;
    return p;
}

const std::vector<double> kI = {1, 0, 0, 1};

std::string pattern(const std::vector<Expect>& x) {
    std::string s;
    for (Expect e : x)
        s += e == Expect::finite      ? 'f'
             : e == Expect::nonfinite ? 'n'
             : e == Expect::either    ? 'e'
                                      : 'z';
    return s;
}

}  // namespace

TEST_CASE("check-kernel spec-attention non-finite: the stated propagation", "[kernels]") {
    const std::vector<double> x = {0.5, -1, 1, 0.25, kNan, 0, -0.5, 2};
    // A NaN row of x poisons q_2, k_2, v_2: under causal rows 0 and 1 do not see key 2, a masked
    // key with a NaN logit, so they are `either` (attention's rule: a kernel adding -inf to a NaN
    // logit gets NaN, one skipping the key does not).
    CHECK(pattern(expected_spec_attention_nonfinite(tiny(x, kI, kI, kI, MaskKind::causal),
                                                    Format::fp64)) == "eeeennnn");
    CHECK(pattern(expected_spec_attention_nonfinite(tiny(x, kI, kI, kI), Format::fp64)) ==
          "nnnnnnnn");
    // NaN in W_V[0, 1]: column 1 of V is NaN on every row (0 x NaN included); column 0 finite.
    const std::vector<double> xf = {0.5, -1, 1, 0.25, 0, 0, -0.5, 2};
    CHECK(pattern(expected_spec_attention_nonfinite(tiny(xf, kI, kI, {1, kNan, 0, 1}),
                                                    Format::fp32)) == "fnfnfnfn");
    // NaN in W_Q: a whole column of Q, every logit NaN.
    CHECK(pattern(expected_spec_attention_nonfinite(tiny(xf, {kNan, 0, 0, 1}, kI, kI),
                                                    Format::fp32)) == "nnnnnnnn");
    // x_2 = (inf, 0), W_K all ones: k_2 = (inf, inf). Rows 0 and 3 (q < 0) get a -inf logit with
    // key 2, which drops out, but v_2 = (inf, NaN) leaves their columns `either`; row 1 (q > 0)
    // gets +inf; row 2 (q_2 = (inf, 0)) meets k_1 = (3, 3): +inf.
    const std::vector<double> xi = {-1, -2, 1, 2, kInf, 0, -1, -1};
    const SpecAttentionProblem drop = tiny(xi, kI, {1, 1, 1, 1}, kI);
    CHECK(pattern(expected_spec_attention_nonfinite(drop, Format::fp64)) == "eennnnee");
    // A kernel that skips keys of weight 0 leaves rows 0 and 3 finite: the attention over keys
    // 0, 1, 3 (key 2 hidden), which the check compares; reading the inf as 0 keeps key 2.
    Plain skip;
    skip.skip_zero = true;
    const Array o = plain_kernel<double>(drop, Format::fp64, skip);
    CHECK(std::isfinite(o.values[0]));
    CHECK(std::isfinite(o.values[6]));
    KernelCheckResult r = check_spec_attention(drop, o, at(Format::fp64));
    CHECK(r.verdict == KernelVerdict::pass);
    CHECK(r.nonfinite_mismatch == 0);
    CHECK(r.nonfinite_expected == 4);
    Array misread = o;
    Plain zero = skip;
    zero.inf_as_zero = true;
    const Array z = plain_kernel<double>(drop, Format::fp64, zero);
    misread.values[0] = z.values[0], misread.values[1] = z.values[1];
    r = check_spec_attention(drop, misread, at(Format::fp64));
    CHECK(r.verdict == KernelVerdict::wrong);
    CHECK(r.nonfinite_mismatch == 0);  // the values are wrong, not the pattern
}

TEST_CASE("check-kernel spec-attention non-finite: refusals", "[kernels]") {
    SpecAttentionProblem p = generate_spec_attention("nan-w", 3, {8, 6, 4}, Format::fp32);
    const Array o =
        reference_spec_attention(generate_spec_attention("gaussian", 3, {8, 6, 4}, Format::fp32));
    p.correction = SpecCorrection::svd;
    CHECK_THROWS_WITH(check_spec_attention(p, o, at(Format::fp32)),
                      Catch::Contains("SVD correction of a non-finite weight is not defined"));
    p = generate_spec_attention("nan-x", 3, {8, 6, 4}, Format::fp32);
    p.correction = SpecCorrection::svd;  // x may be non-finite under the SVD correction
    CHECK_NOTHROW(check_spec_attention(p, o, at(Format::fp32)));
    p.correction = SpecCorrection::lambda;
    p.mask = MaskKind::boolean;
    p.mask_array.shape = {8, 8};
    p.mask_array.values.assign(64, 1.0);
    CHECK_THROWS_WITH(check_spec_attention(p, o, at(Format::fp32)),
                      Catch::Contains("non-finite inputs are checked under mask none or causal"));
}

TEST_CASE("check-kernel spec-attention non-finite: correct and planted kernels", "[kernels]") {
    const auto passes = [](const SpecAttentionProblem& p, const Array& o, Format f) {
        const KernelCheckResult r = check_spec_attention(p, o, at(f));
        INFO(r.summary);
        CHECK(r.verdict == KernelVerdict::pass);
        CHECK(r.nonfinite_mismatch == 0);
        return r;
    };
    const auto fails = [](const SpecAttentionProblem& p, const Array& o, Format f) {
        const KernelCheckResult r = check_spec_attention(p, o, at(f));
        INFO(r.summary);
        CHECK(r.verdict == KernelVerdict::wrong);
    };
    long expected = 0, finite = 0;
    for (const std::string& name : spec_attention_nonfinite_cases())
        for (std::uint64_t seed : {1, 2, 3})
            for (MaskKind mask : {MaskKind::none, MaskKind::causal})
                for (Format f : {Format::fp64, Format::fp32, Format::bf16}) {
                    INFO(name << " seed " << seed << " " << mask_name(mask) << " "
                              << format_name(f));
                    SpecAttentionProblem p = generate_spec_attention(name, seed, {2, 16, 8, 8}, f);
                    p.mask = mask;
                    Plain guard;
                    guard.guard = true;
                    const Array o =
                        f == Format::fp64 ? plain_kernel<double>(p, f) : plain_kernel<float>(p, f);
                    const KernelCheckResult r = passes(p, o, f);
                    passes(p, plain_kernel<float>(p, f == Format::fp64 ? Format::fp32 : f, guard),
                           f == Format::fp64 ? Format::fp32 : f);
                    passes(p, baseline_spec_attention(p, f, Format::fp32), f);
                    expected += r.nonfinite_expected;
                    // Planted: NaN/Inf replaced by 0; a NaN spread over the output; 0.1 added to
                    // an element expected finite.
                    const std::vector<Expect> x = expected_spec_attention_nonfinite(p, f);
                    const auto first = std::find(x.begin(), x.end(), Expect::finite);
                    if (r.nonfinite_expected > 0) {
                        Array zeroed = o;
                        for (double& v : zeroed.values)
                            if (!std::isfinite(v)) v = 0;
                        fails(p, zeroed, f);
                    }
                    if (first == x.end()) continue;
                    ++finite;
                    Array spread = o;
                    std::fill(spread.values.begin(), spread.values.end(), kNan);
                    fails(p, spread, f);
                    // At bf16 with lambda = 10 the logits reach ~30 and an element's rounding
                    // bound is O(10): a 0.1 error is within what a correct bf16 kernel gives.
                    if (f == Format::bf16) continue;
                    Array off = o;
                    off.values[static_cast<size_t>(first - x.begin())] += 0.1;
                    fails(p, off, f);
                }
    // The suite exercises both sides: elements that must be NaN/Inf, and cases with elements
    // that must stay finite.
    CHECK(expected > 0);
    CHECK(finite > 10);
}
