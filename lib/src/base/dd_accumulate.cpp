// Double-double accumulation with a proved error bound (dd_accumulate.hpp; proofs/
// spectral_enclosure.md §8). The AVX-512, AVX2 and scalar kernels perform the same IEEE operations
// on the same lanes in the same order, so they give the same bits.
#include "attnspec/base/dd_accumulate.hpp"

#include <immintrin.h>

#include <atomic>
#include <cmath>
#include <limits>

#include "attnspec/base/rounding.hpp"

namespace attnspec::dd {

namespace {

struct Lanes {
    double s[kLanes] = {}, t[kLanes] = {};
};

// One term on lane l: s -= x y exactly in (s, q), the rest into t.
inline void lane_step(double xh, double xl, double yh, double yl, double& s, double& t) {
    const double p = xh * yh;
    const double e = std::fma(xh, yh, -p);
    const double c = std::fma(xh, yl, xl * yh);
    double ns = 0, q = 0;
    two_sum(s, -p, ns, q);
    s = ns;
    t = t + ((q - e) - c);
}

// Lanes into acc in lane order.
inline void merge(const Lanes& L, Acc& acc) {
    for (int l = 0; l < kLanes; ++l) {
        double s = 0, q = 0;
        two_sum(acc.hi, L.s[l], s, q);
        acc.hi = s;
        acc.lo = acc.lo + (L.t[l] + q);
    }
}

// Terms k0 .. K-1 (k0 a multiple of kLanes) by the scalar lane step.
void tail(const double* xh, const double* xl, const double* yh, const double* yl, std::size_t k0,
          std::size_t K, Lanes& L) {
    for (std::size_t k = k0; k < K; ++k) {
        const int l = static_cast<int>(k % kLanes);
        lane_step(xh[k], xl ? xl[k] : 0.0, yh[k], yl ? yl[k] : 0.0, L.s[l], L.t[l]);
    }
}

void sub_dot_scalar(const double* xh, const double* xl, const double* yh, const double* yl,
                    std::size_t K, Lanes& L) {
    tail(xh, xl, yh, yl, 0, K, L);
}

// Four lanes per vector: lanes 0-3 in (s0, t0), 4-7 in (s1, t1).
__attribute__((target("avx2,fma"))) inline void vstep(__m256d xh, __m256d xl, __m256d yh,
                                                      __m256d yl, __m256d& s, __m256d& t) {
    const __m256d p = _mm256_mul_pd(xh, yh);
    const __m256d e = _mm256_fmsub_pd(xh, yh, p);
    const __m256d c = _mm256_fmadd_pd(xh, yl, _mm256_mul_pd(xl, yh));
    const __m256d a = _mm256_xor_pd(p, _mm256_set1_pd(-0.0));  // -p (sign flip, as scalar)
    const __m256d ns = _mm256_add_pd(s, a);
    const __m256d bb = _mm256_sub_pd(ns, s);
    const __m256d q = _mm256_add_pd(_mm256_sub_pd(s, _mm256_sub_pd(ns, bb)), _mm256_sub_pd(a, bb));
    s = ns;
    t = _mm256_add_pd(t, _mm256_sub_pd(_mm256_sub_pd(q, e), c));
}

__attribute__((target("avx2,fma"))) void sub_dot_avx2(const double* xh, const double* xl,
                                                      const double* yh, const double* yl,
                                                      std::size_t K, Lanes& L) {
    __m256d s0 = _mm256_setzero_pd(), t0 = s0, s1 = s0, t1 = s0;
    const __m256d zero = _mm256_setzero_pd();
    const std::size_t K8 = K - K % kLanes;
    for (std::size_t k = 0; k < K8; k += kLanes) {
        const __m256d xl0 = xl ? _mm256_loadu_pd(xl + k) : zero;
        const __m256d xl1 = xl ? _mm256_loadu_pd(xl + k + 4) : zero;
        const __m256d yl0 = yl ? _mm256_loadu_pd(yl + k) : zero;
        const __m256d yl1 = yl ? _mm256_loadu_pd(yl + k + 4) : zero;
        vstep(_mm256_loadu_pd(xh + k), xl0, _mm256_loadu_pd(yh + k), yl0, s0, t0);
        vstep(_mm256_loadu_pd(xh + k + 4), xl1, _mm256_loadu_pd(yh + k + 4), yl1, s1, t1);
    }
    _mm256_storeu_pd(L.s, s0);
    _mm256_storeu_pd(L.s + 4, s1);
    _mm256_storeu_pd(L.t, t0);
    _mm256_storeu_pd(L.t + 4, t1);
    tail(xh, xl, yh, yl, K8, K, L);
}

// R rows against one y, all eight lanes of a row in one vector: row r's lanes exactly as the
// scalar lane_step gives them (the same operations on the same lanes in the same order); y is
// loaded once for the R rows. R = 1 is sub_dot's AVX-512 kernel.
template <int R>
__attribute__((target("avx512f"))) void sub_dot_rows_avx512(const double* const* xh,
                                                            const double* const* xl,
                                                            const double* yh, const double* yl,
                                                            std::size_t K, Lanes* L) {
    __m512d s[R], t[R];
    for (int r = 0; r < R; ++r) s[r] = _mm512_setzero_pd(), t[r] = s[r];
    const __m512d zero = _mm512_setzero_pd(), sign = _mm512_set1_pd(-0.0);
    const std::size_t K8 = K - K % kLanes;
    for (std::size_t k = 0; k < K8; k += kLanes) {
        const __m512d vyh = _mm512_loadu_pd(yh + k);
        const __m512d vyl = yl ? _mm512_loadu_pd(yl + k) : zero;
        for (int r = 0; r < R; ++r) {
            const __m512d vxh = _mm512_loadu_pd(xh[r] + k);
            const __m512d vxl = xl[r] ? _mm512_loadu_pd(xl[r] + k) : zero;
            const __m512d p = _mm512_mul_pd(vxh, vyh);
            const __m512d e = _mm512_fmsub_pd(vxh, vyh, p);
            const __m512d c = _mm512_fmadd_pd(vxh, vyl, _mm512_mul_pd(vxl, vyh));
            const __m512d a = _mm512_castsi512_pd(
                _mm512_xor_si512(_mm512_castpd_si512(p), _mm512_castpd_si512(sign)));
            const __m512d ns = _mm512_add_pd(s[r], a);
            const __m512d bb = _mm512_sub_pd(ns, s[r]);
            const __m512d q =
                _mm512_add_pd(_mm512_sub_pd(s[r], _mm512_sub_pd(ns, bb)), _mm512_sub_pd(a, bb));
            s[r] = ns;
            t[r] = _mm512_add_pd(t[r], _mm512_sub_pd(_mm512_sub_pd(q, e), c));
        }
    }
    for (int r = 0; r < R; ++r) {
        _mm512_storeu_pd(L[r].s, s[r]);
        _mm512_storeu_pd(L[r].t, t[r]);
        tail(xh[r], xl[r], yh, yl, K8, K, L[r]);
    }
}

// Four rows' lanes into their accumulators, one row per vector element: for each row exactly
// merge's operations in merge's order (the same bits), the four TwoSum chains side by side.
__attribute__((target("avx2"))) void merge4(const Lanes* L, Acc* acc) {
    __m256d hi = _mm256_set_pd(acc[3].hi, acc[2].hi, acc[1].hi, acc[0].hi);
    __m256d lo = _mm256_set_pd(acc[3].lo, acc[2].lo, acc[1].lo, acc[0].lo);
    for (int l = 0; l < kLanes; ++l) {
        const __m256d b = _mm256_set_pd(L[3].s[l], L[2].s[l], L[1].s[l], L[0].s[l]);
        const __m256d t = _mm256_set_pd(L[3].t[l], L[2].t[l], L[1].t[l], L[0].t[l]);
        const __m256d s = _mm256_add_pd(hi, b);
        const __m256d bb = _mm256_sub_pd(s, hi);
        const __m256d q =
            _mm256_add_pd(_mm256_sub_pd(hi, _mm256_sub_pd(s, bb)), _mm256_sub_pd(b, bb));
        hi = s;
        lo = _mm256_add_pd(lo, _mm256_add_pd(t, q));
    }
    double h[4], o[4];
    _mm256_storeu_pd(h, hi);
    _mm256_storeu_pd(o, lo);
    for (int r = 0; r < 4; ++r) acc[r].hi = h[r], acc[r].lo = o[r];
}

std::atomic<int> g_cap{static_cast<int>(Kernel::avx512)};

bool have_avx512() {
    static const bool ok = __builtin_cpu_supports("avx512f");
    return ok && g_cap.load(std::memory_order_relaxed) >= static_cast<int>(Kernel::avx512);
}

bool have_avx2() {
    static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return ok && g_cap.load(std::memory_order_relaxed) >= static_cast<int>(Kernel::avx2);
}

}  // namespace

void sub_dot(const double* xh, const double* xl, const double* yh, const double* yl, std::size_t K,
             Acc& acc) {
    Lanes L;
    if (have_avx512())
        sub_dot_rows_avx512<1>(&xh, &xl, yh, yl, K, &L);
    else if (have_avx2())
        sub_dot_avx2(xh, xl, yh, yl, K, L);
    else
        sub_dot_scalar(xh, xl, yh, yl, K, L);
    merge(L, acc);
}

void sub_dot_rows(const double* const* xh, const double* const* xl, int rows, const double* yh,
                  const double* yl, std::size_t K, Acc* acc) {
    if (rows == kMaxRows && have_avx512()) {
        Lanes L[kMaxRows];
        sub_dot_rows_avx512<kMaxRows>(xh, xl, yh, yl, K, L);
        static_assert(kMaxRows == 4, "merge4 merges four rows");
        merge4(L, acc);
        return;
    }
    for (int r = 0; r < rows; ++r) sub_dot(xh[r], xl[r], yh, yl, K, acc[r]);
}

void sub_dot_blocked_rows(const double* const* xh, const double* const* xl, int rows,
                          const double* yh, const double* yl, std::size_t K, Acc* acc) {
    if (rows < 1 || rows > kMaxRows) {
        for (int r = 0; r < rows; ++r) sub_dot_blocked(xh[r], xl[r], yh, yl, K, acc[r]);
        return;
    }
    const std::size_t B = block_size(K);
    const double* bxh[kMaxRows] = {};
    const double* bxl[kMaxRows] = {};
    if (K == 0) {
        for (int r = 0; r < rows; ++r) bxh[r] = xh[r], bxl[r] = xl[r];
        sub_dot_rows(bxh, bxl, rows, yh, yl, 0, acc);
    }
    for (std::size_t k0 = 0; k0 < K; k0 += B) {
        const std::size_t len = K - k0 < B ? K - k0 : B;
        for (int r = 0; r < rows; ++r) bxh[r] = xh[r] + k0, bxl[r] = xl[r] ? xl[r] + k0 : nullptr;
        sub_dot_rows(bxh, bxl, rows, yh + k0, yl ? yl + k0 : nullptr, len, acc);
    }
}

void sub_prod(double xh, double xl, double yh, double yl, Acc& acc) {
    double s = acc.hi, t = acc.lo;
    lane_step(xh, xl, yh, yl, s, t);
    acc.hi = s, acc.lo = t;
}

std::size_t block_size(std::size_t K) {
    // minimises ceil(B / 8) + 16 ceil(K / B): B ~ sqrt(128 K), a multiple of kLanes, >= 64
    const auto b = static_cast<std::size_t>(std::ceil(std::sqrt(128.0 * static_cast<double>(K))));
    const std::size_t r = (b + kLanes - 1) / kLanes * kLanes;
    return r < 64 ? 64 : r;
}

void sub_dot_blocked(const double* xh, const double* xl, const double* yh, const double* yl,
                     std::size_t K, Acc& acc) {
    const std::size_t B = block_size(K);
    if (K == 0) sub_dot(xh, xl, yh, yl, 0, acc);
    for (std::size_t k0 = 0; k0 < K; k0 += B) {
        const std::size_t len = K - k0 < B ? K - k0 : B;
        sub_dot(xh + k0, xl ? xl + k0 : nullptr, yh + k0, yl ? yl + k0 : nullptr, len, acc);
    }
}

double blocked_height(std::size_t K, int extra) {
    const std::size_t B = block_size(K);
    const std::size_t calls = K == 0 ? 1 : (K + B - 1) / B;
    return tree_height(K < B ? K : B, static_cast<int>(calls), extra);
}

double tree_height(std::size_t K, int dot_calls, int extra) {
    const std::size_t per_lane = (K + kLanes - 1) / kLanes;  // the longest lane chain (ceiling)
    return static_cast<double>(per_lane) + 2.0 * kLanes * dot_calls + 2.0 * extra + 2;
}

double error_constant(double H) {
    const double u = kUnitRoundoff;
    if (!(H * u <= std::ldexp(1.0, -30))) return std::numeric_limits<double>::infinity();
    return 1.001 * (H + 3) * (H + 3) * u * u;
}

void cap_kernel(Kernel k) { g_cap.store(static_cast<int>(k), std::memory_order_relaxed); }

const char* kernel_name() { return have_avx512() ? "avx512" : have_avx2() ? "avx2-fma" : "scalar"; }

}  // namespace attnspec::dd
