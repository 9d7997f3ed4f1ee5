// InfSA performance targets (issue 6), each measured side by side with its peer or limit:
//   cv      C V at N = 4096, d_h = 64 (affinity + LU + solves) vs 2 s and numpy's inv of I - gamma
//   Â perron  certified left Perron vector, matrix-free, N = 65,536, d_h = 64 vs 3 min and 1 GB
//   linear  Linear-InfSA f32, N = 331,776 tokens, 16 heads x d_h 64 vs a plain read of the same
//   bytes
// usage: bench_infsa [cv|perron|linear]... [--n N] [--threads T] [--reps R]   (default: all three)
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/infsa/affinity.hpp"
#include "attnspec/infsa/fidelity.hpp"
#include "attnspec/infsa/linear_infsa.hpp"
#include "attnspec/infsa/neumann.hpp"
#include "attnspec/infsa/perron.hpp"
#include "bench_common.hpp"

using namespace attnspec;
using Clock = std::chrono::steady_clock;

namespace {

using bench::median;
using bench::seconds_since;
double peak_rss_gib() { return bench::max_rss_bytes() / (1024.0 * 1024.0 * 1024.0); }

// numpy peer: median seconds of np.linalg.inv(I - gamma A) for a same-size ReLU/Frobenius affinity.
double numpy_inv_seconds(long n, int reps) {
    return bench::python_peer_seconds(
        "import numpy as np,time\n"
        "rng=np.random.default_rng(1);N=" +
        std::to_string(n) +
        ";Q=rng.standard_normal((N,64));K=rng.standard_normal((N,64))\n"
        "A=np.maximum(Q@K.T/64,0);A/=np.linalg.norm(A)+1e-6;M=np.eye(N)-0.95*A;ts=[]\n"
        "for r in range(" +
        std::to_string(reps) +
        "):\n t=time.perf_counter();np.linalg.inv(M);ts.append(time.perf_counter()-t)\n"
        "print(sorted(ts)[len(ts)//2])");
}

void bench_cv(long n, int reps) {
    Eigen::MatrixXd Q, K;
    draw_family("gaussian", n, 64, 0, 1, Q, K);
    const Eigen::MatrixXd V = Rng(2).gaussian(n, 64);
    std::vector<double> t_all, t_aff, t_lu, t_solve, t_mixed;
    double check = 0, diff = 0;
    int iters = 0;
    for (int r = 0; r < reps; ++r) {
        auto t0 = Clock::now();
        const Affinity A = affinity(Q, K);
        const double ta = seconds_since(t0);
        auto t1 = Clock::now();
        const NeumannKernel nk(A.A_hat, 0.95);
        const double tl = seconds_since(t1);
        auto t2 = Clock::now();
        const Eigen::MatrixXd CV = nk.closure_times(V);
        const double ts = seconds_since(t2);
        t_all.push_back(seconds_since(t0)), t_aff.push_back(ta), t_lu.push_back(tl),
            t_solve.push_back(ts);
        check = CV.norm();
        auto t3 = Clock::now();
        const Affinity A2 = affinity(Q, K);
        const Eigen::MatrixXd CV2 = closure_times_mixed(A2.A_hat, 0.95, V, &iters);
        t_mixed.push_back(seconds_since(t3));
        diff = (CV2 - CV).norm() / CV.norm();
    }
    const double dbl = median(t_all), ours = median(t_mixed);
    const double peer = numpy_inv_seconds(n, reps);
    std::printf(
        "[cv] N=%ld d_h=64, %d reps: double LU path median %.3f s (affinity %.3f, LU %.3f, solves "
        "%.3f), ||CV||_F=%.6g\n",
        n, reps, dbl, median(t_aff), median(t_lu), median(t_solve), check);
    std::printf(
        "[cv] mixed path (affinity + dsgesv, %d refinement steps) median %.3f s, rel. difference "
        "to the double path %.2e\n",
        iters, ours, diff);
    std::printf(
        "[cv] target 2 s: ratio %.2f (<= 1 meets it); numpy inv(I - gamma A) alone %.3f s: "
        "numpy/ours = %.2fx\n",
        ours / 2.0, peer, peer / ours);
    // The issue quotes numpy inv at 4.9 s on an idle machine, so the 2 s target is numpy/ours >=
    // 2.45 measured side by side; the load-independent form on a shared machine.
    std::printf(
        "[cv] side-by-side form of the target: numpy/ours %.2f vs required 4.9/2 = 2.45 -> %s\n",
        peer / ours, peer / ours >= 2.45 ? "met" : "not met");
}

void bench_perron(long n, const std::string& family) {
    Eigen::MatrixXd Q, K;
    draw_family(family, n, 64, 1.0, 3, Q, K);
    auto t0 = Clock::now();
    const Fidelity f = fidelity_matrix_free(Q, K, 0.95);
    const double t = seconds_since(t0);
    std::printf(
        "[perron] N=%ld d_h=64 family=%s: %.1f s, %d passes (||A+||_F accumulated in the first), "
        "peak RSS %.3f GiB\n",
        n, family.c_str(), t, f.left.iterations, peak_rss_gib());
    std::printf(
        "[perron] rho(A_hat) in [%.15g, %.15g] (rel width %.2e, converged %s), vec error est %.2e, "
        "cos(a, v_left) = %.6f\n",
        f.rho_hat.lo, f.rho_hat.hi, (f.rho_hat.hi - f.rho_hat.lo) / f.rho_hat.hi,
        f.left.converged ? "yes" : "no", f.left.vec_error, f.cos_left);
    std::printf(
        "[perron] targets 180 s and 1 GiB: time ratio %.2f, memory ratio %.2f (<= 1 meets them)\n",
        t / 180.0, peak_rss_gib() / 1.0);
}

// Plain read of the same bytes with the same thread split (the memory-bandwidth limit).
__attribute__((target_clones("avx2", "default"))) float read_sum(const float* x, long n) {
    float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    long i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; ++l) s[l] += x[i + l];
    for (; i < n; ++i) s[0] += x[i];
    return s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
}

void bench_linear(long N, int threads, int reps) {
    const long H = 16, d = 64, per = N * d;
    std::vector<float> Q(size_t(H * per)), K(Q.size()), V(Q.size()), P(size_t(H * d));
    // Cheap seeded fill (xorshift, uniform in [-1, 1) plus a shared offset): 10^9 values.
    std::uint64_t st = 0x9E3779B97F4A7C15ull;
    auto next = [&st] {
        st ^= st << 13, st ^= st >> 7, st ^= st << 17;
        return float(double(st >> 11) * 0x1.0p-52 - 1.0);
    };
    for (auto& x : Q) x = next() + 0.1f;  // also touches every page before timing
    for (auto& x : K) x = next() + 0.1f;
    for (auto& x : V) x = next();
    const double bytes = 3.0 * double(Q.size()) * sizeof(float);
    std::vector<double> t_lin, t_read;
    volatile float sink = 0;
    for (int r = 0; r < reps; ++r) {  // interleaved, so both see the same machine load
        auto t0 = Clock::now();
        linear_infsa_heads_f32(Q.data(), K.data(), V.data(), H, N, d, {}, P.data(), threads);
        t_lin.push_back(seconds_since(t0));
        t0 = Clock::now();
        std::vector<float> part(static_cast<size_t>(threads));
        auto work = [&](int t) {
            float s = 0;
            for (long h = t; h < H; h += threads)
                s += read_sum(Q.data() + h * per, per) + read_sum(K.data() + h * per, per) +
                     read_sum(V.data() + h * per, per);
            part[size_t(t)] = s;
        };
        std::vector<std::thread> pool;
        for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
        work(0);
        for (auto& th : pool) th.join();
        for (float s : part) sink = sink + s;
        t_read.push_back(seconds_since(t0));
    }
    const double tl = median(t_lin), tr = median(t_read);
    std::printf(
        "[linear] N=%ld tokens, %ld heads x d_h %ld, float32, %d threads: %.1f MiB of Q, K, V\n", N,
        H, d, threads, bytes / (1 << 20));
    std::printf(
        "[linear] Linear-InfSA median %.3f s (%.2f GB/s); plain read of the same bytes %.3f s "
        "(%.2f GB/s); ratio %.2f (target <= 2)\n",
        tl, bytes / tl * 1e-9, tr, bytes / tr * 1e-9, tl / tr);
    std::printf("[linear] p[0][0..3] = %.6g %.6g %.6g %.6g\n", P[0], P[1], P[2], P[3]);
}

}  // namespace

int main(int argc, char** argv) {
    select_blas_kernels(argc, argv);  // may re-execute with faster OpenBLAS kernels (issue 13)
    const BlasInfo blas = blas_info();
    std::printf("[setup] OpenBLAS core %s (%s)\n", blas.core.c_str(), blas.reason.c_str());
    std::vector<std::string> parts;
    long n_cv = 4096, n_perron = 65536, n_linear = 331776;
    int threads = 2, reps = 3;
    std::string family = "gaussian";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
        if (a == "--n-cv")
            n_cv = std::atol(next().c_str());
        else if (a == "--n-perron")
            n_perron = std::atol(next().c_str());
        else if (a == "--n-linear")
            n_linear = std::atol(next().c_str());
        else if (a == "--threads")
            threads = std::atoi(next().c_str());
        else if (a == "--reps")
            reps = std::atoi(next().c_str());
        else if (a == "--family")
            family = next();
        else
            parts.push_back(a);
    }
    if (parts.empty()) parts = {"cv", "perron", "linear"};
    for (const auto& p : parts) {
        if (p == "cv")
            bench_cv(n_cv, reps);
        else if (p == "perron")
            bench_perron(n_perron, family);
        else if (p == "linear")
            bench_linear(n_linear, threads, std::max(reps, 5));
        else {
            std::fprintf(stderr, "unknown part '%s'\n", p.c_str());
            return 64;
        }
    }
    return 0;
}
