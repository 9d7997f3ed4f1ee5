// kappa(J) of one attention head's weight Jacobian through the large-scale spectral engine
// (spectral/operator_spectrum.hpp): J J^T assembled from the factors (jacobian_gram_outer) and
// matrix-free J v / J^T u for the refinement; J is never formed. CPU only; CUDA twin (Gram on the
// device, cuSOLVER syevd, Weyl enclosures, no refinement):
// gpu::jacobian_spectrum, gpu/src/attention/jacobian_spectrum_cuda.cu.
#pragma once
#include "attnspec/attention/attention.hpp"
#include "attnspec/spectral/operator_spectrum.hpp"

namespace attnspec {

// kappa of the weight Jacobian J = [J_Q, J_K, J_V] (Nd x 3Dd) of one attention head at W + C,
// without forming J: G = jacobian_gram_outer(h) (~N^2 d^2 (d + min(N,D)) flops, 8 (Nd)^2 bytes)
// and JacobianOperator for the refinement. product_rel_error defaults to the larger of the
// generic value and (N + D + d + 3) u, + u with biases (each entry of J v is such a sum;
// proofs/jacobian_routes.md). With biases, J is at the biased head (Q, K carry b_Q, b_K).
// Validates the head (DataError); refuses Gram work above opt.max_bytes before allocating.
OperatorSpectrum jacobian_spectrum(const Head& h, const LargeSvdOptions& opt = {});

}  // namespace attnspec
