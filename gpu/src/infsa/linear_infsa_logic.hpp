// Per-token and per-chunk arithmetic of the Linear-InfSA CUDA twin, shared with the CPU test suite.
// The kernel bodies that call it (one block per chunk of kChunk tokens of one head, the CPU
// float32 kernel's block of 256 tokens; then one thread per (head, component) combining the
// chunks) are linear_infsa_kernels.hpp, run on the device and on the CPU grid runner. Layout:
// Q, K, V are [H][N][d] row-major, one head after another. The per-chunk partials (accumulator
// type) are combined across chunks in double, in chunk order: a fixed order, no atomics, so the
// result is deterministic.
#pragma once
#include <cmath>
#include <cstdint>
#if !defined(__CUDA_ARCH__)
#include <cstring>
#endif

#include "attnspec/gpu/base/hd.hpp"
#include "infsa_faults.hpp"

namespace attnspec::gpu::infsa_logic {

constexpr long kChunk = 256;  // tokens per block (= the CPU float32 kernel's block)

// Planted faults (infsa_faults.hpp): off_by_one_tile leaves the last chunk out of the
// cross-chunk combine; dropped_term leaves the last token out of sweep 2 (sum s, pooling).

// ---- 16-bit input formats (raw bit patterns), converted exactly to float ----

ATTNSPEC_HD float bits_to_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
#endif
}

ATTNSPEC_HD std::uint32_t float_to_bits(float f) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(f);
#else
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
#endif
}

// bfloat16 is the upper half of a float: exact.
ATTNSPEC_HD float bf16_to_float(std::uint16_t b) { return bits_to_float(std::uint32_t(b) << 16); }

// float -> bfloat16, round to nearest even; NaN stays a (quiet) NaN.
ATTNSPEC_HD std::uint16_t float_to_bf16(float f) {
    const std::uint32_t u = float_to_bits(f);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) != 0)
        return std::uint16_t((u >> 16) | 0x0040u);
    const std::uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);
    return std::uint16_t(rounded >> 16);
}

// IEEE binary16 -> float, exact (every half value is a float): normal, subnormal, inf, NaN.
ATTNSPEC_HD float fp16_to_float(std::uint16_t h) {
    const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu;
    const std::uint32_t man = h & 0x3ffu;
    if (exp == 0) {  // zero or subnormal: man * 2^-24 (exact in float)
        const float mag = float(man) * 5.9604644775390625e-8f;
        return sign ? -mag : mag;
    }
    if (exp == 31) return bits_to_float(sign | 0x7f800000u | (man << 13));  // inf / NaN
    return bits_to_float(sign | ((exp + 112u) << 23) | (man << 13));        // rebias 15 -> 127
}

// float -> IEEE binary16, round to nearest even (overflow to inf, gradual underflow); NaN stays
// a (quiet) NaN. Inputs for tests and gpu-check are made with it.
ATTNSPEC_HD std::uint16_t float_to_fp16(float f) {
    const std::uint32_t u = float_to_bits(f);
    const auto sign = std::uint16_t((u >> 16) & 0x8000u);
    const std::uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return std::uint16_t(sign | 0x7e00u);   // NaN
    if (a >= 0x477ff000u) return std::uint16_t(sign | 0x7c00u);  // >= 65520 (or inf): inf
    if (a < 0x38800000u) {  // below 2^-14: a multiple of 2^-24, rounded to nearest even
        const float x = bits_to_float(a) * 16777216.0f;  // exact: a power-of-two scaling
        auto m = std::uint32_t(x);
        const float frac = x - float(m);
        if (frac > 0.5f || (frac == 0.5f && (m & 1u))) ++m;
        return std::uint16_t(sign | m);  // m == 0x400 is the smallest normal, as it should be
    }
    const std::uint32_t r = a - 0x38000000u;  // rebias 127 -> 15
    return std::uint16_t(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
}

// ---- input formats: storage type, accumulator, exact load ----

enum class Format { f64, f32, bf16, fp16 };

template <Format F>
struct Fmt;
template <>
struct Fmt<Format::f64> {
    using In = double;
    using Acc = double;
    static ATTNSPEC_HD double load(double x) { return x; }
};
template <>
struct Fmt<Format::f32> {
    using In = float;
    using Acc = float;
    static ATTNSPEC_HD float load(float x) { return x; }
};
template <>
struct Fmt<Format::bf16> {
    using In = std::uint16_t;
    using Acc = float;
    static ATTNSPEC_HD float load(std::uint16_t x) { return bf16_to_float(x); }
};
template <>
struct Fmt<Format::fp16> {
    using In = std::uint16_t;
    using Acc = float;
    static ATTNSPEC_HD float load(std::uint16_t x) { return fp16_to_float(x); }
};

// ---- grid shape and the planted faults ----

ATTNSPEC_HD long chunk_count(long N) { return (N + kChunk - 1) / kChunk; }

// Tokens of chunk `chunk` that sweep `sweep` (1 or 2) reads; dropped_term leaves out the last
// token of the last chunk in sweep 2 (its score and value).
ATTNSPEC_HD long tokens_in_chunk(long N, long chunk, int sweep, int fault) {
    const long first = chunk * kChunk;
    long n = N - first < kChunk ? N - first : kChunk;
    if (fault == kFaultDroppedTerm && sweep == 2 && chunk == chunk_count(N) - 1) n -= 1;
    return n;
}

// Chunks the cross-chunk combine reads; off_by_one_tile leaves out the last.
ATTNSPEC_HD long chunks_combined(long N, int fault) {
    return fault == kFaultOffByOneTile ? chunk_count(N) - 1 : chunk_count(N);
}

// ---- phase A: one token ----

// e = ||q|| * c with c = 1/sqrt(d) (sum of squares in token order).
template <Format F>
ATTNSPEC_HD typename Fmt<F>::Acc token_energy(const typename Fmt<F>::In* q, long d,
                                              typename Fmt<F>::Acc c) {
    typename Fmt<F>::Acc ss = 0;
    for (long l = 0; l < d; ++l) {
        const typename Fmt<F>::Acc v = Fmt<F>::load(q[l]);
        ss += v * v;
    }
    return std::sqrt(ss) * c;
}

// s = max(0, c * (q_bar . k)).
template <Format F>
ATTNSPEC_HD typename Fmt<F>::Acc token_score(const typename Fmt<F>::In* k,
                                             const typename Fmt<F>::Acc* qb, long d,
                                             typename Fmt<F>::Acc c) {
    typename Fmt<F>::Acc dot = 0;
    for (long l = 0; l < d; ++l) dot += qb[l] * Fmt<F>::load(k[l]);
    const typename Fmt<F>::Acc s = c * dot;
    return s > 0 ? s : typename Fmt<F>::Acc(0);
}

// ---- phase B: the chunk's sum of the per-token values, in token order ----

template <class Acc>
ATTNSPEC_HD Acc chunk_sum(const Acc* w, long n) {
    Acc s = 0;
    for (long i = 0; i < n; ++i) s += w[i];
    return s;
}

// ---- phase C: one component over the chunk: sum_i (w_i * scale) x_il, in token order ----

template <Format F>
ATTNSPEC_HD typename Fmt<F>::Acc weighted_column(const typename Fmt<F>::In* x, long d, long l,
                                                 const typename Fmt<F>::Acc* w, long n,
                                                 typename Fmt<F>::Acc scale) {
    typename Fmt<F>::Acc acc = 0;
    for (long i = 0; i < n; ++i) acc += (w[i] * scale) * Fmt<F>::load(x[i * d + l]);
    return acc;
}

// ---- the cross-chunk combine (double, chunk order) and the per-head results ----

// partials: [chunks][stride] of Acc; returns sum over the first `chunks` rows of column l.
template <class Acc>
ATTNSPEC_HD double combine_chunks(const Acc* partials, long chunks, long stride, long l) {
    double s = 0;
    for (long b = 0; b < chunks; ++b) s += double(partials[b * stride + l]);
    return s;
}

// q_bar_l = A_l / (sum e + eps), 0 when the denominator is 0 (all-zero queries with eps = 0).
ATTNSPEC_HD double central_query(double A, double sum_e, double eps) {
    const double den = sum_e + eps;
    return den > 0 ? A / den : 0.0;
}

// p_l = gamma A_l / (sum s + eps); 0 when every score is 0 (degenerate).
ATTNSPEC_HD double pooled(double A, double sum_s, double gamma, double eps) {
    return sum_s == 0 ? 0.0 : gamma * A / (sum_s + eps);
}

}  // namespace attnspec::gpu::infsa_logic
