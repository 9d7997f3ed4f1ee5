// check-kernel pure-infsa: a user's one-hop InfSA output against the float64 reference, with the
// rounding bound of proofs/kernel_tolerance.md ("Pure InfSA", (P1)-(P5)) and the baseline rule of
// kernels/attention_check.hpp. The operation is one InfSA layer of the public code (docs/MATH.md
// §3, the affinity of infsa/affinity.hpp), per head:
//   A+ = ReLU(Q K^T / d),  Â = A+ / (||A+||_F + eps),  O = gamma Â V
// (issue 31 writes the factor rho; it is the layer's discount gamma). Q, K, V as for attention
// (rank 2..4, grouped K/V heads, d_v != d, N_k != N_q); no mask, no scale. The Frobenius norm is
// accumulated row by row with the unnormalised rows of A+ V: memory O(N_q d_v) per head beyond
// the inputs (no N x N); cost O(B H N_q N_k (d + d_v)). CPU only; kernels/pure_infsa_check.cpp.
#pragma once
#include "attnspec/kernels/attention_check.hpp"
#include "attnspec/kernels/linear_infsa_check.hpp"

namespace attnspec::kernels {

// gamma and eps as for linear-infsa (LinearInfsaParams: the library's defaults 0.95 and 1e-6,
// AffinityOptions::eps). Stress cases: linear_infsa_cases() / generate_linear_infsa (relu-zero
// makes every q_i . k_j negative: A+ = 0 and O = 0).

// Checks `o` (shape (.., N_q, d_v)); DataError like check_linear_infsa; inputs with NaN/Inf as
// kernels/infsa_nonfinite.hpp states.
KernelCheckResult check_pure_infsa(const AttentionProblem& p, const LinearInfsaParams& par,
                                   const Array& o, const KernelCheckOptions& opt);

// The float64 reference output (shape (.., N_q, d_v)).
Array reference_pure_infsa(const AttentionProblem& p, const LinearInfsaParams& par);

// attnspec's plain one-hop InfSA at the declared precisions: every operation rounded to the
// accumulation format, A+ stored in the storage format, the output in output_format(storage).
Array baseline_pure_infsa(const AttentionProblem& p, const LinearInfsaParams& par, Format storage,
                          Format accumulate);

}  // namespace attnspec::kernels
