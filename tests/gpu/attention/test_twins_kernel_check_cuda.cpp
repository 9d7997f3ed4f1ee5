// The project's CUDA twins through check-kernel's own path (issue 31: "the project's own CUDA
// twins through the same path where a device exists"): the SpecA forward twin
// (attention_cuda.hpp, fp64 and fp32) on spec-attention's stress cases with the lambda and the
// SVD corrections is checked by kernels::check_spec_attention at its precision, and the
// Linear-InfSA twin (linear_infsa_cuda.hpp, float32 and bfloat16 inputs, float32 accumulation)
// on the InfSA stress cases by kernels::check_linear_infsa, and the Neumann closure twin
// (neumann_cuda.hpp, cuSOLVER LU in fp64) on neumann's cases by kernels::check_neumann, with Â
// formed on the host as the operation defines it: each must pass, as a user's kernel would be
// asked to. Exit 77 ("SKIP: no CUDA device") without a device.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "attnspec/attention/corrections.hpp"
#include "attnspec/gpu/attention/attention_cuda.hpp"
#include "attnspec/gpu/infsa/linear_infsa_cuda.hpp"
#include "attnspec/gpu/infsa/neumann_cuda.hpp"
#include "attnspec/kernels/linear_infsa_check.hpp"
#include "attnspec/kernels/neumann_check.hpp"
#include "attnspec/kernels/spec_attention_check.hpp"
#include "gpu_skip.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::kernels;

#if ATTNSPEC_HAVE_CUDA
namespace {

using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Eigen::MatrixXd matrix(const Array& a) {
    const long r = static_cast<long>(a.shape[a.shape.size() - 2]), c = a.shape.back();
    return Eigen::Map<const RowMat>(a.values.data(), r, c);
}

// The one-head layer of `p` with the corrections computed as the checker assumes (float64).
MultiHead layer(const SpecAttentionProblem& p) {
    MultiHead m;
    m.X = SharedMatrix(matrix(p.x));
    HeadWeights w;
    w.W_Q = matrix(p.w_q), w.W_K = matrix(p.w_k), w.W_V = matrix(p.w_v);
    for (auto [W, C] : {std::pair<const Eigen::MatrixXd*, Eigen::MatrixXd*>{&w.W_Q, &w.C_Q},
                        {&w.W_K, &w.C_K},
                        {&w.W_V, &w.C_V}})
        *C = p.correction == SpecCorrection::svd
                 ? svd_correction(*W)
                 : lambda_correction(W->rows(), W->cols(), p.lambda);
    m.heads = {w};
    m.s = 1 / std::sqrt(static_cast<double>(p.w_q.shape[1]));
    return m;
}

void report(const char* what, const std::string& name, const KernelCheckResult& r) {
    std::printf("%-28s %-18s %-5s rule %.3g bound %.3g  %s\n", what, name.c_str(),
                verdict_name(r.verdict), r.worst_rule_ratio, r.worst_bound_ratio,
                r.summary.c_str());
}

std::uint16_t bf16_bits(double x) {  // x representable in bf16: the high half of its float
    const float f = static_cast<float>(x);
    std::uint32_t u = 0;
    std::memcpy(&u, &f, sizeof u);
    return static_cast<std::uint16_t>(u >> 16);
}

}  // namespace

TEST_CASE("CUDA SpecA twin passes check-kernel spec-attention", "[gpu]") {
    test::skip_without_device();
    gpu::Context ctx;
    for (const std::string& name : spec_attention_cases())
        for (SpecCorrection c : {SpecCorrection::lambda, SpecCorrection::svd})
            for (Format f : {Format::fp64, Format::fp32}) {
                INFO(name << " " << spec_correction_name(c) << " " << format_name(f));
                SpecAttentionProblem p = generate_spec_attention(name, 5, {96, 48, 16}, f);
                p.correction = c;
                const MultiHead m = layer(p);
                const Eigen::MatrixXd A = f == Format::fp64
                                              ? gpu::multihead_forward(ctx, m)
                                              : gpu::multihead_forward_fp32(ctx, m).cast<double>();
                Array o;
                o.shape = std::vector<std::int64_t>{A.rows(), A.cols()};
                for (Eigen::Index i = 0; i < A.rows(); ++i)
                    for (Eigen::Index j = 0; j < A.cols(); ++j) o.values.push_back(A(i, j));
                KernelCheckOptions opt;
                opt.storage = f;
                const KernelCheckResult r = check_spec_attention(p, o, opt);
                report("spec-attention twin", name, r);
                CHECK(r.verdict == KernelVerdict::pass);
            }
}

TEST_CASE("CUDA Linear-InfSA twin passes check-kernel linear-infsa", "[gpu]") {
    test::skip_without_device();
    gpu::Context ctx;
    const long H = 4, N = 2048, d = 32;
    const LinearInfsaParams par;
    LinearInfsaOptions gopt;
    gopt.gamma = par.gamma, gopt.eps = par.eps;
    for (const std::string& name : linear_infsa_cases())
        for (Format f : {Format::fp32, Format::bf16}) {
            INFO(name << " " << format_name(f));
            const AttentionProblem p = generate_linear_infsa(name, 3, {H, N, d}, f);
            std::vector<float> P(static_cast<size_t>(H * d));
            if (f == Format::fp32) {
                std::vector<float> q(p.q.values.begin(), p.q.values.end()),
                    k(p.k.values.begin(), p.k.values.end()),
                    v(p.v.values.begin(), p.v.values.end());
                gpu::linear_infsa_heads_f32(ctx, q.data(), k.data(), v.data(), H, N, d, gopt,
                                            P.data());
            } else {
                std::vector<std::uint16_t> q, k, v;
                for (auto [src, dst] :
                     {std::pair<const Array*, std::vector<std::uint16_t>*>{&p.q, &q},
                      {&p.k, &k},
                      {&p.v, &v}})
                    for (double x : src->values) dst->push_back(bf16_bits(x));
                gpu::linear_infsa_heads_16(ctx, gpu::Input16::bf16, q.data(), k.data(), v.data(), H,
                                           N, d, gopt, P.data());
            }
            Array o;
            o.shape = std::vector<std::int64_t>{H, N, d};
            for (long h = 0; h < H; ++h)
                for (long i = 0; i < N; ++i)
                    for (long c = 0; c < d; ++c)
                        o.values.push_back(P[static_cast<size_t>(h * d + c)]);
            KernelCheckOptions opt;
            opt.storage = f;
            const KernelCheckResult r = check_linear_infsa(p, par, o, opt);
            report("linear-infsa twin", name, r);
            CHECK(r.verdict == KernelVerdict::pass);
        }
}
TEST_CASE("CUDA Neumann twin passes check-kernel neumann", "[gpu]") {
    test::skip_without_device();
    gpu::Context ctx;
    const long H = 2, N = 128, d = 16;
    const LinearInfsaParams par;
    for (const std::string& name : neumann_cases()) {
        INFO(name);
        const AttentionProblem p = generate_neumann(name, 4, {H, N, d}, Format::fp64);
        std::vector<Eigen::MatrixXd> A_hats, Vs;
        for (long h = 0; h < H; ++h) {
            const auto head = [&](const Array& a) {
                return Eigen::Map<const RowMat>(a.values.data() + h * N * d, N, d).eval();
            };
            const Eigen::MatrixXd Q = head(p.q), K = head(p.k);
            const Eigen::MatrixXd A = (Q * K.transpose() / static_cast<double>(d)).cwiseMax(0.0);
            A_hats.push_back(A / (A.norm() + par.eps));
            Vs.push_back(head(p.v));
        }
        const std::vector<Eigen::MatrixXd> O = gpu::closure_times(ctx, A_hats, par.gamma, Vs);
        Array o;
        o.shape = std::vector<std::int64_t>{H, N, d};
        for (long h = 0; h < H; ++h)
            for (long i = 0; i < N; ++i)
                for (long c = 0; c < d; ++c) o.values.push_back(O[static_cast<size_t>(h)](i, c));
        KernelCheckOptions opt;
        opt.storage = Format::fp64;
        const KernelCheckResult r = check_neumann(p, par, o, opt);
        report("neumann twin", name, r);
        CHECK(r.verdict == KernelVerdict::pass);
    }
}
#else
TEST_CASE("CUDA twins through check-kernel: a build without CUDA has no device", "[gpu]") {
    test::skip_without_device();
    FAIL("device_info reported a device in a build without CUDA");
}
#endif
