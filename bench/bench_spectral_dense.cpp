// Dense singular values of a 2048 x 2048 Gaussian matrix: attnspec::svd (values only, LAPACK
// dgesdd on OpenBLAS) vs numpy.linalg.svd(compute_uv=False) run side by side in the same process
// tree (/usr/bin/python3, OpenBLAS threads as the environment sets them), alternating, medians
// printed with their ratio (target <= 1.5x numpy). Also prints the cost of the full enclosure
// path and the kappa accuracy against dgejsv for kappa <= 1e6.
// Usage: bench_spectral_dense [n] [repeats]. Own main (the numpy peer runs in a subprocess).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/spectral/svd.hpp"
#include "bench_common.hpp"

using namespace attnspec;

namespace {
using bench::median;
using bench::seconds_since;
// One numpy timing of svd(compute_uv=False) on an n x n Gaussian (matrix built outside the timer).
double numpy_seconds(int n) {
    return bench::python_peer_seconds(
        "import numpy as np, time; a = np.random.default_rng(1).standard_normal((" +
        std::to_string(n) + ", " + std::to_string(n) +
        ")); t = time.perf_counter(); np.linalg.svd(a, compute_uv=False); "
        "print(time.perf_counter() - t)");
}
}  // namespace

int main(int argc, char** argv) {
    attnspec::select_blas_kernels(argc, argv);  // the CLI's BLAS kernels (issue 13)
    const int n = argc > 1 ? std::atoi(argv[1]) : 2048;
    const int reps = argc > 2 ? std::atoi(argv[2]) : 3;
    Rng rng(1);
    const Eigen::MatrixXd A = rng.gaussian(n, n);
    SvdOptions vo;
    vo.values_only = true;
    vo.method = SvdMethod::gesdd;
    std::vector<double> ours, peer;
    for (int r = 0; r < reps; ++r) {  // alternate: the shared machine's load hits both alike
        auto t0 = std::chrono::steady_clock::now();
        const SvdResult s = svd(A, vo);
        ours.push_back(seconds_since(t0));
        peer.push_back(numpy_seconds(n));
        if (s.sigma.size() != n) return 1;
    }
    const double mo = median(ours), mp = median(peer);
    std::printf("dense singular values, %d x %d Gaussian, median of %d (alternating runs)\n", n, n,
                reps);
    std::printf("  attnspec svd(values_only, dgesdd): %.3f s\n", mo);
    std::printf("  numpy.linalg.svd(compute_uv=False): %.3f s\n", mp);
    std::printf("  ratio attnspec / numpy = %.3f (target <= 1.5)\n", mo / mp);

    auto t0 = std::chrono::steady_clock::now();
    const SvdResult full = svd(A, SvdMethod::gesdd);
    const double tf = seconds_since(t0);
    const Eigen::Index r = full.sigma.size() - 1;
    std::printf(
        "  with vectors + Weyl + Dot2/Temple enclosure of sigma_max, sigma_min: %.3f s "
        "(%.2f x values-only); sigma_min radius/sigma = %.2e (%s)\n",
        tf, tf / mo, full.radius[r] / full.sigma[r], full.basis[r].c_str());

    // kappa accuracy vs dgejsv, kappa <= 1e6 (prescribed spectrum, 512 x 512)
    double worst = 0;
    for (double kap : {1e2, 1e4, 1e6}) {
        const Eigen::MatrixXd M = rng.with_spectrum(512, 512, geometric_spectrum(512, 1.0, kap));
        const Kappa ref = kappa(svd(M, SvdMethod::gejsv), 512, 512, KappaConvention::strict);
        for (SvdMethod m : {SvdMethod::gesdd, SvdMethod::bdc}) {
            const Kappa k = kappa(svd(M, m), 512, 512, KappaConvention::strict);
            worst = std::max(worst, std::fabs(k.value - ref.value) / std::max(k.value, ref.value));
        }
    }
    std::printf(
        "  kappa rel. error vs dgejsv (512 x 512, kappa 1e2..1e6, gesdd/bdc): worst %.2e "
        "(target <= 1e-8)\n",
        worst);
    return 0;
}
