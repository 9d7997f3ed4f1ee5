// exp over an array in vector lanes (kernels/exp_lanes.hpp; the error bound is derived in
// proofs/kernel_tolerance.md, "The reference's exp").
#include "attnspec/kernels/exp_lanes.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace attnspec::kernels {
namespace {

typedef double Vd __attribute__((vector_size(64)));
typedef std::int64_t Vi __attribute__((vector_size(64)));
constexpr int kLanes = 8;

constexpr double kLog2e = 0x1.71547652b82fep0;  // 1/ln 2 rounded
constexpr double kShifter = 0x1.8p52;           // x + 1.5 2^52 - 1.5 2^52 rounds x to an integer
// ln 2 = kLn2Hi + kLn2Lo + delta, |delta| < 2^-86; kLn2Hi has 32 significant bits, so k kLn2Hi is
// exact for |k| < 2^21.
constexpr double kLn2Hi = 0x1.62e42feep-1;
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
constexpr double kMaxArg = kExpLanesRange;  // beyond: std::exp (2^k leaves the normal range)

// 1/i! rounded to double, i = 0 .. 13.
constexpr double kC[14] = {1.0,
                           1.0,
                           0.5,
                           0x1.5555555555555p-3,
                           0x1.5555555555555p-5,
                           0x1.1111111111111p-7,
                           0x1.6c16c16c16c17p-10,
                           0x1.a01a01a01a01ap-13,
                           0x1.a01a01a01a01ap-16,
                           0x1.71de3a556c734p-19,
                           0x1.27e4fb7789f5cp-22,
                           0x1.ae64567f544e4p-26,
                           0x1.1eed8eff8d898p-29,
                           0x1.6124613a86d09p-33};

// y[j] = exp(x[j]) for j < n, n a multiple of kLanes, every |x_j| <= kMaxArg (other lanes get
// some value: exp_lanes redoes them).
#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void exp_vec(const double* x, double* y, long n) {
    for (long j = 0; j + kLanes <= n; j += kLanes) {
        Vd v;
        std::memcpy(&v, x + j, sizeof v);
        const Vd t = v * kLog2e + kShifter;  // the integer k in t's low significand bits
        const Vd k = t - kShifter;
        const Vd r = (v - k * kLn2Hi) - k * kLn2Lo;
        Vd p = r * kC[13] + kC[12];
        for (int i = 11; i >= 0; --i) p = p * r + kC[i];
        Vi bits;
        std::memcpy(&bits, &t, sizeof bits);
        bits = (bits + 1023) << 52;  // 2^k: (t's bits + 1023) << 52 keeps (k + 1023) << 52
        Vd scale;
        std::memcpy(&scale, &bits, sizeof scale);
        const Vd out = p * scale;
        std::memcpy(y + j, &out, sizeof out);
    }
}

}  // namespace

void exp_lanes(const double* x, double* y, long n) {
    // The keys out of exp_vec's range (|x| > kMaxArg or NaN), found before y overwrites x.
    thread_local std::vector<std::pair<long, double>> out;
    out.clear();
    long j = 0;
#ifdef __SSE2__
    const __m128d abs_mask = _mm_castsi128_pd(_mm_set1_epi64x(0x7fffffffffffffff));
    const __m128d limit = _mm_set1_pd(kMaxArg);
    for (; j + 2 <= n; j += 2) {
        const __m128d v = _mm_loadu_pd(x + j);
        if (_mm_movemask_pd(_mm_cmple_pd(_mm_and_pd(v, abs_mask), limit)) != 3)
            out.emplace_back(j, x[j]), out.emplace_back(j + 1, x[j + 1]);
    }
#endif
    for (; j < n; ++j)
        if (!(std::fabs(x[j]) <= kMaxArg)) out.emplace_back(j, x[j]);
    const long body = n / kLanes * kLanes;
    for (long i = body; i < n; ++i) y[i] = std::exp(x[i]);
    exp_vec(x, y, body);
    for (const auto& [i, v] : out) y[i] = std::exp(v);
}

void exp_lanes_in_range(const double* x, double* y, long n) {
    const long body = n / kLanes * kLanes;
    for (long i = body; i < n; ++i) y[i] = std::exp(x[i]);
    exp_vec(x, y, body);
}

}  // namespace attnspec::kernels
