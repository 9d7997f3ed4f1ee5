// check-kernel attention and attention-vjp in C++ (issue 31's attention targets; the ratios to
// PyTorch are printed by bench/python/bench_check_kernel.py): the whole check (float64 reference,
// rounding bound, baseline at fp32) on Gaussian inputs, the kernel output being attnspec's own
// fp32 baseline (a correct kernel). Medians of R runs, every core (available_threads()).
// usage: bench_check_kernel_attention [--n N] [--heads H] [--d D] [--reps R] [--no-vjp]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/base/parallel.hpp"
#include "attnspec/kernels/attention_check.hpp"
#include "attnspec/kernels/derivative_baseline.hpp"
#include "attnspec/kernels/derivative_check.hpp"
#include "attnspec/kernels/stress.hpp"
#include "bench_common.hpp"

using namespace attnspec;
using namespace attnspec::kernels;

int main(int argc, char** argv) {
    select_blas_kernels(argc, argv);
    long N = 4096, H = 16, d = 64;
    int reps = 3;
    bool vjp = true;
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
        else if (a == "--no-vjp")
            vjp = false;
        else {
            std::fprintf(stderr, "unknown argument '%s'\n", a.c_str());
            return 64;
        }
    }
    const AttentionProblem p = generate_stress(StressCase::gaussian, 1, {H, N, d}, Format::fp32);
    Array o, lse;
    baseline_attention(p, Format::fp32, Format::fp32, o, lse);
    KernelCheckOptions opt;
    KernelCheckResult r;
    const double t_fwd = bench::median_of(reps, [&] { r = check_attention(p, o, nullptr, opt); });
    std::printf("[attention] (H, N, d) = (%ld, %ld, %ld), %d threads: check %.3f s (%s)\n", H, N, d,
                available_threads(), t_fwd, verdict_name(r.verdict));
    if (vjp) {
        const AttentionProblem g =
            generate_stress(StressCase::gaussian, 2, {H, N, d}, Format::fp32);
        Array dq, dk, dv;
        baseline_vjp(p, g.q, Format::fp32, Format::fp32, dq, dk, dv);
        VjpCheckResult rv;
        const double t_vjp =
            bench::median_of(reps, [&] { rv = check_attention_vjp(p, g.q, dq, dk, dv, opt); });
        std::printf("[attention-vjp] check %.3f s (dq %s, dk %s, dv %s)\n", t_vjp,
                    verdict_name(rv.dq.verdict), verdict_name(rv.dk.verdict),
                    verdict_name(rv.dv.verdict));
    }
    std::printf("peak RSS %.0f MiB\n", bench::max_rss_bytes() / (1 << 20));
    return 0;
}
