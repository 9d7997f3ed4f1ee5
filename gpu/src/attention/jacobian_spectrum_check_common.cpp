// gpu-check cases of the kappa(J) twin (jacobian_spectrum_check.hpp), host-only, written once for
// the device (jacobian_spectrum_check_cuda.cpp) and `gpu-check --emulate` (check_jacobian_spectrum_
// emulated: the sequence of jacobian_spectrum_sequence.hpp with the kernels on the CPU grid runner
// and cuBLAS / cuSOLVER served by the CPU BLAS / LAPACK): the twin against the CPU's
// jacobian_spectrum on SVD-corrected heads, N straddling the warp and the Gram tile (31/32/33),
// wide (D > N, the R^T factor) and tall (N > 3D: J taller than wide), with and without biases.
// Compared: sigma_max and sigma_min; tolerance (absolute) known before the device answers
// (jacobian_spectrum_tolerance.hpp): Weyl on an a priori bound of ||fl(G) - J J^T||_2 for the
// twin's assembly route, computed on the host from the head, plus the CPU enclosure's half-width.
// No device quantity (the GPU's enclosure, its gram_error estimate) enters it: a wrong G cannot
// widen its own tolerance (issue 32). Agreement also needs the enclosures of sigma_max, sigma_min
// and kappa_strict to intersect (an extra condition: it can only turn agreement into
// disagreement).
#include <algorithm>
#include <cmath>
#include <string>

#include "attention_check_timing.hpp"
#include "attnspec/attention/corrections.hpp"
#include "attnspec/attention/jacobian_spectrum.hpp"
#include "attnspec/gpu/attention/attention_cuda.hpp"
#include "attnspec/gpu/attention/jacobian_spectrum_cuda.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "jacobian_spectrum_check.hpp"
#include "jacobian_spectrum_emulate.hpp"
#include "jacobian_spectrum_sequence.hpp"
#include "jacobian_spectrum_tolerance.hpp"

namespace attnspec::gpu {

namespace {
struct JacCase {
    long N, D, d;
    bool biases;
};
bool intersect(const Interval& a, const Interval& b) { return a.lo <= b.hi && b.lo <= a.hi; }
}  // namespace

std::vector<TwinCase> jacobian_spectrum_cases(const GpuCheckOptions& opt,
                                              const JacobianSpectrumTwin& twin) {
    std::vector<JacCase> cases = {
        {31, 16, 8, false}, {32, 40, 8, true}, {33, 8, 4, true}, {33, 64, 2, false}};
    if (!opt.quick) {
        cases.push_back({64, 128, 32, true});
        cases.push_back({128, 384, 32, false});
        cases.push_back({197, 768, 64, true});
    }
    std::vector<TwinCase> out;
    for (const JacCase& k : cases) {
        const MultiHead m = spec_attention_instance(k.N, k.D, k.d, 1, opt.seed + k.N, k.biases);
        const Head h = m.head(0);
        TwinCase c;
        c.twin = "jacobian_spectrum";
        c.case_name = "N=" + std::to_string(k.N) + " D=" + std::to_string(k.D) +
                      " d=" + std::to_string(k.d) + (k.N > 3 * k.D ? " tall" : " wide") +
                      (k.biases ? " biases" : "");
        c.precision = "fp64";
        c.shape = {k.N, k.D, k.d};
        OperatorSpectrum cpu, gpu;
        const double cpu_s = attn::median_seconds(
            1, [&] { cpu = attnspec::jacobian_spectrum(h, jacobian_check_cpu_options()); });
        auto run = [&] { gpu = twin.run(h); };
        if (opt.timings) {
            run();  // warm-up
            c.gpu_seconds = attn::median_seconds(3, run);
            c.cpu_seconds = cpu_s;
        } else {
            run();
        }
        const double cpu_v[2] = {cpu.max.sigma, cpu.min.sigma};
        const double gpu_v[2] = {gpu.max.sigma, gpu.min.sigma};
        const JacobianCheckTolerance tol = jacobian_check_tolerance(h, cpu);
        compare_into(c, cpu_v, gpu_v, 2, tol.abs, true, tol.reason);
        c.agrees = c.agrees &&
                   tol.ends_within(std::abs(gpu_v[0] - cpu_v[0]), std::abs(gpu_v[1] - cpu_v[1]));
        const bool max_ok = intersect(cpu.max.enclosure, gpu.max.enclosure);
        const bool min_ok = intersect(cpu.min.enclosure, gpu.min.enclosure);
        const bool kappa_ok = intersect(cpu.strict.enclosure, gpu.strict.enclosure);
        c.agrees = c.agrees && max_ok && min_ok && kappa_ok;
        c.note = "kappa_strict GPU " + std::to_string(gpu.strict.value) + " CPU " +
                 std::to_string(cpu.strict.value) + " in [" +
                 std::to_string(cpu.strict.enclosure.lo) + ", " +
                 std::to_string(cpu.strict.enclosure.hi) + "]; enclosures intersect: sigma_max " +
                 (max_ok ? "yes" : "NO") + ", sigma_min " + (min_ok ? "yes" : "NO") + ", kappa " +
                 (kappa_ok ? "yes" : "NO") + "; GPU gram_error (its own, not the tolerance) " +
                 std::to_string(gpu.gram_error) + "; " + twin.note;
        out.push_back(std::move(c));
    }
    return out;
}

std::vector<TwinCase> check_jacobian_spectrum_emulated(const GpuCheckOptions& opt) {
    JacobianSpectrumTwin twin;
    twin.note = "kernels on the CPU grid runner, cuBLAS / cuSOLVER on the CPU BLAS / LAPACK";
    twin.run = [](const Head& h) {
        jac_seq::CpuOps ops;
        return jac_seq::spectrum(ops, h, LargeSvdOptions{});
    };
    return jacobian_spectrum_cases(opt, twin);
}

}  // namespace attnspec::gpu
