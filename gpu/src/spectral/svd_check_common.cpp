// gpu-check cases of the SVD twin (svd_check.hpp), host-only: the twin's svd / svd_batched
// against attnspec::svd over square sizes straddling 31/32/33, tall and wide, the three batched
// paths, and large N in the full set; a-priori Weyl tolerances. Also the emulated check
// (`gpu-check --emulate`): the sequence of svd_sequence.hpp with the kernel on the CPU grid runner
// and cuSOLVER / cuBLAS served by LAPACK (svd_emulate.hpp).
#include <cmath>
#include <string>
#include <vector>

#include "attnspec/base/random.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/gpu/spectral/svd_cuda.hpp"
#include "svd_check.hpp"
#include "svd_emulate.hpp"
#include "svd_sequence.hpp"

namespace attnspec::gpu {

namespace {

// Both sides are backward stable: sigma(M + dM) with ||dM||_2 <= ||dM||_F <= c u ||M||_F <=
// c sqrt(r) u sigma_max (Weyl: each computed sigma_i is within that of the exact one), so they
// differ by at most twice that. c = 32: the O(1) Householder / Jacobi rotation constants of
// gesdd, JacobiSVD and gesvdj times their sweep counts, assumed, not yet measured on a device.
constexpr double kWeylConstant = 32;

double weyl_tolerance(long m, long n) {
    return 2 * kWeylConstant * std::sqrt(static_cast<double>(std::min(m, n))) * kUnitRoundoff;
}
std::string weyl_reason(long m, long n) {
    return "bound: Weyl, 2 x 32 sqrt(min(m,n)) u sigma_max (both SVDs backward stable), r = " +
           std::to_string(std::min(m, n));
}

Eigen::MatrixXd draw(long m, long n, std::uint64_t seed, bool graded) {
    Rng rng(seed);
    if (!graded) return rng.gaussian(m, n);
    // kappa 1e6: the small singular values kappa divides by are compared too
    return rng.with_spectrum(m, n, geometric_spectrum(std::min(m, n), 1.0, 1e6));
}

TwinCase single_case(const SvdTwin& twin, const GpuCheckOptions& opt, long m, long n, bool vectors,
                     std::uint64_t seed) {
    const Eigen::MatrixXd M = draw(m, n, seed, seed % 2 == 1);
    SvdOptions o;
    o.values_only = !vectors;
    const SvdResult cpu = attnspec::svd(M, o);
    const SvdResult gpu = twin.single(M, o);
    TwinCase c;
    c.twin = "svd";
    c.case_name = std::to_string(m) + "x" + std::to_string(n) +
                  (m > n   ? " tall"
                   : m < n ? " wide"
                           : "") +
                  (vectors ? " vectors" : "");
    c.precision = "fp64";
    c.shape = {m, n};
    compare_into(c, cpu.sigma.data(), gpu.sigma.data(), cpu.sigma.size(), weyl_tolerance(m, n),
                 false, weyl_reason(m, n));
    c.note = twin.note;
    if (vectors) {  // both enclosures are rigorous: they must intersect at every index
        long apart = 0;
        for (long i = 0; i < cpu.sigma.size(); ++i)
            if (gpu.lo[i] > cpu.hi[i] || cpu.lo[i] > gpu.hi[i]) ++apart;
        c.note = twin.note + "; enclosures disjoint at " + std::to_string(apart) + " of " +
                 std::to_string(cpu.sigma.size()) + " indices";
        c.agrees = c.agrees && apart == 0;
    }
    if (opt.timings) {
        const int runs = m * n > 1000000 ? 1 : 3;
        c.gpu_seconds = median_seconds(runs, [&] { twin.single(M, o); });
        c.cpu_seconds = median_seconds(runs, [&] { attnspec::svd(M, o); });
    }
    return c;
}

TwinCase batched_case(const SvdTwin& twin, const GpuCheckOptions& opt, long batch, long m, long n,
                      std::uint64_t seed) {
    std::vector<Eigen::MatrixXd> Ms;
    for (long b = 0; b < batch; ++b)
        Ms.push_back(draw(m, n, instance_seed(seed, static_cast<std::uint64_t>(b)), b % 2 == 1));
    SvdOptions o;
    o.values_only = true;
    const std::vector<SvdResult> gpu = twin.batched(Ms, o);
    Eigen::VectorXd s_cpu(batch * std::min(m, n)), s_gpu(s_cpu.size());
    // Each matrix on its own scale: sigma / sigma_max(cpu), so the Weyl bound applies per matrix.
    const long r = std::min(m, n);
    for (long b = 0; b < batch; ++b) {
        const Eigen::VectorXd sc = attnspec::svd(Ms[static_cast<std::size_t>(b)], o).sigma;
        s_cpu.segment(b * r, r) = sc / sc[0];
        s_gpu.segment(b * r, r) = gpu[static_cast<std::size_t>(b)].sigma / sc[0];
    }
    TwinCase c;
    c.twin = "svd";
    c.case_name = "batch=" + std::to_string(batch) + " " + std::to_string(m) + "x" +
                  std::to_string(n) + " (" + to_string(batched_svd_path(m, n, true)) + ")";
    c.precision = "fp64";
    c.shape = {batch, m, n};
    compare_into(c, s_cpu.data(), s_gpu.data(), s_cpu.size(), weyl_tolerance(m, n), false,
                 weyl_reason(m, n) + ", per matrix (sigma / sigma_max)");
    c.note = twin.note;
    if (opt.timings) {
        c.gpu_seconds = median_seconds(3, [&] { twin.batched(Ms, o); });
        c.cpu_seconds = median_seconds(3, [&] {
            for (const auto& M : Ms) attnspec::svd(M, o);
        });
    }
    return c;
}

}  // namespace

std::vector<TwinCase> svd_cases(const GpuCheckOptions& opt, const SvdTwin& twin) {
    std::vector<TwinCase> out;
    std::uint64_t k = 0;
    const auto seed = [&] { return instance_seed(opt.seed, k++); };
    for (long s : {31L, 32L, 33L}) out.push_back(single_case(twin, opt, s, s, false, seed()));
    out.push_back(single_case(twin, opt, 64, 31, false, seed()));
    out.push_back(single_case(twin, opt, 31, 64, false, seed()));
    out.push_back(single_case(twin, opt, 33, 33, true, seed()));
    out.push_back(single_case(twin, opt, 200, 120, true, seed()));
    out.push_back(batched_case(twin, opt, 72, 32, 32, seed()));
    out.push_back(batched_case(twin, opt, 72, 31, 33, seed()));
    out.push_back(batched_case(twin, opt, 72, 384, 32, seed()));
    out.push_back(batched_case(twin, opt, 12, 32, 384, seed()));
    out.push_back(batched_case(twin, opt, 8, 33, 33, seed()));
    if (!opt.quick) {
        out.push_back(single_case(twin, opt, 1024, 1024, false, seed()));
        out.push_back(single_case(twin, opt, 2048, 1024, false, seed()));
        out.push_back(single_case(twin, opt, 4096, 4096, false, seed()));
    }
    return out;
}

std::vector<TwinCase> check_svd_emulated(const GpuCheckOptions& opt) {
    SvdTwin twin;
    twin.note = "kernel on the CPU grid runner, cuSOLVER / cuBLAS on LAPACK";
    twin.single = [](const Eigen::MatrixXd& M, const SvdOptions& o) {
        svd_seq::CpuOps ops;
        return svd_seq::svd(ops, M, o);
    };
    twin.batched = [](const std::vector<Eigen::MatrixXd>& Ms, const SvdOptions& o) {
        svd_seq::CpuOps ops;
        return svd_seq::svd_batched(ops, Ms, o);
    };
    return svd_cases(opt, twin);
}

}  // namespace attnspec::gpu
