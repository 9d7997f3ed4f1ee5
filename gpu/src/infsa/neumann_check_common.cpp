// gpu-check cases of the Neumann twin (neumann_check.hpp), host-only: the twin's closure_times,
// neumann_kernels and closure_times_mixed (IRS) against the CPU's NeumannKernel /
// closure_times_mixed, N straddling 31/32/33 up to 4096 (full set), two heads per batch, with
// a-priori tolerances (Higham's LU bounds, kappa_inf(M) <= (1 + gamma) / (1 - gamma)). Also the
// emulated check (`gpu-check --emulate`): the sequence of neumann_sequence.hpp with the kernels
// on the CPU grid runner and cuSOLVER / cuBLAS served by LAPACK / the CPU BLAS
// (neumann_emulate.hpp).
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "attnspec/base/random.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/gpu/infsa/neumann_cuda.hpp"
#include "attnspec/infsa/neumann.hpp"
#include "neumann_check.hpp"
#include "neumann_emulate.hpp"
#include "neumann_sequence.hpp"

namespace attnspec::gpu {

namespace {

constexpr double kGamma = 0.9;

std::string sci(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", v);
    return b;
}

// Inputs: row_stochastic_affinity, kappa_inf(M) <= (1 + gamma) / (1 - gamma) = 19 at 0.9.
Eigen::MatrixXd draw_a(long n, std::uint64_t seed) { return row_stochastic_affinity(n, seed); }

double kappa_inf() { return (1 + kGamma) / (1 - kGamma); }

// Per column, each side solves (M + dM) x = b + db with |dM| <= gamma_3n |L||U| (Higham
// Thm 9.4; growth <= 2 for M diagonally dominant by rows, Thm 9.9) and b formed with relative
// error gamma_n: forward error <= kappa_inf (2 gamma_3n + gamma_n) per side, twice that apart.
double forward_tolerance(long n) {
    return 2 * kappa_inf() * (2 * gamma_n(3.0 * n) + gamma_n(static_cast<double>(n)));
}
std::string forward_reason(long n) {
    return "bound: 2 kappa_inf(M) (2 gamma_3n + gamma_n), kappa_inf <= (1+g)/(1-g) = 19, n = " +
           std::to_string(n);
}
// The fp64 LU's normwise backward error bound (growth <= 2): what IRS must reach too.
double backward_bound(long n) { return 2 * gamma_n(3.0 * n) + gamma_n(n + 1.0); }

TwinCase lu_case(const NeumannTwin& twin, const GpuCheckOptions& opt, long n, long d, long heads,
                 std::uint64_t seed) {
    std::vector<Eigen::MatrixXd> As, Vs;
    for (long h = 0; h < heads; ++h) {
        As.push_back(draw_a(n, instance_seed(seed, 2 * h)));
        Vs.push_back(Rng(instance_seed(seed, 2 * h + 1)).gaussian(n, d));
    }
    std::vector<NeumannSolveStats> stats;
    const auto gpu = twin.closure(As, kGamma, Vs, &stats);
    Eigen::MatrixXd cpu_all(n, d * heads), gpu_all(n, d * heads);
    for (long h = 0; h < heads; ++h) {
        const auto hu = static_cast<std::size_t>(h);
        cpu_all.middleCols(h * d, d) = NeumannKernel(As[hu], kGamma).closure_times(Vs[hu]);
        gpu_all.middleCols(h * d, d) = gpu[hu];
    }
    TwinCase c;
    c.twin = "neumann";
    c.case_name =
        "CV N=" + std::to_string(n) + " d_h=" + std::to_string(d) + " H=" + std::to_string(heads);
    c.precision = "fp64";
    c.shape = {n, d, heads};
    compare_into(c, cpu_all.data(), gpu_all.data(), cpu_all.size(), forward_tolerance(n), false,
                 forward_reason(n));
    double be = 0;
    for (const auto& s : stats)  // a NaN backward error is kept (std::max would drop it)
        be = std::isnan(s.backward_error) || std::isnan(be) ? NAN : std::max(be, s.backward_error);
    c.note =
        twin.note + "; max backward error " + sci(be) + " (bound " + sci(backward_bound(n)) + ")";
    c.agrees =
        c.agrees && stats.size() == static_cast<std::size_t>(heads) && be <= backward_bound(n);
    if (opt.timings) {
        const int runs = n > 2048 ? 1 : 3;
        c.gpu_seconds = median_seconds(runs, [&] { twin.closure(As, kGamma, Vs, nullptr); });
        c.cpu_seconds = median_seconds(runs, [&] {
            for (std::size_t h = 0; h < As.size(); ++h)
                NeumannKernel(As[h], kGamma).closure_times(Vs[h]);
        });
    }
    return c;
}

TwinCase kernel_case(const NeumannTwin& twin, long n, std::uint64_t seed) {
    const std::vector<Eigen::MatrixXd> As{draw_a(n, instance_seed(seed, 0)),
                                          draw_a(n, instance_seed(seed, 1))};
    std::vector<NeumannSolveStats> stats;
    const auto gpu = twin.kernels(As, kGamma, &stats);
    Eigen::MatrixXd cpu_all(n, 2 * n), gpu_all(n, 2 * n);
    for (std::size_t h = 0; h < 2; ++h) {
        cpu_all.middleCols(static_cast<long>(h) * n, n) = NeumannKernel(As[h], kGamma).kernel();
        gpu_all.middleCols(static_cast<long>(h) * n, n) = gpu[h];
    }
    TwinCase c;
    c.twin = "neumann";
    c.case_name = "N N=" + std::to_string(n) + " H=2";
    c.precision = "fp64";
    c.shape = {n, 2};
    compare_into(c, cpu_all.data(), gpu_all.data(), cpu_all.size(), forward_tolerance(n), false,
                 forward_reason(n));
    c.note = twin.note;
    return c;
}

TwinCase irs_case(const NeumannTwin& twin, const GpuCheckOptions& opt, long n, long d,
                  IrsLowest lowest, std::uint64_t seed) {
    const Eigen::MatrixXd A = draw_a(n, instance_seed(seed, 0));
    const Eigen::MatrixXd V = Rng(instance_seed(seed, 1)).gaussian(n, d);
    int iters = 0;
    NeumannSolveStats st;
    const Eigen::MatrixXd gpu = twin.mixed(A, kGamma, V, &iters, lowest, &st);
    const Eigen::MatrixXd cpu = attnspec::closure_times_mixed(A, kGamma, V);
    TwinCase c;
    c.twin = "neumann";
    c.case_name = "CV IRS N=" + std::to_string(n) + " d_h=" + std::to_string(d) + " lowest " +
                  to_string(lowest);
    c.precision = "irs";
    c.shape = {n, d};
    compare_into(c, cpu.data(), gpu.data(), cpu.size(), forward_tolerance(n), false,
                 forward_reason(n) + " (both refined to fp64 backward error)");
    c.note = twin.note + "; IRS niters " + std::to_string(iters) + ", backward error " +
             sci(st.backward_error) + " (bound " + sci(backward_bound(n)) + ")";
    c.agrees = c.agrees && st.backward_error <= backward_bound(n);
    if (opt.timings) {
        const int runs = n > 2048 ? 1 : 3;
        c.gpu_seconds =
            median_seconds(runs, [&] { twin.mixed(A, kGamma, V, nullptr, lowest, nullptr); });
        c.cpu_seconds = median_seconds(runs, [&] { attnspec::closure_times_mixed(A, kGamma, V); });
    }
    return c;
}

}  // namespace

std::vector<TwinCase> neumann_cases(const GpuCheckOptions& opt, const NeumannTwin& twin) {
    std::vector<TwinCase> out;
    std::uint64_t k = 0;
    const auto seed = [&] { return instance_seed(opt.seed, k++); };
    for (long n : {31L, 32L, 33L}) out.push_back(lu_case(twin, opt, n, 32, 2, seed()));
    out.push_back(lu_case(twin, opt, 256, 64, 2, seed()));
    out.push_back(kernel_case(twin, 33, seed()));
    out.push_back(irs_case(twin, opt, 256, 64, IrsLowest::fp32, seed()));
    out.push_back(irs_case(twin, opt, 256, 64, IrsLowest::fp16, seed()));
    if (!opt.quick) {
        out.push_back(lu_case(twin, opt, 1024, 64, 2, seed()));
        out.push_back(lu_case(twin, opt, 4096, 64, 1, seed()));
        out.push_back(irs_case(twin, opt, 4096, 64, IrsLowest::fp32, seed()));
        out.push_back(irs_case(twin, opt, 4096, 64, IrsLowest::fp16, seed()));
    }
    return out;
}

std::vector<TwinCase> check_neumann_emulated(const GpuCheckOptions& opt) {
    NeumannTwin twin;
    twin.note = "kernels on the CPU grid runner, cuSOLVER on LAPACK, cuBLAS on the CPU BLAS";
    twin.closure = [](const std::vector<Eigen::MatrixXd>& As, double g,
                      const std::vector<Eigen::MatrixXd>& Vs, std::vector<NeumannSolveStats>* st) {
        neumann_seq::CpuOps ops;
        return neumann_seq::closure(ops, As, g, Vs, st);
    };
    twin.kernels = [](const std::vector<Eigen::MatrixXd>& As, double g,
                      std::vector<NeumannSolveStats>* st) {
        neumann_seq::CpuOps ops;
        return neumann_seq::kernels(ops, As, g, st);
    };
    twin.mixed = [](const Eigen::MatrixXd& A, double g, const Eigen::MatrixXd& V, int* it,
                    IrsLowest lowest, NeumannSolveStats* st) {
        neumann_seq::CpuOps ops;
        return neumann_seq::closure_mixed(ops, A, g, V, it, lowest, st);
    };
    return neumann_cases(opt, twin);
}

}  // namespace attnspec::gpu
