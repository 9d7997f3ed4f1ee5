// CUDA twin of jacobian_spectrum (lib: attention/jacobian_spectrum.hpp): sigma_max, sigma_min and
// kappa of one head's weight Jacobian J = [J_Q, J_K, J_V] (Nd x 3Dd) at W + C, from G = J J^T
// assembled on the device from the factors (never dense J; the formulas of jacobian_gram_outer,
// gpu/src/attention/jacobian_spectrum_logic.hpp) and all its eigenvalues by cuSOLVER syevd (values
// only, lower triangle). Enclosures: sigma_i in the Weyl interval of its Gram eigenvalue with the
// Gram error delta (10 x a power-step estimate of ||fl(G) - J J^T|| with matrix-free J on the host
// + 4 sqrt(n) u lambda_max for the eigensolver), then the CPU's svd_from_values and kappa()
// (spectral/svd.hpp) give the ends, rank and both kappas with their enclosures. No refinement
// (the CPU path's Temple step): an end below ~sqrt(delta) is enclosed from 0. The forward state
// (S, Q, K, V, A) is computed on the host (O(N^2 d)). Host wrapper
// gpu/src/attention/jacobian_spectrum_cuda.cpp, kernels jacobian_spectrum_cuda.cu.
#pragma once
#include "attnspec/attention/attention.hpp"
#include "attnspec/gpu/base/context.hpp"
#include "attnspec/spectral/operator_spectrum.hpp"

namespace attnspec::gpu {

// syevd (values only) work space in doubles per Gram row: tridiagonal reduction blocks (~64
// wide) plus the divide-and-conquer values pass; an estimate, re-checked against the queried size.
inline constexpr double kSyevdWorkPerRow = 66;
// Device bytes for a (N, D, d) head: G (8 (Nd)^2) + factors + syevd workspace (estimated).
// Both builds (gpu/src/attention/attention_common.cpp).
double jacobian_spectrum_device_bytes(long N, long D, long d);

// Same options and result type as the CPU routine. Used: max_bytes (refused with DataError, exit
// 65, before allocating when the device estimate exceeds it), rtol, seed (power-step start).
// mode is always "full" (every eigenvalue of G); refine_steps, pcg_max_iter, certify, progress
// and notice are not used. Validates the head (DataError).
OperatorSpectrum jacobian_spectrum(Context& ctx, const Head& h, const LargeSvdOptions& opt = {});

}  // namespace attnspec::gpu
