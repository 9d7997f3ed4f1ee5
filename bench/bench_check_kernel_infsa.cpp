// check-kernel linear-infsa's float64 reference (issue 31: "Linear-InfSA reference at 331,776 x
// 16 x 64: <= 1.5x a plain read of the inputs"), side by side with a plain read of the same
// float64 arrays (one sum over q, k, v), one thread; also the whole check (reference, bound,
// baseline with software rounding) on the same inputs at fp32.
// usage: bench_check_kernel_infsa [--n N] [--heads H] [--d D] [--reps R] [--no-check]
//   (default N = 331,776, H = 16, d = 64: 3 x 2.5 GiB of float64 inputs; pass a smaller --n on
//   a small machine: the ratio is per byte)
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnspec/base/random.hpp"
#include "attnspec/kernels/linear_infsa_check.hpp"
#include "attnspec/kernels/stress.hpp"
#include "bench_common.hpp"

using namespace attnspec;
using namespace attnspec::kernels;

int main(int argc, char** argv) {
    long N = 331776, H = 16, d = 64;
    int reps = 3;
    bool check = true;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&] { return i + 1 < argc ? std::atol(argv[++i]) : 0L; };
        if (a == "--n")
            N = next();
        else if (a == "--heads")
            H = next();
        else if (a == "--d")
            d = next();
        else if (a == "--reps")
            reps = static_cast<int>(next());
        else if (a == "--no-check")
            check = false;
        else {
            std::fprintf(stderr, "unknown argument '%s'\n", a.c_str());
            return 64;
        }
    }
    // The stress generator stops at 2^28 elements per array (the CLI's files); the size
    // (16 x 331,776 x 64 = 3.4e8) is filled here with the same distribution, N(0, 1) float64.
    AttentionProblem p;
    if (static_cast<double>(H) * N * d <= double(1 << 28)) {
        p = generate_stress(StressCase::gaussian, 1, {H, N, d}, Format::fp64);
    } else {
        Rng rng(1);
        for (Array* a : {&p.q, &p.k, &p.v}) {
            a->shape = {H, N, d};
            a->values.resize(static_cast<std::size_t>(H * N * d));
            for (double& x : a->values) x = rng.normal();
        }
    }
    const double bytes = 3.0 * 8.0 * static_cast<double>(H * N * d);
    volatile double sink = 0;
    const double t_read = bench::median_of(reps, [&] {
        double s = 0;
        for (const Array* a : {&p.q, &p.k, &p.v})
            for (double x : a->values) s += x;
        sink = sink + s;
    });
    // The same read with eight independent sums (no dependency chain: nearer the memory's rate),
    // printed beside it so that the target's point of comparison is plain to see.
    const double t_fast = bench::median_of(reps, [&] {
        double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        for (const Array* a : {&p.q, &p.k, &p.v}) {
            const double* x = a->values.data();
            const std::size_t n = a->values.size();
            std::size_t i = 0;
            for (; i + 8 <= n; i += 8)
                for (int l = 0; l < 8; ++l) s[l] += x[i + l];
            for (; i < n; ++i) s[0] += x[i];
        }
        sink = sink + (((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])));
    });
    const LinearInfsaParams par;
    Array o, pooled;
    const double t_pool =
        bench::median_of(reps, [&] { pooled = reference_linear_infsa_pooled(p, par); });
    const double t_ref = bench::median_of(reps, [&] { o = reference_linear_infsa(p, par); });
    std::printf("[linear-infsa] (H, N, d) = (%ld, %ld, %ld), float64 inputs %.1f MiB, 1 thread\n",
                H, N, d, bytes / (1 << 20));
    std::printf(
        "[linear-infsa] plain read of the inputs (one float64 sum in index order) median "
        "%.3f s (%.2f GB/s)\n",
        t_read, bytes / t_read * 1e-9);
    std::printf("[linear-infsa] the read with eight independent sums median %.3f s (%.2f GB/s)\n",
                t_fast, bytes / t_fast * 1e-9);
    std::printf(
        "[linear-infsa] reference, one pooled vector per head (what the check compares "
        "with) median %.3f s: ratio %.2f\n",
        t_pool, t_pool / t_read);
    std::printf(
        "[linear-infsa] reference with O materialized (N_q equal rows per head, one more "
        "input-sized write) median %.3f s: ratio %.2f\n",
        t_ref, t_ref / t_read);
    std::printf(
        "target %s: the pooled reference %.2f x a plain read (target <= 1.5); with the "
        "broadcast O %.2f x; against the eight-sum read %.2f x and %.2f x\n",
        t_pool / t_read <= 1.5 ? "met" : "missed", t_pool / t_read, t_ref / t_read, t_pool / t_fast,
        t_ref / t_fast);
    if (check) {
        KernelCheckOptions opt;
        const auto t0 = std::chrono::steady_clock::now();
        const KernelCheckResult r = check_linear_infsa(p, par, o, opt);
        std::printf("[linear-infsa] whole check at fp32 (reference, bound, baseline) %.3f s: %s\n",
                    bench::seconds_since(t0), verdict_name(r.verdict));
    }
    std::printf("[linear-infsa] peak RSS %.0f MiB; o[0] = %.6g, pooled[0] = %.6g\n",
                bench::max_rss_bytes() / (1 << 20), o.values[0], pooled.values[0]);
    return 0;
}
