// The kappa(J) twin's host sequence, written once for the device (jacobian_spectrum_cuda.cpp:
// cuBLAS GEMMs, asum and symv, cuSOLVER syevd and the kernels of jacobian_spectrum_kernels.hpp on
// the context's stream) and for `gpu-check --emulate` (jacobian_spectrum_check_common.cpp: the
// same kernel bodies on the CPU grid runner, each cuBLAS / cuSOLVER call served by the CPU BLAS /
// LAPACK with the same arguments, base/cpu_solver.hpp). Ops provides the buffers (Mat<T>,
// matrix<T>(rows, cols), upload, download), the kernels (p_factors, gram_combine), the calls with
// their full arguments (gemm, asum, symv_lower, syevd_buffer, syevd), synchronize and
// math_mode_description. The forward state, enclosures and kappa are the CPU's, on the host.
// Host-only, no CUDA header. Planted faults (gpu_check.hpp): off-by-one-tile skips the last tile
// of each combine, dropped-term leaves the J_V J_V^T term out.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "attnspec/attention/jacobian.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/gpu/attention/jacobian_spectrum_cuda.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/spectral/svd.hpp"
#include "jacobian_spectrum_tolerance.hpp"

namespace attnspec::gpu::jac_seq {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// ||fl(G) - J J^T||_2 estimated by 4 power steps (a lower bound; the caller multiplies by 10 as
// the CPU engine does): G x on the device (lower triangle), J J^T x matrix-free on the host.
template <class Ops, class M>
double estimate_gram_error(Ops& ops, const M& G, const Head& h, std::uint64_t seed) {
    const long n = G.rows();
    const JacobianOperator J(h);
    Rng rng(seed);
    VectorXd x(n), y(n), jt(J.cols()), jjt(n);
    for (long i = 0; i < n; ++i) x[i] = rng.normal();
    x.normalize();
    auto dx = ops.template matrix<double>(n, 1);
    auto dy = ops.template matrix<double>(n, 1);
    double e = 0;
    for (int k = 0; k < 4; ++k) {
        ops.upload(dx, x.data());
        ops.symv_lower(n, 1.0, G.data(), n, dx.data(), 1, 0.0, dy.data(), 1);
        ops.download(dy, y.data());
        J.apply_transpose(x.data(), jt.data());
        J.apply(jt.data(), jjt.data());
        y -= jjt;
        e = y.norm();
        if (e == 0) break;
        x = y / e;
    }
    return e;
}

template <class Ops>
OperatorSpectrum spectrum(Ops& ops, const Head& h, const LargeSvdOptions& opt) {
    const auto t0 = std::chrono::steady_clock::now();
    h.validate("jacobian_spectrum (GPU)");
    const long N = h.N(), D = h.D(), d = h.d(), n = N * d, cols = 3 * D * d;
    const std::string what = "kappa(J) on the GPU for a (" + std::to_string(N) + ", " +
                             std::to_string(D) + ", " + std::to_string(d) + ") head (Gram " +
                             std::to_string(n) + "^2 on the device)";
    check_allocation(jacobian_spectrum_device_bytes(N, D, d), opt.max_bytes, what, "max_bytes");
    const Forward<double> f = attention_forward<double>(h);  // at W + C, with the biases
    const MatrixXd Fx = jacobian_x_factor(h.X);
    const long m = Fx.cols();
    const bool skip_last_tile = planted_fault() == PlantedFault::off_by_one_tile;
    const bool drop_v_term = planted_fault() == PlantedFault::dropped_term;

    auto dS = ops.template matrix<double>(N, N);
    auto dV = ops.template matrix<double>(N, d);
    auto dA = ops.template matrix<double>(N, d);
    auto dK = ops.template matrix<double>(N, d);
    auto dQ = ops.template matrix<double>(N, d);
    auto dX = ops.template matrix<double>(N, D);
    auto dFx = ops.template matrix<double>(N, m);
    ops.upload(dS, f.S.data());
    ops.upload(dV, f.V.data());
    ops.upload(dA, f.A.data());
    ops.upload(dK, f.K.data());
    ops.upload(dQ, f.Q.data());
    const MatrixXd X = h.X;  // column-major and contiguous (h.X may view a strided buffer)
    ops.upload(dX, X.data());
    ops.upload(dFx, Fx.data());
    auto dG = ops.template matrix<double>(n, n);
    {
        auto dP = ops.template matrix<double>(n, N);
        auto dZ = ops.template matrix<double>(n, d);
        auto dY = ops.template matrix<double>(n, m);
        auto dT = ops.template matrix<double>(n, N);
        auto dXX = ops.template matrix<double>(N, N);
        auto dQQ = ops.template matrix<double>(N, N);
        auto dSX = ops.template matrix<double>(N, D);
        auto dVV = ops.template matrix<double>(N, N);
        ops.p_factors(dS.data(), dV.data(), dA.data(), dP.data(), N, d);
        ops.gemm(false, false, n, d, N, 1.0, dP.data(), n, dK.data(), N, 0.0, dZ.data(), n);
        ops.gemm(false, false, n, m, N, 1.0, dP.data(), n, dFx.data(), N, 0.0, dY.data(), n);
        const double s2 = h.s * h.s;
        ops.gemm(false, true, N, N, D, s2, dX.data(), N, dX.data(), N, 0.0, dXX.data(), N);
        ops.gemm(false, true, N, N, d, s2, dQ.data(), N, dQ.data(), N, 0.0, dQQ.data(), N);
        ops.gemm(false, false, N, D, N, 1.0, dS.data(), N, dX.data(), N, 0.0, dSX.data(), N);
        ops.gemm(false, true, N, N, D, 1.0, dSX.data(), N, dSX.data(), N, 0.0, dVV.data(), N);
        for (long cp = 0; cp < d; ++cp) {  // block column cp, rows from block cp down
            const long r0 = cp * N, rows = n - r0;
            ops.gemm(false, true, rows, N, d, 1.0, dZ.data() + r0, n, dZ.data() + r0, n, 0.0,
                     dG.data() + r0 + r0 * n, n);
            ops.gemm(false, true, rows, N, m, 1.0, dY.data() + r0, n, dY.data() + r0, n, 0.0,
                     dT.data(), n);
            ops.gram_combine(dG.data(), n, dXX.data(), dQQ.data(), dVV.data(), dT.data(), n, N, cp,
                             skip_last_tile, drop_v_term);
        }
        ops.synchronize();
    }
    OperatorSpectrum s;
    s.rows = n;
    s.cols = cols;
    s.gram_trace = ops.asum(n, dG.data(), n + 1);  // the trace of G (its diagonal, stride n + 1)
    const double gram_error_est = estimate_gram_error(ops, dG, h, opt.seed);

    // Every eigenvalue of G (ascending), values only, from its lower triangle.
    const long lwork = ops.syevd_buffer(n, dG.data(), n);
    const double extra = 8.0 * std::max(0.0, static_cast<double>(lwork) - kSyevdWorkPerRow * n);
    check_allocation(jacobian_spectrum_device_bytes(N, D, d) + extra, opt.max_bytes,
                     what + " with syevd's queried work space", "max_bytes");
    auto dW = ops.template matrix<double>(n, 1);
    auto dWork = ops.template matrix<double>(std::max(lwork, 1L), 1);
    auto dInfo = ops.template matrix<int>(1, 1);
    ops.syevd(n, dG.data(), n, dW.data(), dWork.data(), lwork, dInfo.data());
    VectorXd lambda(n);
    int info = 0;
    ops.download(dW, lambda.data());
    ops.download(dInfo, &info);
    if (info != 0)
        throw Error(ExitCode::Internal, "cusolverDnDsyevd failed on the Gram matrix (info = " +
                                            std::to_string(info) + ")");
    if (!lambda.allFinite()) fail_data("jacobian_spectrum (GPU): Gram eigenvalues are not finite");
    const double lambda_max = lambda[n - 1];
    if (!(lambda_max > 0)) fail_data("jacobian_spectrum (GPU): J = 0 (kappa undefined)");

    // Gram error: 10 x the estimate + the eigensolver's backward error (the CPU engine's sizing).
    s.gram_error =
        10 * gram_error_est + 4 * std::sqrt(static_cast<double>(n)) * kUnitRoundoff * lambda_max;
    // sigma_i of J (i < r = min(rows, cols)) is sqrt of the i-th largest eigenvalue of J J^T;
    // |sigma^2 - lambda| <= delta gives |sigma - sqrt(lambda)| <= min(sqrt(delta),
    // delta / sqrt(lambda)), widened by 8 u for the rounding of those two operations.
    const long r = std::min(n, cols);
    VectorXd sigma(r), radius(r);
    const double delta = s.gram_error;
    for (long i = 0; i < r; ++i) {
        sigma[i] = std::sqrt(std::max(0.0, lambda[n - 1 - i]));
        const double rad =
            sigma[i] > 0 ? std::min(std::sqrt(delta), delta / sigma[i]) : std::sqrt(delta);
        radius[i] = rad * (1 + 8 * kUnitRoundoff);
    }
    const std::string method = "G=JJ^T on the device (cuBLAS + kernels) + cuSOLVER syevd (all)";
    const SvdResult sv = svd_from_values(sigma, radius, method);
    s.mode = to_string(LargeSvdMode::full);
    s.method = method + "; enclosures Weyl on G (no refinement)";
    s.gram_sigma = sv.sigma;
    const double t_def =
        static_cast<double>(std::max(n, cols)) * std::numeric_limits<double>::epsilon();
    s.rank = 0;  // values whose interval clears the threshold: a lower bound on the rank
    for (long i = 0; i < r; ++i)
        if (sv.lo[i] > t_def * sv.sigma[0]) s.rank = i + 1;
    for (RefinedTriplet* t : {&s.max, &s.min}) {
        const long i = t == &s.max ? 0 : r - 1;
        t->sigma = t->sigma_gram = sv.sigma[i];
        t->enclosure = sv.enclosure(i);
        t->basis = "gram-weyl";
    }
    s.strict = kappa(sv, n, cols, KappaConvention::strict, t_def);
    s.nz = kappa(sv, n, cols, KappaConvention::nz, opt.rtol < 0 ? t_def : opt.rtol);
    const Kappa& kr = std::isfinite(s.strict.value) ? s.strict : s.nz;
    s.rel_error_bound = kr.value > 0 && std::isfinite(kr.enclosure.hi)
                            ? (kr.enclosure.hi - kr.enclosure.lo) / (2 * kr.value)
                            : std::numeric_limits<double>::infinity();
    s.notes.emplace_back("J = [J_Q, J_K, J_V] at W + C (SC Thm 3.3); G assembled on " +
                         ops.math_mode_description());
    if (n > cols)
        s.notes.emplace_back("tall J: sigma from the top " + std::to_string(r) +
                             " eigenvalues of J J^T");
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return s;
}

}  // namespace attnspec::gpu::jac_seq
