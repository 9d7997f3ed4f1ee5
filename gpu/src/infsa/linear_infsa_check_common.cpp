// gpu-check cases of the Linear-InfSA twin (linear_infsa_check.hpp), host-only: each precision on
// sizes straddling 31/32/33, the 256-token chunk and the warp, tall (N >> d) and wide (d > N),
// small to large N, several heads. Reference: attnspec::linear_infsa (float64) on exactly the
// values the twin reads (16-bit and float32 inputs converted exactly to double). Tolerance: the
// rigorous bound gpu::linear_infsa_error_bound (max over heads and components, on the absolute
// error of p), fixed before the twin runs, no measured factor. Also the emulated check
// (`gpu-check --emulate`): the twin's kernel bodies and launch sequence (linear_infsa_kernels.hpp)
// on the CPU grid runner, with the planted fault as the device twin reads it.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "attnspec/base/rounding.hpp"
#include "attnspec/gpu/base/cpu_grid.hpp"
#include "linear_infsa_check.hpp"
#include "linear_infsa_kernels.hpp"

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
TwinCase run_case(const LinearInfsaRun& twin, const Shape& sh, const std::string& precision,
                  std::uint64_t seed, bool timed) {
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
    const InputFormat fmt = precision == "fp64"   ? InputFormat::f64
                            : precision == "fp32" ? InputFormat::f32
                            : is_bf16             ? InputFormat::bf16
                                                  : InputFormat::fp16;
    const void* in = fmt == InputFormat::f64   ? static_cast<const void*>(raw.data())
                     : fmt == InputFormat::f32 ? static_cast<const void*>(f32.data())
                                               : static_cast<const void*>(h16.data());
    const std::size_t stride = n * (fmt == InputFormat::f64 ? 8 : fmt == InputFormat::f32 ? 4 : 2);
    const auto at = [&](int which) { return static_cast<const char*>(in) + which * stride; };
    c.gpu_seconds =
        timed_median(timed, [&] { twin(fmt, at(0), at(1), at(2), H, N, d, opt, gpu.data()); });
    compare_into(c, cpu.data(), gpu.data(), H * d, tol, true,
                 std::string("bound: first-order rounding of ") +
                     (precision == "fp64" ? "fp64" : "fp32") +
                     " accumulation (gamma_256 per chunk, double across chunks) through e, q_bar, "
                     "s, sum s, p, plus the fp64 reference's, x2 (linear_infsa_error_bound)");
    return c;
}

// The twin's four launches on the CPU grid runner, in format F, with the planted fault as the
// device twin reads it (linear_infsa_heads_device); p rounded as the host entries round it.
template <lg::Format F>
void run_emulated(const void* Q, const void* K, const void* V, long H, long N, long d,
                  const LinearInfsaOptions& o, double* p) {
    using In = typename lg::Fmt<F>::In;
    const std::size_t bytes = lg::workspace_bytes<F>(H, N, d);
    std::vector<double> work((bytes + sizeof(double) - 1) / sizeof(double), NAN);
    std::vector<double> out(std::size_t(H * (2 * d + 2)), NAN);
    CpuGrid grid;
    lg::run_linear_infsa<F>(grid, static_cast<const In*>(Q), static_cast<const In*>(K),
                            static_cast<const In*>(V), H, N, d, o.gamma, o.eps,
                            lg::planted_fault_code(), work.data(), out.data());
    for (long i = 0; i < H * d; ++i)
        p[i] = F == lg::Format::f64 ? out[std::size_t(i)] : double(float(out[std::size_t(i)]));
}

}  // namespace

std::vector<TwinCase> linear_infsa_cases(const GpuCheckOptions& opt, const LinearInfsaRun& twin,
                                         const std::string& note) {
    std::vector<TwinCase> out;
    std::uint64_t seed = opt.seed;
    for (const Shape& sh : shapes(opt.quick))
        for (const char* prec : {"fp64", "fp32", "bf16-in/fp32-acc", "fp16-in/fp32-acc"}) {
            out.push_back(run_case(twin, sh, prec, seed++, opt.timings));
            out.back().note = note;
        }
    return out;
}

std::vector<TwinCase> check_linear_infsa_emulated(const GpuCheckOptions& opt) {
    const LinearInfsaRun on_runner = [](InputFormat fmt, const void* Q, const void* K,
                                        const void* V, long H, long N, long d,
                                        const LinearInfsaOptions& o, double* p) {
        switch (fmt) {
            case InputFormat::f64:
                return run_emulated<lg::Format::f64>(Q, K, V, H, N, d, o, p);
            case InputFormat::f32:
                return run_emulated<lg::Format::f32>(Q, K, V, H, N, d, o, p);
            case InputFormat::bf16:
                return run_emulated<lg::Format::bf16>(Q, K, V, H, N, d, o, p);
            case InputFormat::fp16:
                return run_emulated<lg::Format::fp16>(Q, K, V, H, N, d, o, p);
        }
    };
    return linear_infsa_cases(opt, on_runner, "kernels on the CPU grid runner");
}

}  // namespace attnspec::gpu
