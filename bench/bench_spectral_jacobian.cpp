// kappa(J) with its enclosure at real-model scale (issue 4), printed with the ratio to its limit:
//   MiniLM-sized head (128, 384, 32), J 4096 x 36864:  <= 5 s and <= 1 GB peak RSS
//     (issue figure for PyTorch on the same machine: 16 s to build J + 96 s svdvals, 5.5 GB peak;
//      torch is not installed here, so that figure is quoted, not re-measured).
//   ViT-B-sized head (197, 768, 64), J 12608 x 147456:  <= 3 min and <= 8 GB peak RSS.
// Usage: bench_spectral_jacobian minilm|vit [full|extremal|auto]. One size per process, so that
// getrusage's max RSS is the peak of that run alone. Own main (single long runs, no repetitions).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "attnspec/attention/attention.hpp"
#include "attnspec/attention/jacobian_spectrum.hpp"
#include "attnspec/base/blas_runtime.hpp"

using namespace attnspec;

int main(int argc, char** argv) {
    attnspec::select_blas_kernels(argc, argv);  // the CLI's BLAS kernels (issue 13)
    const std::string which = argc > 1 ? argv[1] : "minilm";
    const std::string mode = argc > 2 ? argv[2] : "auto";
    const bool vit = which == "vit";
    RandomSpec rs;
    rs.N = vit ? 197 : 128, rs.D = vit ? 768 : 384, rs.d = vit ? 64 : 32;
    rs.seed = 1, rs.token_dist = "layernorm", rs.scale = LogitScale::inv_sqrt_d;
    const double limit_s = vit ? 180.0 : 5.0, limit_b = vit ? 8e9 : 1e9;
    const auto t0 = std::chrono::steady_clock::now();
    const Head h = random_head(rs);
    LargeSvdOptions o;
    o.mode = large_svd_mode_from_string(mode);
    o.certify.mode = CertifyMode::never;  // the engine alone (bench_certified_kappa: with it)
    const OperatorSpectrum s = jacobian_spectrum(h, o);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rusage r{};
    getrusage(RUSAGE_SELF, &r);
    const double rss = 1024.0 * static_cast<double>(r.ru_maxrss);
    std::printf("head (%ld, %ld, %ld): J %ld x %ld, mode %s\n", (long)rs.N, (long)rs.D, (long)rs.d,
                (long)s.rows, (long)s.cols, s.mode.c_str());
    std::printf("  sigma_max = %.12g in [%.12g, %.12g] (%s, rho %.3g)\n", s.max.sigma,
                s.max.enclosure.lo, s.max.enclosure.hi, s.max.basis.c_str(), s.max.rho);
    std::printf("  sigma_min = %.12g in [%.12g, %.12g] (%s, rho %.3g, gram %.12g, %d steps)\n",
                s.min.sigma, s.min.enclosure.lo, s.min.enclosure.hi, s.min.basis.c_str(), s.min.rho,
                s.min.sigma_gram, s.min.steps);
    std::printf("  %s\n  %s\n  rank %ld, gram_error %.3g, rel_error_bound %.3g\n",
                s.strict.describe().c_str(), s.nz.describe().c_str(), (long)s.rank, s.gram_error,
                s.rel_error_bound);
    for (const auto& n : s.notes) std::printf("  note: %s\n", n.c_str());
    std::printf("  time %.2f s (engine %.2f s) = %.3f x the %.0f s limit\n", secs, s.seconds,
                secs / limit_s, limit_s);
    std::printf("  peak RSS %.3f GB = %.3f x the %.0f GB limit\n", rss / 1e9, rss / limit_b,
                limit_b / 1e9);
    if (!vit)
        std::printf(
            "  vs PyTorch (issue figure, quoted): 112 s / 5.5 GB -> %.1fx faster, %.1fx less "
            "memory\n",
            112.0 / secs, 5.5e9 / rss);
    return 0;
}
