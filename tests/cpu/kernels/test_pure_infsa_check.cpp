// check-kernel pure-infsa (kernels/pure_infsa_check.hpp) on kernels written here. The reference is
// gamma Â V with the library's affinity (infsa/affinity.hpp) in float64. Correct kernels --
// attnspec's baseline and a kernel in native float arithmetic storing A+ and the output in fp32,
// fp16 or bf16 -- pass on every stress case and stay within the rounding bound. Planted wrong
// ones -- the norm of one row of A+ instead of its Frobenius norm, the ReLU missing, gamma
// missing -- must not pass. A missing 1/d cancels in Â (up to eps): no test of the checker.
#include <cmath>
#include <cstdio>

#include "attnspec/infsa/affinity.hpp"
#include "attnspec/kernels/pure_infsa_check.hpp"
#include "infsa_check_support.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::kernels;
using namespace attnspec::test;

namespace {

enum class Fault { none, row_norm, no_relu, gamma_missing, no_div_d };

// gamma ReLU(Q K^T / d) / (||.||_F + eps) V in float (fp32 accumulation), A+ and the output
// stored in `storage`; the whole N_q x N_k block of one head kept (small test shapes only).
Array float_kernel(const AttentionProblem& p, const LinearInfsaParams& par, Format storage,
                   Fault fault) {
    const ProblemShape sh = problem_shape(p);
    Array o;
    o.shape = sh.out_shape();
    o.values.assign(static_cast<size_t>(sh.B * sh.H * sh.Nq * sh.dv), 0.0);
    const float inv_d = fault == Fault::no_div_d ? 1.f : 1.f / static_cast<float>(sh.d);
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h) {
            const long kv = b * sh.H_kv + sh.kv_head(h);
            const double* Q = p.q.values.data() + (b * sh.H + h) * sh.Nq * sh.d;
            const double* K = p.k.values.data() + kv * sh.Nk * sh.d;
            const double* V = p.v.values.data() + kv * sh.Nk * sh.dv;
            std::vector<float> A(static_cast<size_t>(sh.Nq * sh.Nk));
            float F2 = 0, row0 = 0;
            for (long i = 0; i < sh.Nq; ++i)
                for (long j = 0; j < sh.Nk; ++j) {
                    float x = 0;
                    for (long l = 0; l < sh.d; ++l)
                        x += float(Q[i * sh.d + l]) * float(K[j * sh.d + l]);
                    x *= inv_d;
                    const float a =
                        float(round_to(fault == Fault::no_relu ? x : std::max(0.f, x), storage));
                    A[i * sh.Nk + j] = a;
                    F2 += a * a;
                    if (i == 0) row0 += a * a;
                }
            const float D = std::sqrt(fault == Fault::row_norm ? row0 : F2) + float(par.eps);
            const float g = fault == Fault::gamma_missing ? 1.f : float(par.gamma);
            for (long i = 0; i < sh.Nq; ++i)
                for (long c = 0; c < sh.dv; ++c) {
                    float n = 0;
                    for (long j = 0; j < sh.Nk; ++j)
                        n += A[i * sh.Nk + j] * float(V[j * sh.dv + c]);
                    o.values[((b * sh.H + h) * sh.Nq + i) * sh.dv + c] =
                        round_to(g * (n / D), output_format(storage));
                }
        }
    return o;
}

}  // namespace

TEST_CASE("check-kernel pure-infsa: the reference is gamma Â V with the library's affinity",
          "[kernels]") {
    CHECK(LinearInfsaParams{}.eps == AffinityOptions{}.eps);
    for (const char* name : {"gaussian", "heavy-tail"}) {
        const AttentionProblem p = generate_linear_infsa(name, 3, {30, 8}, Format::fp64);
        LinearInfsaParams par;
        par.gamma = 0.8, par.eps = 1e-3;
        const Array o = reference_pure_infsa(p, par);
        using Rm = Eigen::Matrix<double, -1, -1, Eigen::RowMajor>;
        const Eigen::MatrixXd Q = Eigen::Map<const Rm>(p.q.values.data(), 30, 8),
                              K = Eigen::Map<const Rm>(p.k.values.data(), 30, 8),
                              V = Eigen::Map<const Rm>(p.v.values.data(), 30, 8);
        AffinityOptions ao;
        ao.eps = par.eps;
        const Eigen::MatrixXd want = par.gamma * affinity(Q, K, ao).A_hat * V;
        for (long i = 0; i < 30; ++i)
            for (long c = 0; c < 8; ++c)
                CHECK(std::fabs(o.values[i * 8 + c] - want(i, c)) <=
                      1e-13 * (1 + std::fabs(want(i, c))));
        const KernelCheckResult r = check_pure_infsa(p, par, o, at(Format::fp32));
        CHECK(r.verdict == KernelVerdict::pass);
        CHECK(r.max_reference_error < 1e-12);
    }
}

namespace {

// The three runs of correct_kernels_pass (infsa_check_support.hpp) on this operation.
void correct_pure_infsa(const std::vector<std::int64_t>& shape, std::uint64_t seed, bool print) {
    const LinearInfsaParams par;
    correct_kernels_pass(
        "pure-infsa", shape, seed,
        [&](const AttentionProblem& p, const Array& o, const KernelCheckOptions& opt) {
            return check_pure_infsa(p, par, o, opt);
        },
        [&](const AttentionProblem& p, Format f) { return float_kernel(p, par, f, Fault::none); },
        [&](const AttentionProblem& p, Format f) {
            return baseline_pure_infsa(p, par, f, Format::fp32);
        },
        print);
}

}  // namespace

TEST_CASE("check-kernel pure-infsa: correct kernels pass on every stress case", "[kernels]") {
    correct_pure_infsa({2, 32, 16}, 5, false);
}

TEST_CASE("check-kernel pure-infsa: planted wrong kernels are caught", "[kernels]") {
    const LinearInfsaParams par;
    for (Format f : {Format::fp32, Format::fp16})
        for (const char* name : {"gaussian", "heavy-tail"}) {
            const AttentionProblem p = generate_linear_infsa(name, 9, {2, 32, 16}, f);
            for (Fault fault : {Fault::row_norm, Fault::no_relu, Fault::gamma_missing}) {
                const KernelCheckResult r =
                    check_pure_infsa(p, par, float_kernel(p, par, f, fault), at(f));
                INFO(format_name(f)
                     << " " << name << " fault " << static_cast<int>(fault) << ": " << r.summary);
                CHECK(r.verdict == KernelVerdict::wrong);
            }
            // 1/d missing scales A+ and its norm alike: Â moves by O(eps / ||A+||), not a fault
            // the output can show (proofs/kernel_tolerance.md, "Pure InfSA").
            const KernelCheckResult r =
                check_pure_infsa(p, par, float_kernel(p, par, f, Fault::no_div_d), at(f));
            CHECK(r.verdict != KernelVerdict::wrong);
        }
    const AttentionProblem z = generate_linear_infsa("relu-zero", 1, {2, 16, 8}, Format::fp16);
    for (double x : reference_pure_infsa(z, par).values) CHECK(x == 0);
}

TEST_CASE("check-kernel pure-infsa: tightness of the rounding bound", "[kernels][tightness][.]") {
    correct_pure_infsa({2, 256, 64}, 11, true);
}
