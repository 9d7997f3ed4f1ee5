// What double-double arithmetic costs here (issue 13, certified kappa(J) at the ViT-B head):
// proofs/spectral_enclosure.md §6-§7 show that a certificate of relative width 1e-6 at
// kappa = 1.486e7 needs products, Gram and Cholesky in double-double; this bench measures how fast
// this machine can do the Cholesky's inner operation, c -= a * b with a, b, c double-double
// (error-free FMA product, accurate two-sum addition, renormalisation), against the same loop in
// double, and the rate of OpenBLAS's dgemm and dpotrf. It prints the time the n^3/6 multiply-adds
// of a double-double Cholesky of the ViT-B Gram (n = 12608) take at the kernel's rate (registers
// only: a Cholesky built on it would also move memory) and its ratio to the time budget of the
// issue's target (2x the uncertified run, 2 x 142 s). Then it times the library's double-double
// certificate (its Gram and one factorization, proofs/spectral_enclosure.md §8) at n = 1024, 2048
// and 4096 and extrapolates the factorization to the ViT-B Gram, and times the factorization at
// n = 4096 with its rows one at a time against four rows sharing each pass. Not measured: other
// routes, e.g. products made exact by Ozaki splitting into several dgemm calls.
//
// usage: bench_dd_rate [--threads T] [--reps R]   (default: every core, 5 repetitions)
//        bench_dd_rate --gram-n N [--threads T] [--reps R]: only one factorization of a synthetic
//          double-double Gram of order N (N = 12608: the ViT-B head's; ~3 GB and 3-4 min per
//          factorization on 2 cores) with four rows per pass and with one, alternating R times
//          (default 1), and their ratio
//        bench_dd_rate --efficiency N [--reps R]: one thread; the factorization of that Gram
//          against the four-row kernel with its operands in cache, the same number of
//          multiply-adds, alternating R times (default 3): the fraction of the kernel's rate the
//          factorization reaches (N = 7000: ~50 s per factorization)
#include <immintrin.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/base/dd_accumulate.hpp"
#include "attnspec/base/parallel.hpp"
#include "attnspec/spectral/certified.hpp"
#include "bench_common.hpp"

extern "C" {
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
            const double*, const int*, const double*, const int*, const double*, double*,
            const int*);
void dpotrf_(const char*, const int*, double*, const int*, int*);
}

namespace {

// Register-resident kernels (AVX-512, 8 lanes per vector): K independent accumulators, so the
// dependence chain of one accumulator does not bound the rate.
constexpr int kChains = 6;
using V = __m512d;

// c -= a * b in double-double, `rounds` times on kChains x 8 lanes. Ops per update (each a vector
// add, sub, mul or fma on one port): product 4 (mul, 3 fma: the FMA's exact error and the two
// cross terms), accurate addition 20 (two two-sums 12, renormalisation 8): kOpsPerDd = 24.
constexpr double kOpsPerDd = 24;
__attribute__((target("avx512f,fma"))) double dd_kernel(long rounds, unsigned seed) {
    V ah[kChains], al[kChains], bh[kChains], bl[kChains], ch[kChains], cl[kChains];
    for (int k = 0; k < kChains; ++k) {
        const double x = 1e-4 * (1 + 0.01 * (k + seed));
        ah[k] = _mm512_set1_pd(x), al[k] = _mm512_set1_pd(x * 1e-17);
        bh[k] = _mm512_set1_pd(x * 0.7), bl[k] = _mm512_set1_pd(x * 0.7e-17);
        ch[k] = _mm512_set1_pd(1.0 + k), cl[k] = _mm512_set1_pd(1e-17);
    }
    for (long r = 0; r < rounds; ++r)
        for (int k = 0; k < kChains; ++k) {
            const V p = _mm512_mul_pd(ah[k], bh[k]);  // a*b = p + e, then negated
            V e = _mm512_fmsub_pd(ah[k], bh[k], p);
            e = _mm512_fmadd_pd(ah[k], bl[k], e);
            e = _mm512_fmadd_pd(al[k], bh[k], e);
            const V s = _mm512_sub_pd(ch[k], p);  // two-sum of ch and -p
            const V bb = _mm512_sub_pd(s, ch[k]);
            const V se =
                _mm512_sub_pd(_mm512_sub_pd(ch[k], _mm512_sub_pd(s, bb)), _mm512_add_pd(p, bb));
            const V t = _mm512_sub_pd(cl[k], e);  // two-sum of cl and -e
            const V bt = _mm512_sub_pd(t, cl[k]);
            const V te =
                _mm512_sub_pd(_mm512_sub_pd(cl[k], _mm512_sub_pd(t, bt)), _mm512_add_pd(e, bt));
            V lo = _mm512_add_pd(se, t);  // renormalise
            V q = _mm512_add_pd(s, lo);
            lo = _mm512_sub_pd(lo, _mm512_sub_pd(q, s));
            lo = _mm512_add_pd(lo, te);
            const V q2 = _mm512_add_pd(q, lo);
            cl[k] = _mm512_sub_pd(lo, _mm512_sub_pd(q2, q));
            ch[k] = q2;
        }
    alignas(64) double lanes[8];
    double sink = 0;
    for (int k = 0; k < kChains; ++k) {
        _mm512_store_pd(lanes, _mm512_add_pd(ch[k], cl[k]));
        for (double x : lanes) sink += x;
    }
    return sink;
}

// 12 independent FMA chains (enough to cover the FMA latency on two ports): the FMA rate, for
// scale.
__attribute__((target("avx512f,fma"))) double fma_kernel(long rounds, unsigned seed) {
    constexpr int kAcc = 12;
    V c[kAcc];
    const V a = _mm512_set1_pd(0.999999), b = _mm512_set1_pd(1e-9 * (1 + seed));
    for (int k = 0; k < kAcc; ++k) c[k] = _mm512_set1_pd(1.0 + k);
    for (long r = 0; r < rounds; ++r)
        for (V& ck : c) ck = _mm512_fmadd_pd(ck, a, b);
    alignas(64) double lanes[8];
    double sink = 0;
    for (const V& ck : c) {
        _mm512_store_pd(lanes, ck);
        for (double x : lanes) sink += x;
    }
    return sink;
}

// Lane operations per second over `threads` threads: dd multiply-adds (dd) or FMAs.
double rate(int threads, long rounds, bool dd) {
    std::vector<double> sink(static_cast<size_t>(threads));
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    pool.reserve(static_cast<size_t>(threads));
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            sink[static_cast<size_t>(t)] = dd ? dd_kernel(rounds, static_cast<unsigned>(t))
                                              : fma_kernel(rounds, static_cast<unsigned>(t));
        });
    for (auto& th : pool) th.join();
    const double s = attnspec::bench::seconds_since(t0);
    double all = 0;
    for (double x : sink) all += x;
    if (!std::isfinite(all)) std::printf("(non-finite lanes)\n");
    const double per_round = dd ? kChains * 8.0 : 12 * 8.0;
    return static_cast<double>(threads) * per_round * static_cast<double>(rounds) / s;
}

// A synthetic double-double Gram of order n: unit-interval off-diagonal entries, diagonal
// 4 sqrt(n) + 10 (positive definite, so every column is factored).
attnspec::DdGram synthetic_gram(long n) {
    attnspec::DdGram g;
    g.n = n;
    g.hi.assign(static_cast<std::size_t>(n * n), 0.0);
    g.lo.assign(g.hi.size(), 0.0);
    g.source = "synthetic";
    std::mt19937_64 gen(3);
    std::uniform_real_distribution<double> unit(-1, 1);
    for (long i = 0; i < n; ++i) {
        for (long j = 0; j < i; ++j) g.hi[static_cast<std::size_t>(i * n + j)] = unit(gen);
        g.hi[static_cast<std::size_t>(i * n + i)] = 4.0 * std::sqrt(static_cast<double>(n)) + 10;
    }
    return g;
}

// Options for one factorization only (certify_gram_dd, one attempt, no Temple).
attnspec::DdCertifyOptions one_factorization(int threads) {
    attnspec::DdCertifyOptions o;
    o.threads = threads;
    o.max_attempts = 1;
    o.temple = false;
    o.max_bytes = 64.0 * (1ull << 30);
    return o;
}

// One factorization of that Gram with four rows per pass against one, alternating.
int factor_rows_bench(long n, int threads, int reps) {
    const attnspec::DdGram g = synthetic_gram(n);
    const attnspec::DdCertifyOptions o = one_factorization(threads);
    std::printf("[setup] synthetic double-double Gram n = %ld, %d threads, %s kernel\n", n, threads,
                attnspec::dd::kernel_name());
    std::vector<double> t4, t1;
    bool same = true;
    for (int k = 0; k < reps; ++k) {
        attnspec::set_factor_row_group(attnspec::dd::kMaxRows);
        const auto a = attnspec::certify_gram_dd(g, 1.0, {}, o);
        attnspec::set_factor_row_group(1);
        const auto b = attnspec::certify_gram_dd(g, 1.0, {}, o);
        attnspec::set_factor_row_group(attnspec::dd::kMaxRows);
        t4.push_back(a.seconds_chol), t1.push_back(b.seconds_chol);
        same = same && a.certified && b.certified && a.lambda_lo == b.lambda_lo && a.rho == b.rho;
        std::printf("  rep %d: %d rows per pass %.2f s, one row %.2f s\n", k + 1,
                    attnspec::dd::kMaxRows, a.seconds_chol, b.seconds_chol);
        std::fflush(stdout);
    }
    const double m4 = attnspec::bench::median(t4), m1 = attnspec::bench::median(t1);
    std::printf(
        "factorization n = %ld: one row per pass %.2f s, %d rows per pass %.2f s (medians of %d): "
        "ratio %.2fx; certified with the same bits: %s\n",
        n, m1, attnspec::dd::kMaxRows, m4, reps, m1 / m4, same ? "yes" : "NO (a bug)");
    return same ? 0 : 1;
}

// The factorization's rate against the four-row kernel's with its operands in cache, on one
// thread, alternating: how much of the kernel's rate the factorization's memory traffic and
// per-entry work leave. The kernel runs sub_dot_rows over K = 1024 terms (four rows and one y,
// 40 KB: L1/L2) as many times as the factorization has multiply-adds (n^3/6).
int efficiency_bench(long n, int reps) {
    const attnspec::DdGram g = synthetic_gram(n);
    const attnspec::DdCertifyOptions o = one_factorization(1);
    attnspec::set_factor_row_group(attnspec::dd::kMaxRows);
    constexpr std::size_t kK = 1024;
    std::mt19937_64 gen(5);
    std::uniform_real_distribution<double> unit(-1, 1);
    std::vector<double> xh(4 * kK), xl(4 * kK), yh(kK), yl(kK);
    for (std::size_t i = 0; i < xh.size(); ++i) xh[i] = unit(gen), xl[i] = xh[i] * 1e-17;
    for (std::size_t i = 0; i < kK; ++i) yh[i] = unit(gen), yl[i] = yh[i] * 1e-17;
    const double* ph[4] = {&xh[0], &xh[kK], &xh[2 * kK], &xh[3 * kK]};
    const double* pl[4] = {&xl[0], &xl[kK], &xl[2 * kK], &xl[3 * kK]};
    const double terms =
        static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / 6;
    const auto calls = static_cast<long>(terms / (4.0 * kK));
    std::printf(
        "[setup] synthetic double-double Gram n = %ld, 1 thread, %s kernel, %d rows per pass\n", n,
        attnspec::dd::kernel_name(), attnspec::dd::kMaxRows);
    std::vector<double> rf, rk;
    double sink = 0;
    for (int k = 0; k < reps; ++k) {
        const auto a = attnspec::certify_gram_dd(g, 1.0, {}, o);
        attnspec::dd::Acc acc[4];
        const auto t0 = std::chrono::steady_clock::now();
        for (long c = 0; c < calls; ++c)
            attnspec::dd::sub_dot_rows(ph, pl, 4, yh.data(), yl.data(), kK, acc);
        const double tk = attnspec::bench::seconds_since(t0);
        if (!a.certified) {  // a factorization that stopped early did not do n^3/6 updates
            std::fprintf(stderr, "bench_dd_rate: the synthetic Gram's factorization failed\n");
            return 1;
        }
        sink += acc[0].hi;
        rf.push_back(terms / a.seconds_chol);
        rk.push_back(4.0 * kK * static_cast<double>(calls) / tk);
        std::printf(
            "  rep %d: factorization %.2f s (%.3g multiply-adds/s), kernel in cache %.2f s "
            "(%.3g/s)\n",
            k + 1, a.seconds_chol, rf.back(), tk, rk.back());
        std::fflush(stdout);
    }
    const double mf = attnspec::bench::median(rf), mk = attnspec::bench::median(rk);
    std::printf(
        "factorization n = %ld at %.3g multiply-adds/s = %.2f of the in-cache kernel's %.3g/s "
        "(medians of %d, one thread)%s\n",
        n, mf, mf / mk, mk, reps, std::isfinite(sink) ? "" : " (non-finite)");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    attnspec::select_blas_kernels(argc, argv);
    int threads = attnspec::available_threads(), reps = 0;
    long gram_n = 0, eff_n = 0;
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            std::printf(
                "usage: bench_dd_rate [--threads T] [--reps R]          the kernel, BLAS rates, "
                "the certificate at n = 1024..4096\n"
                "       bench_dd_rate --gram-n N [--threads T] [--reps R]  one factorization of "
                "order N, four rows per pass against one\n"
                "       bench_dd_rate --efficiency N [--reps R]        one thread: the "
                "factorization against the in-cache kernel\n");
            return 0;
        }
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--threads") == 0) threads = std::atoi(argv[i + 1]);
        if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
        if (std::strcmp(argv[i], "--gram-n") == 0) gram_n = std::atol(argv[i + 1]);
        if (std::strcmp(argv[i], "--efficiency") == 0) eff_n = std::atol(argv[i + 1]);
    }
    if (reps == 0) reps = gram_n > 0 ? 1 : eff_n > 0 ? 3 : 5;
    if (threads < 1 || reps < 1 || gram_n < 0 || gram_n > 40000 || eff_n < 0 || eff_n > 40000 ||
        (gram_n > 0 && eff_n > 0)) {
        std::fprintf(stderr,
                     "usage: bench_dd_rate [--threads T >= 1] [--reps R >= 1] [--gram-n N in "
                     "1..40000 | --efficiency N in 1..40000]\n");
        return 64;
    }
    if (gram_n > 0) return factor_rows_bench(gram_n, threads, reps);
    if (eff_n > 0) return efficiency_bench(eff_n, reps);
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("fma")) {
        std::fprintf(stderr, "bench_dd_rate: this CPU lacks AVX-512F or FMA (the kernel's ISA)\n");
        return 69;
    }
    const auto info = attnspec::blas_info();
    double load = -1;
    if (FILE* f = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(f, "%lf", &load) != 1) load = -1;
        std::fclose(f);
    }
    std::printf("[setup] %d threads; BLAS %s, core %s; 1-minute load %.2f\n", threads,
                info.library.c_str(), info.core.c_str(), load);
    std::vector<double> dd, fma;
    for (int k = 0; k < reps; ++k) {  // alternating
        dd.push_back(rate(threads, 4000000, true));
        fma.push_back(rate(threads, 40000000, false));
    }
    const double rdd = attnspec::bench::median(dd), rfma = attnspec::bench::median(fma);
    std::printf(
        "double-double c -= a*b: %.3g /s (%.0f vector ops each: %.3g ops/s); an "
        "FMA-only kernel: %.3g FMAs/s (medians of %d; adds may issue on more units than "
        "FMAs, so this is no peak)\n",
        rdd, kOpsPerDd, rdd * kOpsPerDd, rfma, reps);

    // OpenBLAS on the same threads: dgemm and dpotrf at n = 2048 (flop rates)
    attnspec::set_blas_threads(threads);
    const int n = 2048;
    std::vector<double> A(static_cast<size_t>(n) * n), B(A.size()), C(A.size());
    std::mt19937_64 g(7);
    std::normal_distribution<double> z;
    for (auto& x : A) x = z(g);
    for (auto& x : B) x = z(g);
    const double one = 1, zero = 0;
    const double tg = attnspec::bench::median_of(reps, [&] {
        dgemm_("N", "T", &n, &n, &n, &one, A.data(), &n, B.data(), &n, &zero, C.data(), &n);
    });
    // SPD: C = A A^T + n I
    dgemm_("N", "T", &n, &n, &n, &one, A.data(), &n, A.data(), &n, &zero, C.data(), &n);
    for (int i = 0; i < n; ++i) C[static_cast<size_t>(i) * n + i] += n;
    std::vector<double> F(C.size());
    const double tp = attnspec::bench::median_of(reps, [&] {
        F = C;
        int info_ = 0;
        dpotrf_("L", &n, F.data(), &n, &info_);
        if (info_ != 0) std::printf("(dpotrf info %d)\n", info_);
    });
    const double nn = n;
    const double gemm_madds = nn * nn * nn / tg, potrf_madds = nn * nn * nn / 6 / tp;
    std::printf("OpenBLAS n = %d: dgemm %.3g multiply-adds/s, dpotrf %.3g multiply-adds/s\n", n,
                gemm_madds, potrf_madds);

    const double N = 12608;  // the ViT-B head's Gram: N = 197 x 64
    // a Cholesky is n^3 / 3 flops: n^3 / 6 multiply-adds (an earlier version counted n^3 / 3)
    const double madds = N * N * N / 6;
    const double t_d = madds / potrf_madds, t_kernel = madds / rdd;
    const double budget = 2 * 142;
    std::printf(
        "Cholesky of the ViT-B Gram (n = 12608, n^3/6 = %.3g multiply-adds): double at "
        "dpotrf's rate %.0f s; double-double at this kernel's rate %.0f s = %.2fx the "
        "target's whole budget of %.0f s (2 x the 142 s uncertified run), before memory "
        "traffic, the double-double Gram and the products\n",
        madds, t_d, t_kernel, t_kernel / budget, budget);

    // The library's certificate (spectral/certified.hpp §8) on Gaussian rows n x 1.25 n: its
    // Gram (n^2 m / 2 multiply-adds) and one factorization (n^3 / 6) with memory traffic, cache
    // blocking and the per-entry bounds, timed apart; the factorization extrapolated (n^3) to the
    // ViT-B Gram. The shift is half the Marchenko-Pastur edge (sqrt(m) - sqrt(n))^2, below
    // lambda_min of these Grams: one factorization, certified.
    std::printf("certify_lambda_min_dd (%s kernel, %d threads):\n", attnspec::dd::kernel_name(),
                threads);
    const auto gaussian_rows = [&](int cn) {
        Eigen::MatrixXd Rt(cn + cn / 4, cn);
        for (Eigen::Index j = 0; j < Rt.cols(); ++j)
            for (Eigen::Index i = 0; i < Rt.rows(); ++i) Rt(i, j) = z(g);
        return Rt;
    };
    const auto certify = [&](const Eigen::MatrixXd& Rt) {
        attnspec::DdCertifyOptions o;
        o.threads = threads;
        o.max_attempts = 1;
        const double edge =
            std::sqrt(static_cast<double>(Rt.rows())) - std::sqrt(static_cast<double>(Rt.cols()));
        return attnspec::certify_lambda_min_dd(Rt, 0.5 * edge * edge, {}, o);
    };
    double last_n = 0, last_factor = 0;
    for (int cn : {1024, 2048, 4096}) {
        const Eigen::MatrixXd Rt = gaussian_rows(cn);
        const auto r = certify(Rt);
        const double dn = cn, dm = static_cast<double>(Rt.rows());
        std::printf(
            "  n = %d, m = %d: Gram %.2f s (%.3g multiply-adds/s), factorization %.2f s (%.3g "
            "multiply-adds/s)%s\n",
            cn, static_cast<int>(Rt.rows()), r.seconds_gram, dn * dn * dm / 2 / r.seconds_gram,
            r.seconds_chol, dn * dn * dn / 6 / r.seconds_chol,
            r.certified ? "" : " (no certificate)");
        last_n = dn, last_factor = r.seconds_chol;
    }
    // The factorization's rows one at a time (set_factor_row_group(1), each row's dot makes its
    // own pass over the column's factor row) against dd::kMaxRows rows sharing each pass (the
    // default): alternating, the same Gram, medians; both must give the same bits.
    {
        const Eigen::MatrixXd Rt = gaussian_rows(4096);
        std::vector<double> t1, t4;
        double lo1 = 0, lo4 = 0;
        for (int k = 0; k < reps; ++k) {
            attnspec::set_factor_row_group(1);
            const auto a = certify(Rt);
            attnspec::set_factor_row_group(attnspec::dd::kMaxRows);
            const auto b = certify(Rt);
            t1.push_back(a.seconds_chol), t4.push_back(b.seconds_chol);
            lo1 = a.lambda_lo, lo4 = b.lambda_lo;
        }
        const double m1 = attnspec::bench::median(t1), m4 = attnspec::bench::median(t4);
        std::printf(
            "  n = 4096 factorization, rows one at a time %.2f s, %d rows sharing each pass %.2f s "
            "(medians of %d, alternating): ratio %.2fx; lambda_lo %s\n",
            m1, attnspec::dd::kMaxRows, m4, reps, m1 / m4,
            lo1 == lo4 ? "the same bits" : "DIFFERS (a bug)");
    }
    const double scale = N / last_n;
    std::printf(
        "  factorization of the ViT-B Gram (n = 12608) extrapolated from n = %.0f (n^3): %.0f s "
        "= %.2fx the target's whole budget of %.0f s; its Gram would come from the head's "
        "factors (from rows: 1.5e10 doubles of J, not built)\n",
        last_n, last_factor * scale * scale * scale, last_factor * scale * scale * scale / budget,
        budget);
    return 0;
}
