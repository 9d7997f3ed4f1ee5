// Double-double accumulation for the certified sigma_min of proofs/spectral_enclosure.md §8:
// acc -= sum_k x_k y_k with x_k, y_k double-double (hi + lo, |lo| <= u |hi|, or lo absent) into an
// unevaluated pair acc = (hi, lo), with a proved bound on the error of the exact real hi + lo.
//
// Algorithm (fixed, so its bound and its bits are the same on every CPU and thread count): kLanes
// lanes, lane l takes the terms k = l, l + kLanes, ...; per term p = fl(x_h y_h),
// e = fma(x_h, y_h, -p) (exact error), c = fma(x_h, y_l, fl(x_l y_h)) (cross terms),
// (s, q) = TwoSum(s, -p) (exact), t = fl(t + fl(fl(q - e) - c)). The lanes are then added to acc in
// lane order, acc.hi by TwoSum, its errors and the lanes' t to acc.lo. AVX-512 (one vector of eight
// lanes) or AVX2 + FMA (two of four) when the CPU has them, else the same operations in scalar code
// (std::fma): the results are identical bit for bit.
#pragma once
#include <cmath>
#include <cstddef>

namespace attnspec::dd {

constexpr int kLanes = 8;

struct Acc {
    double hi = 0, lo = 0;  // the value is the exact real hi + lo (unevaluated)
};

// acc -= sum_{k < K} (xh[k] + xl[k]) (yh[k] + yl[k]); xl or yl may be null (zero low parts).
void sub_dot(const double* xh, const double* xl, const double* yh, const double* yl, std::size_t K,
             Acc& acc);

// acc -= (xh + xl)(yh + yl), one more term on the same accumulator (appends to its chain).
void sub_prod(double xh, double xl, double yh, double yl, Acc& acc);

// (s, e) with s + e = a + b exactly (Knuth's TwoSum), |e| <= u |s|.
inline void two_sum(double a, double b, double& s, double& e) {
    s = a + b;
    const double bb = s - a;
    e = (a - (s - bb)) + (b - bb);
}

// (p, e) with p + e = a b exactly (p = fl(a b), e by one fma), barring underflow.
inline void two_prod(double a, double b, double& p, double& e) {
    p = a * b;
    e = std::fma(a, b, -p);
}

// (zh, zl) ~ (a.hi + a.lo) / (dh + dl) in double-double: one Newton correction of the double
// quotient, renormalised (|zl| <= u |zh|). Not error-free: callers that need a bound carry the
// residual a - z d on their own chain.
inline void divide(const Acc& a, double dh, double dl, double& zh, double& zl) {
    const double q1 = (a.hi + a.lo) / dh;
    double p = 0, e = 0;
    two_prod(q1, dh, p, e);
    const double r = ((a.hi - p) - e) + (a.lo - q1 * dl);
    two_sum(q1, r / dh, zh, zl);
}

// (zh, zl) ~ sqrt(a.hi + a.lo) in double-double (a.hi + a.lo > 0): one Newton correction of the
// double square root, renormalised. Not error-free, as divide.
inline void sqrt(const Acc& a, double& zh, double& zl) {
    const double h = std::sqrt(a.hi + a.lo);
    double p = 0, e = 0;
    two_prod(h, h, p, e);
    const double r = ((a.hi - p) - e) + a.lo;
    two_sum(h, r / (2 * h), zh, zl);
}

// sub_dot over K terms in blocks of block_size(K) (one sub_dot call each): the trees' height drops
// from ~K/8 to ~2 sqrt(2 K) (blocked_height), and the bound with its square.
std::size_t block_size(std::size_t K);
void sub_dot_blocked(const double* xh, const double* xl, const double* yh, const double* yl,
                     std::size_t K, Acc& acc);
// Up to kMaxRows rows x_r against one y: acc[r] exactly as sub_dot(xh[r], xl[r], yh, yl, K,
// acc[r]) (resp. sub_dot_blocked) gives it, bit for bit; with kMaxRows rows and AVX-512 the rows
// share y's loads (one pass over y instead of `rows`).
constexpr int kMaxRows = 4;
void sub_dot_rows(const double* const* xh, const double* const* xl, int rows, const double* yh,
                  const double* yl, std::size_t K, Acc* acc);
void sub_dot_blocked_rows(const double* const* xh, const double* const* xl, int rows,
                          const double* yh, const double* yl, std::size_t K, Acc* acc);
// tree_height of sub_dot_blocked over K terms followed by `extra` sub_prod calls.
double blocked_height(std::size_t K, int extra);

// Height of the summation trees of one accumulator after sub_dot calls totalling K terms, the
// lane merges they cost and `extra` sub_prod calls: the H of error_constant.
double tree_height(std::size_t K, int dot_calls, int extra);

// The accumulation lemma (proofs/spectral_enclosure.md §8): with sigma0 + tau0 the initial acc and
// P = sum_k |x_h,k y_h,k|, the computed hi + lo differs from sigma0 + tau0 - sum_k x_k y_k by at
// most
//   error_constant(H) (|sigma0| + P) + gamma_H |tau0| + 4 (K + 2) 2^-1074   (H = tree_height).
// error_constant(H) = 1.001 (H + 3)^2 u^2; valid for H u <= 2^-30 (infinity beyond).
double error_constant(double H);

// Which kernel runs here: "avx512", "avx2-fma" or "scalar" (same results).
const char* kernel_name();
// Tests and benchmarks: use at most this kernel (process-wide; avx512 = the best available).
enum class Kernel { scalar = 0, avx2 = 1, avx512 = 2 };
void cap_kernel(Kernel k);

}  // namespace attnspec::dd
