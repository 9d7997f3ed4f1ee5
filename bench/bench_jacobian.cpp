// Jacobian performance targets (issue 3), measured side by side in one run, medians printed with
// their ratio to the target or peer:
//   1. dense J for a MiniLM-sized head (N, D, d) = (128, 384, 32), J 4096 x 36864 (1.125 GiB):
//      >= 10x faster than PyTorch's vectorized autograd jacobian (issue figure: ~16 s, 5.5 GB
//      peak, torch 1.13, 2 cores; torch is not installed on this machine, so the figure is quoted,
//      not re-measured) and peak memory <= 1.5x the bytes of J (getrusage max-RSS growth, run
//      first in a fresh process).
//   2. J v and J^T u for a ViT-B-sized head (197, 768, 64) <= 50 ms each (also J_X v, J_X^T u).
//   3. J J^T at ViT-B size (Nd = 12608) "well under a minute" for the spectral engine.
// Usage: bench_jacobian [--quick]  (--quick skips the ViT-B Gram). Own main: no Google Benchmark
// loop, because target 1 needs the peak memory of a single fresh assembly.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "attnspec/attention/jacobian.hpp"
#include "attnspec/base/blas_runtime.hpp"
#include "bench_common.hpp"

using namespace attnspec;

namespace {

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
using bench::max_rss_bytes;
using bench::median;
Head make(Eigen::Index N, Eigen::Index D, Eigen::Index d) {
    RandomSpec rs;
    rs.N = N, rs.D = D, rs.d = d, rs.seed = 1, rs.token_dist = "layernorm";
    rs.scale = LogitScale::inv_sqrt_d;
    return random_head(rs);
}

}  // namespace

int main(int argc, char** argv) {
    attnspec::select_blas_kernels(argc, argv);  // the CLI's BLAS kernels (issue 13)
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    constexpr double kTorchSeconds = 16.0, kTorchPeakBytes = 5.5e9;  // issue 3 figure (quoted)

    // 1. Dense J, MiniLM head. First assembly measures the peak RSS growth.
    const Head mini = make(128, 384, 32);
    const double jbytes = jacobian_weights_bytes(128, 384, 32);
    const double rss0 = max_rss_bytes();
    std::vector<double> t;
    {
        const double t0 = now();
        Eigen::MatrixXd J = jacobian_weights(mini);
        t.push_back(now() - t0);
        std::printf("dense J %ld x %ld (%.3f GiB), ||J||_F = %.6g\n", static_cast<long>(J.rows()),
                    static_cast<long>(J.cols()), jbytes / (1 << 30), J.norm());
    }
    const double peak = max_rss_bytes() - rss0;
    for (int r = 0; r < 4; ++r) {
        const double t0 = now();
        Eigen::MatrixXd J = jacobian_weights(mini);
        t.push_back(now() - t0);
    }
    const double tm = median(t);
    std::printf("[1] dense J (128,384,32): median %.3f s over %zu runs (min %.3f, max %.3f)\n", tm,
                t.size(), *std::min_element(t.begin(), t.end()),
                *std::max_element(t.begin(), t.end()));
    std::printf(
        "    peer: torch.autograd.functional.jacobian(vectorize=True) %.1f s (issue figure, "
        "not re-measured: torch not installed)\n",
        kTorchSeconds);
    std::printf("    speedup vs peer %.1fx (target >= 10x): %s\n", kTorchSeconds / tm,
                kTorchSeconds / tm >= 10 ? "MET" : "NOT MET");
    std::printf(
        "    peak RSS growth %.3f GiB = %.3fx bytes of J (target <= 1.5x): %s; torch peak %.1f GB "
        "= %.1fx\n",
        peak / (1 << 30), peak / jbytes, peak / jbytes <= 1.5 ? "MET" : "NOT MET",
        kTorchPeakBytes / 1e9, kTorchPeakBytes / jbytes);

    // 2. Matrix-free products, ViT-B head.
    const Head vit = make(197, 768, 64);
    const JacobianOperator op(vit);
    const JacobianXOperator opx(vit);
    Eigen::VectorXd v = Eigen::VectorXd::Random(op.cols()), u = Eigen::VectorXd::Random(op.rows());
    Eigen::VectorXd vx = Eigen::VectorXd::Random(opx.cols());
    Eigen::VectorXd y(op.rows()), z(op.cols()), zx(opx.cols());
    std::vector<double> a, b, ax, bx;
    for (int r = 0; r < 21; ++r) {
        double t0 = now();
        op.apply(v.data(), y.data());
        a.push_back(now() - t0);
        t0 = now();
        op.apply_transpose(u.data(), z.data());
        b.push_back(now() - t0);
        t0 = now();
        opx.apply(vx.data(), y.data());
        ax.push_back(now() - t0);
        t0 = now();
        opx.apply_transpose(u.data(), zx.data());
        bx.push_back(now() - t0);
    }
    const double lim = 0.050;
    std::printf("[2] ViT-B head (197,768,64), J %ld x %ld, median of 21 (target <= 50 ms each):\n",
                static_cast<long>(op.rows()), static_cast<long>(op.cols()));
    for (auto [name, s] : {std::pair<const char*, double>{"J v    ", median(a)},
                           {"J^T u  ", median(b)},
                           {"J_X v  ", median(ax)},
                           {"J_X^T u", median(bx)}})
        std::printf("    %s %7.2f ms = %.2fx of the 50 ms limit: %s\n", name, 1e3 * s, s / lim,
                    s <= lim ? "MET" : "NOT MET");

    // 3. Gram J J^T at ViT-B size.
    if (!quick) {
        const double t0 = now();
        const Eigen::MatrixXd G = jacobian_gram_outer(vit);
        const double tg = now() - t0;
        std::printf(
            "[3] J J^T (12608 x 12608, %.2f GiB) from factors: %.2f s = %.2fx of 60 s; "
            "trace %.6g\n",
            jacobian_gram_bytes(197, 64) / (1 << 30), tg, tg / 60, G.trace());
    }
    if (!quick) {
        const double t0 = now();
        const Eigen::MatrixXd G = jacobian_x_gram_outer(vit);
        const double tg = now() - t0;
        std::printf(
            "[3] J_X J_X^T (12608 x 12608) from factors: %.2f s = %.2fx of 60 s; trace %.6g\n", tg,
            tg / 60, G.trace());
    }
    std::printf(
        "process peak RSS %.2f GiB (Gram budget for the spectral engine ~3 GB; the dense\n"
        "J phase above holds 1.13 GiB)\n",
        max_rss_bytes() / (1 << 30));
    return 0;
}
