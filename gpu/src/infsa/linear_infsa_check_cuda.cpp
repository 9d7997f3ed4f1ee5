// gpu-check cases of the Linear-InfSA twin (check_linear_infsa, gpu_check.hpp): each precision on
// sizes straddling 31/32/33, the 256-token chunk and the warp, tall (N >> d) and wide (d > N),
// small to large N, several heads. Reference: attnspec::linear_infsa (float64) on exactly the
// values the twin reads (16-bit and float32 inputs converted exactly to double). Tolerance: the
// rigorous bound gpu::linear_infsa_error_bound (max over heads and components, on the absolute
// error of p), no measured factor.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "attnspec/base/rounding.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/gpu/infsa/linear_infsa_cuda.hpp"
#include "linear_infsa_logic.hpp"

namespace attnspec::gpu {

namespace {

namespace lg = infsa_logic;

struct Shape {
    long H, N, d;
    const char* kind;
};

std::vector<Shape> shapes(bool quick) {
    std::vector<Shape> s = {{2, 31, 32, "tall"},
                            {2, 32, 31, "tall"},
                            {2, 33, 33, "tall"},
                            {1, 257, 64, "tall"},
                            {1, 31, 65, "wide"}};
    if (quick) return s;
    for (long N : {255L, 256L, 513L}) s.push_back({3, N, 33, "tall"});
    s.push_back({2, 33, 257, "wide"});
    s.push_back({4, 4097, 64, "tall"});
    s.push_back({16, 65537, 64, "tall"});
    return s;
}

template <class Fn>
double timed_median(bool timed, Fn fn) {
    if (timed) return median_seconds(3, fn);
    fn();
    return -1;
}

// One case in one precision: data drawn from `seed` in [-0.25, 1) (mostly positive scores, both
// signs present), stored in the precision, read back exactly as double for the reference.
TwinCase run_case(Context& ctx, const Shape& sh, const std::string& precision, std::uint64_t seed,
                  bool timed) {
    const long H = sh.H, N = sh.N, d = sh.d;
    const std::size_t n = std::size_t(H * N * d);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> dist(-0.25, 1.0);
    std::vector<double> raw(3 * n);
    for (double& x : raw) x = dist(rng);
    std::vector<float> f32(3 * n);
    std::vector<std::uint16_t> h16(3 * n);
    const bool is_bf16 = precision == "bf16-in/fp32-acc", is_fp16 = precision == "fp16-in/fp32-acc";
    for (std::size_t i = 0; i < 3 * n; ++i) {
        if (is_bf16) {
            h16[i] = lg::float_to_bf16(float(raw[i]));
            raw[i] = lg::bf16_to_float(h16[i]);
        } else if (is_fp16) {
            h16[i] = lg::float_to_fp16(float(raw[i]));
            raw[i] = lg::fp16_to_float(h16[i]);
        } else if (precision == "fp32") {
            f32[i] = float(raw[i]);
            raw[i] = f32[i];
        }
    }
    const LinearInfsaOptions opt;
    const auto head = [&](int which, long h) {  // which: 0 Q, 1 K, 2 V; row-major [N][d] -> N x d
        Eigen::MatrixXd M(N, d);
        const double* p = raw.data() + std::size_t(which) * n + std::size_t(h * N * d);
        for (long i = 0; i < N; ++i)
            for (long l = 0; l < d; ++l) M(i, l) = p[i * d + l];
        return M;
    };
    std::vector<double> cpu(std::size_t(H * d)), gpu(std::size_t(H * d));
    double tol = 0;
    const double u_acc = precision == "fp64" ? kUnitRoundoff : 0x1p-24;
    TwinCase c;
    c.twin = "linear_infsa";
    c.precision = precision;
    c.shape = {H, N, d};
    c.case_name = "H=" + std::to_string(H) + " N=" + std::to_string(N) + " d=" + std::to_string(d) +
                  " " + sh.kind;
    c.cpu_seconds = timed_median(timed, [&] {
        for (long h = 0; h < H; ++h) {
            const LinearInfsaResult r =
                attnspec::linear_infsa(head(0, h), head(1, h), head(2, h), opt);
            for (long l = 0; l < d; ++l) cpu[std::size_t(h * d + l)] = r.p[l];
        }
    });
    for (long h = 0; h < H; ++h)
        tol = std::max(
            tol,
            linear_infsa_error_bound(head(0, h), head(1, h), head(2, h), opt, u_acc).maxCoeff());
    std::vector<float> P(std::size_t(H * d));
    c.gpu_seconds = timed_median(timed, [&] {
        if (precision == "fp64") {
            for (long h = 0; h < H; ++h) {
                const LinearInfsaResult r =
                    linear_infsa(ctx, head(0, h), head(1, h), head(2, h), opt);
                for (long l = 0; l < d; ++l) gpu[std::size_t(h * d + l)] = r.p[l];
            }
            return;
        }
        if (precision == "fp32")
            linear_infsa_heads_f32(ctx, f32.data(), f32.data() + n, f32.data() + 2 * n, H, N, d,
                                   opt, P.data());
        else
            linear_infsa_heads_16(ctx, is_bf16 ? Input16::bf16 : Input16::fp16, h16.data(),
                                  h16.data() + n, h16.data() + 2 * n, H, N, d, opt, P.data());
        std::copy(P.begin(), P.end(), gpu.begin());
    });
    compare_into(c, cpu.data(), gpu.data(), H * d, tol, true,
                 std::string("bound: first-order rounding of ") +
                     (precision == "fp64" ? "fp64" : "fp32") +
                     " accumulation (gamma_256 per chunk, double across chunks) through e, q_bar, "
                     "s, sum s, p, plus the fp64 reference's, x2 (linear_infsa_error_bound)");
    c.note = "timings include host<->device transfers";
    return c;
}

}  // namespace

std::vector<TwinCase> check_linear_infsa(Context& ctx, const GpuCheckOptions& opt) {
    std::vector<TwinCase> out;
    std::uint64_t seed = opt.seed;
    for (const Shape& sh : shapes(opt.quick))
        for (const char* prec : {"fp64", "fp32", "bf16-in/fp32-acc", "fp16-in/fp32-acc"})
            out.push_back(run_case(ctx, sh, prec, seed++, opt.timings));
    return out;
}

}  // namespace attnspec::gpu
