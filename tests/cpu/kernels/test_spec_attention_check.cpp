// check-kernel spec-attention (kernels/spec_attention_check.hpp) on kernels written here. Correct
// ones -- attnspec's baseline, a kernel in native float arithmetic (projections accumulated in
// float, W + C, Q, K, V and P stored in the declared format), and the library's own float64 SpecA
// (attention/attention.hpp at W + C of attention/corrections.hpp) -- must pass on every stress
// case within the rounding bound. Planted wrong ones -- C_V omitted, lambda applied as lambda
// times all ones, the SVD correction scaled by sigma_r instead of sigma_1, the scale 1/d, an extra
// relative error 1e-4 in a few fp32 elements, under a boolean or additive mask the mask ignored or
// (additive) its sign flipped -- must not pass.
#include <cmath>
#include <cstdio>
#include <limits>

#include "attnspec/attention/attention.hpp"
#include "attnspec/attention/corrections.hpp"
#include "attnspec/kernels/spec_attention_check.hpp"
#include "attnspec/kernels/stress.hpp"
#include "attnspec/spectral/svd.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::kernels;

namespace {

enum class Fault {
    none,
    no_cv,
    lambda_ones,
    svd_sigma_r,
    scale_1_over_d,
    extra_error,
    mask_ignored,
    mask_sign_flipped
};

// Under a boolean or additive mask: the bias of key j for row i of batch b (0 or -inf, or M_ij;
// the mask (N, N) or (B', N, N)), or the planted misreadings.
double bias(const SpecAttentionProblem& p, long b, long i, long j, Fault f) {
    const Array& M = p.mask_array;
    const long N = M.shape.back(), mb = M.shape.size() == 3 && M.shape[0] > 1 ? b : 0;
    const double m = M.values[static_cast<size_t>((mb * N + i) * N + j)];
    if (f == Fault::mask_ignored) return 0;
    if (p.mask == MaskKind::boolean) return m != 0 ? 0.0 : -HUGE_VAL;
    return f == Fault::mask_sign_flipped && std::isfinite(m) ? -m : m;
}

using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Eigen::MatrixXd matrix(const Array& a, long b = 0) {
    const long r = static_cast<long>(a.shape[a.shape.size() - 2]), c = a.shape.back();
    return Eigen::Map<const RowMat>(a.values.data() + b * r * c, r, c);
}

// The kernel's correction: the library's (attention/corrections.hpp), or a planted wrong one.
Eigen::MatrixXd correction(const Eigen::MatrixXd& W, const SpecAttentionProblem& p, Fault f) {
    if (p.correction == SpecCorrection::svd) {
        if (f != Fault::svd_sigma_r) return svd_correction(W);
        const SvdResult s = svd(W);
        return s.sigma[s.sigma.size() - 1] * s.U * s.V.transpose();
    }
    if (f == Fault::lambda_ones) return Eigen::MatrixXd::Constant(W.rows(), W.cols(), p.lambda);
    return lambda_correction(W.rows(), W.cols(), p.lambda);
}

// A plain SpecA in arithmetic T (float; double for fp64): X W' accumulated in T with W' = W + C
// stored in `storage`, Q, K, V stored in `storage`, softmax with the max shift, P stored in
// `storage`, PV in T, O rounded to the output format.
template <class T = float>
Array float_kernel(const SpecAttentionProblem& p, Format storage, Fault f = Fault::none) {
    using MatT = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
    using VecT = Eigen::Matrix<T, Eigen::Dynamic, 1>;
    const long B = p.x.shape.size() == 3 ? p.x.shape[0] : 1;
    const long N = p.x.shape[p.x.shape.size() - 2], dv = p.w_v.shape[1];
    const auto st = [&](double v) { return static_cast<T>(round_to(v, storage)); };
    std::vector<MatT> W;
    for (const Array* w : {&p.w_q, &p.w_k, &p.w_v}) {
        const Eigen::MatrixXd Wd = matrix(*w);
        Eigen::MatrixXd Wp =
            Wd + ((f == Fault::no_cv && w == &p.w_v) ? Eigen::MatrixXd::Zero(Wd.rows(), Wd.cols())
                                                     : correction(Wd, p, f));
        W.push_back(
            Wp.unaryExpr([&](double v) { return static_cast<double>(st(v)); }).template cast<T>());
    }
    const double d = static_cast<double>(p.w_q.shape[1]);
    const T s = static_cast<T>(p.scale != 0                 ? p.scale
                               : f == Fault::scale_1_over_d ? 1 / d
                                                            : 1 / std::sqrt(d));
    Array o;
    o.shape = p.x.shape, o.shape.back() = dv;
    o.values.resize(static_cast<size_t>(B * N * dv));
    for (long b = 0; b < B; ++b) {
        const MatT X = matrix(p.x, b).template cast<T>();
        MatT Q = X * W[0], K = X * W[1], V = X * W[2];
        for (MatT* M : {&Q, &K, &V}) *M = M->unaryExpr(st);
        for (long i = 0; i < N; ++i) {
            const bool general = general_mask(p.mask);  // then every key, hidden ones at -inf
            const long n = p.mask == MaskKind::causal ? i + 1 : N;
            VecT x = (K.topRows(n) * Q.row(i).transpose()) * s;
            if (general)
                for (long j = 0; j < N; ++j) x[j] += static_cast<T>(bias(p, b, i, j, f));
            const T m = x.maxCoeff();
            if (general && !std::isfinite(m)) {  // a fully masked row: zeros
                for (long c = 0; c < dv; ++c) o.values[(b * N + i) * dv + c] = 0;
                continue;
            }
            VecT e = (x.array() - m).exp();
            const T l = e.sum();
            for (long j = 0; j < n; ++j) e[j] = st(e[j] / l);
            const VecT row = V.topRows(n).transpose() * e;
            for (long c = 0; c < dv; ++c)
                o.values[(b * N + i) * dv + c] = round_to(row[c], output_format(storage));
        }
    }
    if (f == Fault::extra_error)
        for (long at : {3L, 17L, 40L}) o.values[at] *= 1 + 1e-4;
    return o;
}

// The library's SpecA (attention/attention.hpp) in float64 at W + C.
Array library_speca(const SpecAttentionProblem& p) {
    Head h;
    h.X = matrix(p.x), h.W_Q = matrix(p.w_q), h.W_K = matrix(p.w_k), h.W_V = matrix(p.w_v);
    h.s = 1 / std::sqrt(static_cast<double>(p.w_q.shape[1]));
    CorrectionSpec spec;
    spec.kind = p.correction == SpecCorrection::svd ? CorrectionKind::svd : CorrectionKind::lambda;
    spec.lambda = p.lambda;
    apply_correction(h, spec);
    const Eigen::MatrixXd A = attention_forward<double>(h).A;
    Array o;
    o.shape = {A.rows(), A.cols()};
    for (long i = 0; i < A.rows(); ++i)
        for (long c = 0; c < A.cols(); ++c) o.values.push_back(A(i, c));
    return o;
}

KernelCheckOptions at(Format f) {
    KernelCheckOptions opt;
    opt.storage = f;
    return opt;
}

SpecAttentionProblem with(SpecAttentionProblem p, SpecCorrection c) {
    p.correction = c;
    return p;
}

}  // namespace

TEST_CASE("check-kernel spec-attention: the reference is the library's SpecA", "[kernels]") {
    for (const std::string& name : spec_attention_cases())
        for (SpecCorrection c : {SpecCorrection::lambda, SpecCorrection::svd}) {
            INFO(name << " " << spec_correction_name(c));
            const SpecAttentionProblem p =
                with(generate_spec_attention(name, 3, {24, 12, 8}, Format::fp64), c);
            const Array ref = reference_spec_attention(p), lib = library_speca(p);
            REQUIRE(ref.values.size() == lib.values.size());
            double scale = 0, diff = 0;
            for (size_t k = 0; k < ref.values.size(); ++k)
                scale = std::max(scale, std::fabs(ref.values[k])),
                diff = std::max(diff, std::fabs(ref.values[k] - lib.values[k]));
            CHECK(diff <= 1e-11 * scale);
            const KernelCheckResult r = check_spec_attention(p, lib, at(Format::fp64));
            INFO(r.summary);
            CHECK(r.verdict == KernelVerdict::pass);
            // The SVD correction's bound (P3) grows as 1/sigma_min(W) (rank-deficient-w) and the
            // logits amplify the projections' error (large-logits): still far below fp32.
            CHECK(r.max_reference_error < 1e-5 * scale);
            std::printf("spec-attention reference %s %s: error bound / max |o| %.3g\n",
                        name.c_str(), spec_correction_name(c), r.max_reference_error / scale);
        }
}

// The tightness figures of proofs/kernel_tolerance.md ("SpecA forward"): the worst error/bound
// of correct kernels over the stress suite per format and correction.
TEST_CASE("check-kernel spec-attention: correct kernels pass within the bound", "[kernels]") {
    for (Format f : {Format::fp32, Format::tf32, Format::fp16, Format::bf16, Format::fp64})
        for (SpecCorrection c : {SpecCorrection::lambda, SpecCorrection::svd}) {
            double worst = 0, worst_base = 0, worst_rule = 0;
            for (const std::string& name : spec_attention_cases())
                for (MaskKind mask : {MaskKind::none, MaskKind::causal}) {
                    SpecAttentionProblem p =
                        with(generate_spec_attention(name, 11, {64, 32, 16}, f), c);
                    p.mask = mask;
                    INFO(format_name(f) << " " << spec_correction_name(c) << " " << name);
                    const KernelCheckResult base =
                        check_spec_attention(p, baseline_spec_attention(p, f, Format::fp32), at(f));
                    CHECK(base.verdict == KernelVerdict::pass);
                    CHECK(base.worst_bound_ratio <= 1);
                    const Array out =
                        f == Format::fp64 ? float_kernel<double>(p, f) : float_kernel(p, f);
                    const KernelCheckResult r = check_spec_attention(p, out, at(f));
                    INFO(r.summary);
                    CHECK(r.verdict == KernelVerdict::pass);
                    worst = std::max(worst, r.worst_bound_ratio);
                    worst_base = std::max(worst_base, base.worst_bound_ratio);
                    worst_rule = std::max(worst_rule, r.worst_rule_ratio);
                }
            std::printf(
                "spec-attention %s %s: worst error/bound kernel %.3g, baseline %.3g; worst "
                "error/allowed %.3g\n",
                format_name(f), spec_correction_name(c), worst, worst_base, worst_rule);
        }
}

TEST_CASE("check-kernel spec-attention: planted wrong kernels do not pass", "[kernels]") {
    const SpecAttentionProblem lam =
        generate_spec_attention("gaussian", 5, {64, 32, 16}, Format::fp32);
    const SpecAttentionProblem svd_p = with(lam, SpecCorrection::svd);
    struct Planted {
        const char* what;
        const SpecAttentionProblem* p;
        Fault f;
    };
    for (const Planted& t : {Planted{"C_V omitted", &lam, Fault::no_cv},
                             Planted{"lambda times all ones", &lam, Fault::lambda_ones},
                             Planted{"svd with sigma_r", &svd_p, Fault::svd_sigma_r},
                             Planted{"scale 1/d", &lam, Fault::scale_1_over_d},
                             Planted{"extra 1e-4 relative error", &lam, Fault::extra_error}}) {
        const KernelCheckResult r =
            check_spec_attention(*t.p, float_kernel(*t.p, Format::fp32, t.f), at(Format::fp32));
        INFO(t.what << ": " << r.summary);
        CHECK(r.verdict != KernelVerdict::pass);
        std::printf("spec-attention planted %s: %s, worst error/allowed %.3g, error/bound %.3g\n",
                    t.what, verdict_name(r.verdict), r.worst_rule_ratio, r.worst_bound_ratio);
    }
}

TEST_CASE("check-kernel spec-attention: bad inputs are refused", "[kernels]") {
    SpecAttentionProblem p = generate_spec_attention("gaussian", 1, {8, 6, 4}, Format::fp32);
    const Array o = reference_spec_attention(p);
    SpecAttentionProblem bad = p;
    bad.lambda = -1;
    CHECK_THROWS_WITH(check_spec_attention(bad, o, at(Format::fp32)),
                      Catch::Contains("lambda = -1 must be >= 0"));
    bad = p, bad.w_k.shape = {3, 8};
    CHECK_THROWS_WITH(check_spec_attention(bad, o, at(Format::fp32)),
                      Catch::Contains("w_k has shape (3, 8)"));
    bad = with(p, SpecCorrection::svd);
    std::fill(bad.w_v.values.begin(), bad.w_v.values.end(), 0.0);
    CHECK_THROWS_WITH(check_spec_attention(bad, o, at(Format::fp32)),
                      Catch::Contains("SVD correction of w_v = 0"));
    Array short_o = o;
    short_o.shape = {8, 3};
    CHECK_THROWS_AS(check_spec_attention(p, short_o, at(Format::fp32)), Error);
    CHECK_THROWS_AS(generate_spec_attention("nope", 1, {8, 6, 4}, Format::fp32), Error);
}

TEST_CASE("check-kernel spec-attention: batched x and the generator's shape", "[kernels]") {
    const SpecAttentionProblem p =
        generate_spec_attention("large-logits", 2, {2, 40, 24, 8}, Format::fp16);
    REQUIRE(p.x.shape == std::vector<std::int64_t>{2, 40, 24});
    REQUIRE(p.w_v.shape == std::vector<std::int64_t>{24, 8});
    const KernelCheckResult r =
        check_spec_attention(p, float_kernel(p, Format::fp16), at(Format::fp16));
    INFO(r.summary);
    CHECK(r.verdict == KernelVerdict::pass);
    CHECK(r.rows == 80);
    CHECK(spec_case_lambda("large-lambda") == 100);
    CHECK(spec_case_lambda("gaussian") == 10);
}

TEST_CASE("check-kernel spec-attention: boolean and additive masks", "[kernels][mask]") {
    for (Format f : {Format::fp32, Format::fp16, Format::bf16})
        for (MaskKind mk : {MaskKind::boolean, MaskKind::additive}) {
            INFO(format_name(f) << " " << mask_name(mk));
            SpecAttentionProblem p = generate_spec_attention("gaussian", 5, {2, 32, 16, 8}, f);
            p.mask = mk;
            p.mask_array = generate_mask(mk, 5, p.x.shape, f);  // (2, 32, 32)
            KernelCheckResult r = check_spec_attention(p, float_kernel(p, f), at(f));
            INFO(r.summary);
            CHECK(r.verdict == KernelVerdict::pass);
            CHECK(r.worst_bound_ratio <= 1);
            CHECK(r.masked_rows == 2 * 2);  // rows 7 and 23 of each batch
            r = check_spec_attention(p, baseline_spec_attention(p, f, Format::fp32), at(f));
            CHECK(r.verdict == KernelVerdict::pass);
            CHECK(r.worst_bound_ratio <= 1);
            r = check_spec_attention(p, float_kernel(p, f, Fault::mask_ignored), at(f));
            CHECK(r.verdict == KernelVerdict::wrong);
            if (mk == MaskKind::additive) {
                r = check_spec_attention(p, float_kernel(p, f, Fault::mask_sign_flipped), at(f));
                CHECK(r.verdict == KernelVerdict::wrong);
            }
            SpecAttentionProblem one = p;  // a mask (N, N) broadcast over the batch
            one.mask_array.shape = {32, 32};
            one.mask_array.values.resize(32 * 32);
            CHECK(check_spec_attention(one, float_kernel(one, f), at(f)).verdict ==
                  KernelVerdict::pass);
            one.mask_array.shape = {3, 32, 32};
            CHECK_THROWS_AS(check_spec_attention(one, float_kernel(p, f), at(f)), Error);
        }
}
