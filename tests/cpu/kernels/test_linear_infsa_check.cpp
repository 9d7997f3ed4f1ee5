// check-kernel linear-infsa (kernels/linear_infsa_check.hpp) on kernels written here. The
// reference is the library's Linear-InfSA (infsa/linear_infsa.hpp) in float64. Correct kernels --
// attnspec's baseline, the library's float32 heads kernel, and a kernel in native float arithmetic
// storing q_bar and the output in fp32, fp16 or bf16 -- pass on every stress case and stay within
// the rounding bound. Planted wrong ones -- the query pooled by a plain mean instead of energy
// pooling, gamma applied twice or missing, the scores normalised by their max instead of their sum
// -- must not pass. (A scale on q and k is no test: it cancels in the normalised scores,
// proofs/kernel_tolerance.md, "Linear-InfSA".)
#include <cmath>
#include <cstdio>
#include <limits>

#include "attnspec/infsa/linear_infsa.hpp"
#include "attnspec/kernels/linear_infsa_check.hpp"
#include "infsa_check_support.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::kernels;
using namespace attnspec::test;

namespace {

enum class Fault { none, mean_pool, gamma_twice, gamma_missing, max_norm };

// Linear-InfSA in float (fp32 accumulation), q_bar and the output stored in `storage`.
Array float_kernel(const AttentionProblem& p, const LinearInfsaParams& par, Format storage,
                   Fault fault) {
    const ProblemShape sh = problem_shape(p);
    Array o;
    o.shape = sh.out_shape();
    o.values.assign(static_cast<size_t>(sh.B * sh.H * sh.Nq * sh.dv), 0.0);
    const float c = 1.0f / std::sqrt(static_cast<float>(sh.d));
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h) {
            const long kv = b * sh.H_kv + sh.kv_head(h);
            const double* Q = p.q.values.data() + (b * sh.H + h) * sh.Nq * sh.d;
            const double* K = p.k.values.data() + kv * sh.Nk * sh.d;
            const double* V = p.v.values.data() + kv * sh.Nk * sh.dv;
            std::vector<float> acc(static_cast<size_t>(sh.d), 0.f), qb(acc);
            float se = 0;
            for (long i = 0; i < sh.Nq; ++i) {
                float ss = 0;
                for (long l = 0; l < sh.d; ++l)
                    ss += float(Q[i * sh.d + l]) * float(Q[i * sh.d + l]);
                const float e = fault == Fault::mean_pool ? 1.f : std::sqrt(ss) * c;
                se += e;
                for (long l = 0; l < sh.d; ++l) acc[l] += e * (c * float(Q[i * sh.d + l]));
            }
            const float den = se + float(par.eps);
            for (long l = 0; l < sh.d; ++l)
                qb[l] = float(round_to(den > 0 ? acc[l] / den : 0.f, storage));
            std::vector<float> n(static_cast<size_t>(sh.dv), 0.f);
            float S = 0, smax = 0;
            for (long j = 0; j < sh.Nk; ++j) {
                float x = 0;
                for (long l = 0; l < sh.d; ++l) x += qb[l] * float(K[j * sh.d + l]);
                const float s = std::max(0.f, c * x);
                S += s, smax = std::max(smax, s);
                for (long col = 0; col < sh.dv; ++col) n[col] += s * float(V[j * sh.dv + col]);
            }
            const float norm = fault == Fault::max_norm ? smax : S;
            float g = float(par.gamma);
            if (fault == Fault::gamma_twice) g *= g;
            if (fault == Fault::gamma_missing) g = 1;
            for (long i = 0; i < sh.Nq; ++i)
                for (long col = 0; col < sh.dv; ++col)
                    o.values[((b * sh.H + h) * sh.Nq + i) * sh.dv + col] =
                        round_to(S == 0 ? 0.f : g * (n[col] / (norm + float(par.eps))),
                                 output_format(storage));
        }
    return o;
}

}  // namespace

TEST_CASE("check-kernel linear-infsa: the reference is the library's Linear-InfSA", "[kernels]") {
    CHECK(LinearInfsaParams{}.gamma == LinearInfsaOptions{}.gamma);
    CHECK(LinearInfsaParams{}.eps == LinearInfsaOptions{}.eps);
    for (const char* name : {"gaussian", "heavy-tail", "dominant-key"}) {
        const AttentionProblem p = generate_linear_infsa(name, 3, {40, 12}, Format::fp64);
        LinearInfsaParams par;
        par.gamma = 0.7, par.eps = 1e-3;
        const Array o = reference_linear_infsa(p, par);
        const Eigen::MatrixXd Q = Eigen::Map<const Eigen::Matrix<double, -1, -1, Eigen::RowMajor>>(
                                  p.q.values.data(), 40, 12),
                              K = Eigen::Map<const Eigen::Matrix<double, -1, -1, Eigen::RowMajor>>(
                                  p.k.values.data(), 40, 12),
                              V = Eigen::Map<const Eigen::Matrix<double, -1, -1, Eigen::RowMajor>>(
                                  p.v.values.data(), 40, 12);
        LinearInfsaOptions lo;
        lo.gamma = par.gamma, lo.eps = par.eps;
        const LinearInfsaLiteral lit = linear_infsa_literal(Q, K, V, lo);
        for (long i = 0; i < 40; i += 13)
            for (long c = 0; c < 12; ++c)
                CHECK(std::fabs(o.values[i * 12 + c] - lit.out(i, c)) <=
                      1e-13 * (1 + std::fabs(lit.out(i, c))));
        // The reference passes at fp32; its own error bound is ~(N + d) 2^-53 of the magnitudes.
        const KernelCheckResult r = check_linear_infsa(p, par, o, at(Format::fp32));
        CHECK(r.verdict == KernelVerdict::pass);
        INFO(r.max_reference_error);
        CHECK(r.max_reference_error < 1e-12);  // ~(N + d) 2^-53 of the magnitudes
    }
}

TEST_CASE("check-kernel linear-infsa: the pooled reference is every row of the broadcast one",
          "[kernels]") {
    const AttentionProblem p = generate_linear_infsa("heavy-tail", 5, {2, 3, 37, 8}, Format::fp32);
    const LinearInfsaParams par;
    const Array o = reference_linear_infsa(p, par), pooled = reference_linear_infsa_pooled(p, par);
    CHECK(o.shape == std::vector<std::int64_t>{2, 3, 37, 8});
    CHECK(pooled.shape == std::vector<std::int64_t>{2, 3, 8});
    REQUIRE(pooled.values.size() == 2 * 3 * 8);
    for (long h = 0; h < 6; ++h)
        for (long i = 0; i < 37; ++i)
            for (long c = 0; c < 8; ++c)
                CHECK(o.values[(h * 37 + i) * 8 + c] == pooled.values[h * 8 + c]);  // bitwise
    AttentionProblem causal = p;
    causal.mask = MaskKind::causal;
    CHECK_THROWS_AS(reference_linear_infsa_pooled(causal, par), Error);
}

namespace {

// The three runs of correct_kernels_pass (infsa_check_support.hpp) on this operation.
void correct_linear_infsa(const std::vector<std::int64_t>& shape, std::uint64_t seed, bool print) {
    const LinearInfsaParams par;
    correct_kernels_pass(
        "linear-infsa", shape, seed,
        [&](const AttentionProblem& p, const Array& o, const KernelCheckOptions& opt) {
            return check_linear_infsa(p, par, o, opt);
        },
        [&](const AttentionProblem& p, Format f) { return float_kernel(p, par, f, Fault::none); },
        [&](const AttentionProblem& p, Format f) {
            return baseline_linear_infsa(p, par, f, Format::fp32);
        },
        print);
}

}  // namespace

TEST_CASE("check-kernel linear-infsa: correct kernels pass on every stress case", "[kernels]") {
    correct_linear_infsa({2, 48, 16}, 5, false);
}

TEST_CASE("check-kernel linear-infsa: the library's float32 heads kernel passes", "[kernels]") {
    const LinearInfsaParams par;
    const AttentionProblem p = generate_linear_infsa("heavy-tail", 2, {3, 64, 16}, Format::fp32);
    std::vector<float> Q(p.q.values.begin(), p.q.values.end()),
        K(p.k.values.begin(), p.k.values.end()), V(p.v.values.begin(), p.v.values.end()), P(3 * 16);
    linear_infsa_heads_f32(Q.data(), K.data(), V.data(), 3, 64, 16, LinearInfsaOptions{}, P.data());
    Array o;
    o.shape = {3, 64, 16};
    for (long h = 0; h < 3; ++h)
        for (long i = 0; i < 64; ++i)
            for (long c = 0; c < 16; ++c) o.values.push_back(P[h * 16 + c]);
    const KernelCheckResult r = check_linear_infsa(p, par, o, at(Format::fp32));
    INFO(r.summary);
    CHECK(r.verdict == KernelVerdict::pass);
}

TEST_CASE("check-kernel linear-infsa: planted wrong kernels are caught", "[kernels]") {
    const LinearInfsaParams par;
    for (Format f : {Format::fp32, Format::fp16})
        for (const char* name : {"gaussian", "heavy-tail"})
            for (Fault fault :
                 {Fault::mean_pool, Fault::gamma_twice, Fault::gamma_missing, Fault::max_norm}) {
                const AttentionProblem p = generate_linear_infsa(name, 9, {2, 48, 16}, f);
                const KernelCheckResult r =
                    check_linear_infsa(p, par, float_kernel(p, par, f, fault), at(f));
                INFO(format_name(f)
                     << " " << name << " fault " << static_cast<int>(fault) << ": " << r.summary);
                CHECK(r.verdict == KernelVerdict::wrong);
                CHECK(!r.worst_by_bound.empty());
            }
}

TEST_CASE("check-kernel linear-infsa: many random queries, the rule still refuses mean pooling",
          "[kernels]") {
    // Gaussian queries at N = 8192: q_bar cancels heavily, the fp32 worst case of its sum makes
    // the rounding bound loose (proofs/kernel_tolerance.md, "Where the bound is loose"), and the
    // baseline rule with its propagated floor decides.
    const LinearInfsaParams par;
    const AttentionProblem p = generate_linear_infsa("gaussian", 4, {1, 8192, 32}, Format::fp16);
    const KernelCheckResult ok = check_linear_infsa(
        p, par, float_kernel(p, par, Format::fp16, Fault::none), at(Format::fp16));
    CHECK(ok.verdict == KernelVerdict::pass);
    for (Fault fault : {Fault::mean_pool, Fault::gamma_twice}) {
        const KernelCheckResult r =
            check_linear_infsa(p, par, float_kernel(p, par, Format::fp16, fault), at(Format::fp16));
        INFO(r.summary);
        CHECK(r.verdict != KernelVerdict::pass);
    }
}

TEST_CASE("check-kernel linear-infsa: relu-zero gives 0, NaN and shape errors", "[kernels]") {
    const LinearInfsaParams par;
    const AttentionProblem p = generate_linear_infsa("relu-zero", 1, {2, 32, 8}, Format::fp16);
    const Array ref = reference_linear_infsa(p, par);
    for (double x : ref.values) CHECK(x == 0);
    Array o = float_kernel(p, par, Format::fp16, Fault::none);
    CHECK(check_linear_infsa(p, par, o, at(Format::fp16)).verdict == KernelVerdict::pass);
    o.values[5] = std::numeric_limits<double>::quiet_NaN();
    const KernelCheckResult r = check_linear_infsa(p, par, o, at(Format::fp16));
    CHECK(r.verdict == KernelVerdict::wrong);
    CHECK(r.nonfinite == 1);
    o.shape = {2, 32, 7};
    CHECK(code_of([&] { check_linear_infsa(p, par, o, at(Format::fp16)); }) == ExitCode::DataError);
    AttentionProblem causal = p;
    causal.mask = MaskKind::causal;
    CHECK(code_of([&] { check_linear_infsa(causal, par, ref, at(Format::fp16)); }) ==
          ExitCode::DataError);
}

TEST_CASE("check-kernel linear-infsa: tightness of the rounding bound", "[kernels][tightness][.]") {
    correct_linear_infsa({2, 512, 64}, 11, true);
}
