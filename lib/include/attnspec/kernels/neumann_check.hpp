// check-kernel neumann: a user's Neumann-kernel output against the float64 reference, with the
// rounding bound of proofs/kernel_tolerance.md ("Neumann", (N1)-(N6)) and the baseline rule of
// kernels/attention_check.hpp. The operation (docs/MATH.md §3, "Neumann kernel"), per head, with
// the affinity of pure-infsa:
//   A+ = ReLU(Q K^T / d),  Â = A+ / (||A+||_F + eps),  G = gamma Â,
//   O = ((I - G)^-1 - I) V = (I - G)^-1 G V,
// gamma in (0, 1) (||G||_2 <= gamma ||Â||_F < 1: the series converges). Square only (N_q = N_k);
// Q, K, V of rank 2..4, grouped K/V heads and d_v != d allowed; no mask, no scale. The reference
// forms G and solves (I - G) O = G V by LU with partial pivoting in float64: memory O(N^2) per
// head (unavoidable for the inverse), cost O(B H N^2 (N + d + d_v)); N above kNeumannMaxN is
// refused before any allocation. CPU only; kernels/neumann_check.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attnspec/kernels/attention_check.hpp"
#include "attnspec/kernels/linear_infsa_check.hpp"

namespace attnspec::kernels {

// The largest N (N_q = N_k) neumann accepts: one head's four N x N float64 matrices (G, the
// bound on its error, the LU of I - G and its inverse: 128 MiB at 2048) and O(N^3) per head.
inline constexpr long kNeumannMaxN = 2048;

// gamma and eps as LinearInfsaParams (defaults 0.95, 1e-6); neumann asks gamma in (0, 1).
// DataError unless N_q = N_k <= kNeumannMaxN (parameter "N"), no mask, gamma in (0, 1) and
// eps finite and > 0 (parameters "gamma", "eps"), before any N x N allocation.
void check_neumann_params(const AttentionProblem& p, const LinearInfsaParams& par);

// Checks `o` (shape (.., N, d_v)); DataError as check_neumann_params and on shapes. q, k, v may
// hold NaN/Inf: the expected pattern of kernels/infsa_nonfinite.hpp (expected_neumann_nonfinite).
KernelCheckResult check_neumann(const AttentionProblem& p, const LinearInfsaParams& par,
                                const Array& o, const KernelCheckOptions& opt);

// The float64 reference output (shape (.., N, d_v)).
Array reference_neumann(const AttentionProblem& p, const LinearInfsaParams& par);

// attnspec's plain Neumann kernel at the declared precisions, the literal formula
// ((I - G)^-1 - I) V: A+ stored in the storage format, G, the LU with partial pivoting of I - G,
// X = (I - G)^-1 V by both triangular solves and X - V, every operation rounded to the
// accumulation format, the output in output_format(storage). The check's baseline takes per
// element the worse of this and the form (I - G)^-1 (G V) (proofs/kernel_tolerance.md, (N6)).
Array baseline_neumann(const AttentionProblem& p, const LinearInfsaParams& par, Format storage,
                       Format accumulate);

// The stress cases of neumann: linear_infsa_cases(), then
//   rank-one  q_i = k_i = |g_i| u for one random unit u per head (plus N(0, 1) values in V):
//             A+ has rank one, ||G||_2 = gamma ||Â||_F (close to gamma: the worst conditioning
//             of I - G the parameters allow).
std::vector<std::string> neumann_cases();
// The case `name` (UsageError naming "stress_case" when unknown), reproducible from (name, seed,
// shape) as generate_linear_infsa, values rounded to `storage`.
AttentionProblem generate_neumann(const std::string& name, std::uint64_t seed,
                                  const std::vector<std::int64_t>& shape, Format storage);

}  // namespace attnspec::kernels
