// The Linear-InfSA CUDA twin run on the CPU: the 16-bit conversions of
// gpu/src/infsa/linear_infsa_logic.hpp against exact values, and the twin's own kernel bodies and
// launch sequence (gpu/src/infsa/linear_infsa_kernels.hpp, what linear_infsa_cuda.cu launches) on
// the CPU grid runner (attnspec/gpu/base/cpu_grid.hpp: real barriers, shared memory, partial
// chunks), against the float64 reference attnspec::linear_infsa within
// gpu::linear_infsa_error_bound (a priori), at sizes straddling 31/32/33 and the 256-token chunk;
// each planted fault (gpu-check's two, and the runner-only index-math and barrier faults) must
// push the result outside that bound.
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "../../../gpu/src/infsa/linear_infsa_kernels.hpp"
#include "attnspec/gpu/base/cpu_grid.hpp"
#include "attnspec/gpu/infsa/linear_infsa_cuda.hpp"
#include "attnspec/infsa/linear_infsa.hpp"
#include "test_support.hpp"

using namespace attnspec;
namespace lg = attnspec::gpu::infsa_logic;
using lg::Fmt;
using lg::Format;

namespace {

// ---- the kernel bodies of linear_infsa_cuda.cu, run on the CPU grid runner ----

// Returns what the device writes to `out`: [H][d] p, [H][d] q_bar, [H] sum e, [H] sum s. The
// workspace and the output start as NaN, so a value the kernels never write shows.
template <Format F>
std::vector<double> run_on_cpu(gpu::CpuGrid& grid, const std::vector<typename Fmt<F>::In>& Q,
                               const std::vector<typename Fmt<F>::In>& K,
                               const std::vector<typename Fmt<F>::In>& V, long H, long N, long d,
                               const LinearInfsaOptions& opt, int fault) {
    const std::size_t bytes = lg::workspace_bytes<F>(H, N, d);
    std::vector<double> work((bytes + sizeof(double) - 1) / sizeof(double), NAN);
    std::vector<double> out(std::size_t(H * (2 * d + 2)), NAN);
    lg::run_linear_infsa<F>(grid, Q.data(), K.data(), V.data(), H, N, d, opt.gamma, opt.eps, fault,
                            work.data(), out.data());
    return out;
}

template <Format F>
std::vector<double> run_on_cpu(const std::vector<typename Fmt<F>::In>& Q,
                               const std::vector<typename Fmt<F>::In>& K,
                               const std::vector<typename Fmt<F>::In>& V, long H, long N, long d,
                               const LinearInfsaOptions& opt, int fault) {
    gpu::CpuGrid grid;
    return run_on_cpu<F>(grid, Q, K, V, H, N, d, opt, fault);
}

// ---- inputs: drawn in double, stored in the format; the reference sees the stored values ----

template <Format F>
typename Fmt<F>::In store(double x) {
    if constexpr (F == Format::f64) {
        return x;
    } else if constexpr (F == Format::f32) {
        return float(x);
    } else if constexpr (F == Format::bf16) {
        return lg::float_to_bf16(float(x));
    } else {
        return lg::float_to_fp16(float(x));
    }
}

template <Format F>
struct Inputs {
    std::vector<typename Fmt<F>::In> Q, K, V;
    std::vector<Eigen::MatrixXd> q, k, v;  // per head, the stored values as double
};

// Scores mostly positive and values mostly positive (entries in [-0.25, 1)): the pooled sums do
// not cancel, so the rigorous bound stays near gamma_256 u_fp32 relative and one dropped token of
// up to ~1000 shows above it (a dropped token changes p by about 1/N of its size).
template <Format F>
Inputs<F> draw(long H, long N, long d, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> qk(-0.25, 1.0), vv(-0.25, 1.0);
    Inputs<F> in;
    const auto fill = [&](std::vector<typename Fmt<F>::In>& raw, std::vector<Eigen::MatrixXd>& m,
                          std::uniform_real_distribution<double>& dist) {
        raw.resize(std::size_t(H * N * d));
        for (long h = 0; h < H; ++h) {
            Eigen::MatrixXd M(N, d);
            for (long i = 0; i < N; ++i)
                for (long l = 0; l < d; ++l) {
                    const auto s = store<F>(dist(rng));
                    raw[std::size_t((h * N + i) * d + l)] = s;
                    M(i, l) = double(Fmt<F>::load(s));
                }
            m.push_back(M);
        }
    };
    fill(in.Q, in.q, qk);
    fill(in.K, in.k, qk);
    fill(in.V, in.v, vv);
    return in;
}

template <Format F>
constexpr double u_acc() {
    return F == Format::f64 ? kUnitRoundoff : 0x1p-24;
}

// Largest excess of |p_twin - p_reference| over the bound, over heads and components (<= 0: every
// component within its bound; a NaN counts as +inf); `worst_ratio` the largest error / bound.
template <Format F>
double excess(const Inputs<F>& in, const std::vector<double>& out, long H, long d,
              const LinearInfsaOptions& opt, double* worst_ratio = nullptr) {
    double ex = -INFINITY, ratio = 0;
    for (long h = 0; h < H; ++h) {
        const auto ref = attnspec::linear_infsa(in.q[std::size_t(h)], in.k[std::size_t(h)],
                                                in.v[std::size_t(h)], opt);
        const Eigen::VectorXd bound = gpu::linear_infsa_error_bound(
            in.q[std::size_t(h)], in.k[std::size_t(h)], in.v[std::size_t(h)], opt, u_acc<F>());
        for (long l = 0; l < d; ++l) {
            const double err = std::fabs(out[std::size_t(h * d + l)] - ref.p[l]);
            ex = std::max(ex, std::isnan(err) ? INFINITY : err - bound[l]);
            if (bound[l] > 0) ratio = std::max(ratio, err / bound[l]);
        }
    }
    if (worst_ratio) *worst_ratio = ratio;
    return ex;
}

template <Format F>
void agree_and_catch_faults(long H, long N, long d, bool faults = true) {
    INFO("format " << int(F) << " H=" << H << " N=" << N << " d=" << d);
    const LinearInfsaOptions opt;
    const Inputs<F> in = draw<F>(H, N, d, 7919 * std::uint64_t(N) + std::uint64_t(d));
    double ratio = 0;
    gpu::CpuGrid grid;
    const auto out = run_on_cpu<F>(grid, in.Q, in.K, in.V, H, N, d, opt, lg::kFaultNone);
    CHECK(excess<F>(in, out, H, d, opt, &ratio) <= 0);
    // Four launches; each sweep block passes its one barrier, every thread reaches it.
    const long sweep_blocks = H * lg::chunk_count(N);
    CHECK(grid.counters().launches == 4);
    CHECK(grid.counters().barriers == 2 * sweep_blocks);
    CHECK(grid.counters().divergent_barriers == 0);
    // Every warp of every sweep block sums at least once.
    CHECK(grid.counters().warp_sums >= 2 * sweep_blocks);
    INFO("worst error / bound " << ratio);
    // The bound is not vacuous: far below the size of p (float32: about 1e-4 of it at most).
    for (long h = 0; h < H; ++h) {
        const Eigen::VectorXd b = gpu::linear_infsa_error_bound(
            in.q[std::size_t(h)], in.k[std::size_t(h)], in.v[std::size_t(h)], opt, u_acc<F>());
        const auto ref = attnspec::linear_infsa(in.q[std::size_t(h)], in.k[std::size_t(h)],
                                                in.v[std::size_t(h)], opt);
        CHECK(b.maxCoeff() <= (F == Format::f64 ? 1e-10 : 1e-3) * ref.p.cwiseAbs().maxCoeff());
    }
    // The twin also reproduces q_bar, sum e and sum s of the reference.
    const auto ref0 = attnspec::linear_infsa(in.q[0], in.k[0], in.v[0], opt);
    const double tol_q = F == Format::f64 ? 1e-12 : 1e-4;  // relative, >= 10 x the bound's size
    CHECK(std::fabs(out[std::size_t(2 * H * d)] - ref0.sum_e) <= tol_q * ref0.sum_e);
    CHECK(std::fabs(out[std::size_t(2 * H * d + H)] - ref0.sum_s) <= tol_q * ref0.sum_s);
    for (long l = 0; l < d; ++l)
        CHECK(std::fabs(out[std::size_t(H * d + l)] - ref0.q_bar[l]) <=
              tol_q * ref0.q_bar.cwiseAbs().maxCoeff());
    if (!faults) return;
    for (int fault : {lg::kFaultOffByOneTile, lg::kFaultDroppedTerm, lg::kFaultTokenStride,
                      lg::kFaultNoBarrier}) {
        INFO("planted fault " << fault);
        gpu::CpuGrid faulty;
        const auto bad = run_on_cpu<F>(faulty, in.Q, in.K, in.V, H, N, d, opt, fault);
        CHECK(excess<F>(in, bad, H, d, opt) > 0);
        CHECK(faulty.counters().barriers == (fault == lg::kFaultNoBarrier ? 0 : 2 * sweep_blocks));
    }
}

}  // namespace

TEST_CASE("bf16 and fp16 bit patterns convert to their exact values", "[gpu-logic][infsa]") {
    // Every pattern against its value computed independently: sign, exponent, mantissa.
    long bad_fp16 = 0, bad_bf16 = 0;
    for (std::uint32_t b = 0; b < 65536; ++b) {
        const auto h = std::uint16_t(b);
        const double sign = (b & 0x8000u) ? -1.0 : 1.0;
        const int e5 = int((b >> 10) & 0x1f), m10 = int(b & 0x3ff);
        const float f16 = lg::fp16_to_float(h);
        if (e5 == 31) {
            bad_fp16 += (m10 == 0 ? !std::isinf(f16) : !std::isnan(f16));
        } else {
            const double v = e5 == 0 ? std::ldexp(m10, -24) : std::ldexp(1024 + m10, e5 - 25);
            bad_fp16 += double(f16) != sign * v || std::signbit(f16) != bool(b & 0x8000u) ||
                        lg::float_to_fp16(f16) != h;  // exact values round-trip
        }
        const int e8 = int((b >> 7) & 0xff), m7 = int(b & 0x7f);
        const float bf = lg::bf16_to_float(h);
        if (e8 == 255) {
            bad_bf16 += (m7 == 0 ? !std::isinf(bf) : !std::isnan(bf));
        } else {
            const double v = e8 == 0 ? std::ldexp(m7, -133) : std::ldexp(128 + m7, e8 - 134);
            bad_bf16 += double(bf) != sign * v || lg::float_to_bf16(bf) != h;  // round-trips
        }
    }
    CHECK(bad_fp16 == 0);
    CHECK(bad_bf16 == 0);
    CHECK(lg::fp16_to_float(0x3c00) == 1.0f);
    CHECK(lg::fp16_to_float(0x7bff) == 65504.0f);
    CHECK(lg::fp16_to_float(0x0001) == std::ldexp(1.0f, -24));
    CHECK(lg::bf16_to_float(0x3f80) == 1.0f);
    // float -> bf16 rounds to nearest, ties to even.
    CHECK(lg::float_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);      // tie, down to even
    CHECK(lg::float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);  // tie, up to even
    CHECK(lg::float_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)) == 0x3f81);
    CHECK(std::isnan(lg::bf16_to_float(lg::float_to_bf16(std::nanf("")))));
    // float -> fp16: ties to even, overflow, underflow to subnormals and zero.
    CHECK(lg::float_to_fp16(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);      // tie, down to even
    CHECK(lg::float_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);  // tie, up to even
    CHECK(lg::float_to_fp16(65519.0f) == 0x7bff);
    CHECK(lg::float_to_fp16(65520.0f) == 0x7c00);
    CHECK(lg::float_to_fp16(std::ldexp(1.0f, -25)) == 0x0000);         // tie to even zero
    CHECK(lg::float_to_fp16(1.5f * std::ldexp(1.0f, -24)) == 0x0002);  // tie, up to even
    CHECK(lg::float_to_fp16(-std::ldexp(1.0f, -30)) == 0x8000);
    CHECK(std::isnan(lg::fp16_to_float(lg::float_to_fp16(std::nanf("")))));
}

TEST_CASE("grid shape: chunks and the planted faults' index changes", "[gpu-logic][infsa]") {
    CHECK(lg::chunk_count(255) == 1);
    CHECK(lg::chunk_count(256) == 1);
    CHECK(lg::chunk_count(257) == 2);
    CHECK(lg::tokens_in_chunk(257, 1, 1, lg::kFaultNone) == 1);
    CHECK(lg::tokens_in_chunk(257, 0, 1, lg::kFaultNone) == 256);
    CHECK(lg::tokens_in_chunk(257, 1, 2, lg::kFaultDroppedTerm) == 0);
    CHECK(lg::tokens_in_chunk(257, 1, 1, lg::kFaultDroppedTerm) == 1);
    CHECK(lg::chunks_combined(513, lg::kFaultNone) == 3);
    CHECK(lg::chunks_combined(513, lg::kFaultOffByOneTile) == 2);
}

TEST_CASE(
    "Linear-InfSA kernel bodies on the CPU grid runner agree with the float64 reference "
    "within the bound, planted faults exceed it",
    "[gpu-logic][infsa]") {
    // Every format, clean and under each planted fault, inside one partial warp's worth of tokens
    // per warp and across the 256-token chunk; float32 clean on the other sizes straddling
    // 31/32/33 and the chunk (a run costs about 25 ms here: the sizes are kept few).
    for (const auto& [N, d] : {std::pair{31L, 33L}, std::pair{33L, 32L}, std::pair{257L, 31L}}) {
        agree_and_catch_faults<Format::f64>(2, N, d);
        agree_and_catch_faults<Format::f32>(2, N, d);
        agree_and_catch_faults<Format::bf16>(2, N, d);
        agree_and_catch_faults<Format::fp16>(2, N, d);
    }
    for (long N : {32L, 255L, 256L, 600L})
        for (long d : {31L, 33L}) agree_and_catch_faults<Format::f32>(2, N, d, false);
    agree_and_catch_faults<Format::f32>(1, 33, 65);  // wide: d > N
    agree_and_catch_faults<Format::bf16>(3, 1025, 64, false);
    agree_and_catch_faults<Format::f64>(1, 40, 700);  // fewer warps: 7 x 701 doubles fit
}

TEST_CASE("the float32 CPU kernel lies within the twin's bound of the reference too",
          "[gpu-logic][infsa]") {
    // linear_infsa_heads_f32 sums like the twin (float in blocks of 256, double across), so the
    // twin's bound covers it: this ties the bound to an independent float32 implementation.
    const long H = 2, N = 777, d = 64;
    const Inputs<Format::f32> in = draw<Format::f32>(H, N, d, 42);
    const LinearInfsaOptions opt;
    std::vector<float> P(std::size_t(H * d));
    linear_infsa_heads_f32(in.Q.data(), in.K.data(), in.V.data(), H, N, d, opt, P.data());
    const std::vector<double> out(P.begin(), P.end());
    std::vector<double> padded(std::size_t(H * (2 * d + 2)));
    std::copy(out.begin(), out.end(), padded.begin());
    CHECK(excess<Format::f32>(in, padded, H, d, opt) <= 0);
}

TEST_CASE(
    "Linear-InfSA kernel bodies on the CPU grid runner: degenerate inputs give p = 0 as the "
    "reference does",
    "[gpu-logic][infsa]") {
    const long H = 1, N = 40, d = 8;
    const LinearInfsaOptions opt;
    std::vector<double> Q(std::size_t(N * d), 0.0), K(std::size_t(N * d), 1.0),
        V(std::size_t(N * d), 2.0);
    // All-zero queries: sum e = 0, q_bar = 0, every score 0.
    auto out = run_on_cpu<Format::f64>(Q, K, V, H, N, d, opt, lg::kFaultNone);
    const Eigen::MatrixXd Qm = Eigen::MatrixXd::Zero(N, d), Km = Eigen::MatrixXd::Ones(N, d),
                          Vm = Eigen::MatrixXd::Constant(N, d, 2.0);
    CHECK(attnspec::linear_infsa(Qm, Km, Vm, opt).degenerate);
    for (long l = 0; l < d; ++l) CHECK(out[std::size_t(l)] == 0.0);
    CHECK(out[std::size_t(2 * d)] == 0.0);      // sum e
    CHECK(out[std::size_t(2 * d + 1)] == 0.0);  // sum s
    // Keys opposite to every query: all scores clipped to 0.
    std::fill(Q.begin(), Q.end(), 1.0);
    std::fill(K.begin(), K.end(), -1.0);
    out = run_on_cpu<Format::f64>(Q, K, V, H, N, d, opt, lg::kFaultNone);
    CHECK(attnspec::linear_infsa(Km, -Km, Vm, opt).degenerate);
    for (long l = 0; l < d; ++l) CHECK(out[std::size_t(l)] == 0.0);
    CHECK(out[std::size_t(2 * d + 1)] == 0.0);
}

TEST_CASE("Linear-InfSA kernels: vector widths, lanes per token, aligned loads",
          "[gpu-logic][infsa]") {
    // float32, d = 64: a half-warp per token, one float4 per lane; d = 33: scalars, a warp.
    CHECK(lg::vector_width<Format::f32>(64) == 4);
    CHECK(lg::lanes_per_token(64, 4) == 16);
    CHECK(lg::vector_width<Format::f32>(33) == 1);
    CHECK(lg::lanes_per_token(33, 1) == 32);
    CHECK(lg::vector_width<Format::bf16>(64) == 8);
    CHECK(lg::lanes_per_token(64, 8) == 8);
    CHECK(lg::vector_width<Format::f64>(700) == 2);
    CHECK(lg::lanes_per_token(700, 2) == 32);
    CHECK(lg::lanes_per_token(4, 4) == 1);
    // The runner's loads check the alignment a device vector load needs.
    alignas(16) float row[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(lg::load_pack<float, 4>(row + 4).v[3] == 8.0f);
    CHECK_THROWS_AS((lg::load_pack<float, 4>(row + 1)), std::logic_error);
    CHECK(lg::token_stride(64, 4, lg::kFaultTokenStride) == 60);
    CHECK(lg::token_stride(64, 4, lg::kFaultNone) == 64);
}

TEST_CASE("Linear-InfSA twin: expected bytes moved per call", "[gpu-logic][infsa]") {
    // Q, K, V once (3 x 1.359 GB in float32 at the size) plus 4 x H x 1296 x 65 floats of
    // partials, 2 x H x 64 of q_bar and H x 130 output doubles.
    const double f32 = gpu::linear_infsa_bytes_moved(gpu::InputFormat::f32, 16, 331776, 64);
    CHECK(f32 == 3.0 * 4 * 16 * 331776 * 64 + 4.0 * 4 * 16 * 1296 * 65 + 2.0 * 4 * 16 * 64 +
                     8.0 * 16 * 130);
    CHECK(std::fabs(f32 / 1e9 - 4.0985) < 1e-4);
    const double bf16 = gpu::linear_infsa_bytes_moved(gpu::InputFormat::bf16, 16, 331776, 64);
    CHECK(bf16 == f32 - 3.0 * 2 * 16 * 331776 * 64);
}
