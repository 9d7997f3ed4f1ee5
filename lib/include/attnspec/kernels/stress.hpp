// Stress inputs for attention kernels, named by how they build Q, K, V, reproducible from
// (case, seed, shape): one std::mt19937_64 stream (base/random.hpp) seeded with `seed`, drawn in
// the order q, k, v, row-major; values rounded to the declared storage format so that a kernel
// reading them in that format sees exactly the values the reference uses.
//   gaussian          q, k, v ~ N(0, 1)
//   large-logits      q, k ~ N(0, 1) scaled by one factor c so that max |s q.k| = 1e4
//   near-ties         k_j = b + 1e-3 g_j around one base row b, q = 3 N(0, 1): the largest logits
//                     of a row lie within ~1e-2 of each other
//   spike-v           q, k, v ~ N(0, 1), and row N/2 of V replaced by 1e3 e_0 (one-hot spike)
//   heavy-tail        q, k, v ~ Student's t with 3 degrees of freedom (power-law tails),
//                     clipped to +-1e3
//   rank-deficient-k  K = G H / sqrt(r), G (N x r), H (r x d), r = max(1, d / 8)
//   denormal          below the smallest normal 2^emin of the storage format (fp16 6.1e-5,
//                     bf16/tf32/fp32 1.18e-38, fp64 2.2e-308): q ~ N(0, 1), k = 2^(emin - 4) g
//                     with g ~ N(0, 1) clipped to +-8 (so |k| <= 2^(emin - 1) and the logits
//                     s q.k ~ 2^(emin - 4) are subnormal too), v = 2^(emin - 1) U(0, 1) (o and the
//                     products p_j v_jc subnormal as well); rounded to the storage format with
//                     gradual underflow. Not in stress_cases(): the rounding bound is analysed
//                     in that range for attention, attention-vjp and linear-infsa (whose case
//                     keeps only v: generate_linear_infsa) (proofs/kernel_tolerance.md,
//                     "Denormal-range inputs"); generate_stress and parse_stress take it.
// The non-finite cases (check-kernel attention, attention-vjp and attention-jvp; the propagation
// they test: kernels/attention_nonfinite.hpp, kernels/derivative_nonfinite.hpp): gaussian q, k,
// v, then per head one element, drawn after v from the same stream (row, then column, uniformly),
// set to a non-finite value:
//   nan-q / inf-q     q_ic = NaN / +inf
//   nan-k / inf-k     k_jc = NaN / +inf (a -inf logit in the rows with q_ic < 0)
//   nan-v / inf-v     v_jc = NaN / +-inf (the sign drawn next: -inf with probability 1/2)
// and, for the derivatives (kernels/derivative_nonfinite.hpp states their propagation), in the
// direction arrays of generate_directions (q, k, v then gaussian and finite), one element per head
// drawn after the directions from their stream, as above:
//   nan-do / inf-do   dO_ic = NaN / +-inf (attention-vjp)
//   nan-tq / inf-tq, nan-tk / inf-tk, nan-tv / inf-tv   the tangent's element (attention-jvp)
// CPU only; kernels/stress.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attnspec/kernels/attention_problem.hpp"
#include "attnspec/kernels/precision.hpp"

namespace attnspec::kernels {

enum class StressCase {
    gaussian,
    large_logits,
    near_ties,
    spike_v,
    heavy_tail,
    rank_deficient_k,
    denormal,
    nan_q,
    inf_q,
    nan_k,
    inf_k,
    nan_v,
    inf_v,
    nan_do,
    inf_do,
    nan_tq,
    inf_tq,
    nan_tk,
    inf_tk,
    nan_tv,
    inf_tv
};
const char* stress_name(StressCase c);
// Any case's name, the non-finite ones included.
StressCase parse_stress(const std::string& text, const std::string& parameter);
// The suite every check runs: every finite case in the order above (gaussian ..
// rank-deficient-k), not denormal.
std::vector<StressCase> stress_cases();
// The non-finite cases of attention (nan-q .. inf-v), in the order above, and whether `c` is one
// of the non-finite cases (those and nan-do .. inf-tv).
std::vector<StressCase> nonfinite_stress_cases();
bool is_nonfinite_case(StressCase c);
// The non-finite cases of attention-vjp (`vjp`: nan-q .. inf-v, nan-do, inf-do) or attention-jvp
// (nan-q .. inf-v, nan-tq .. inf-tv).
std::vector<StressCase> derivative_nonfinite_cases(bool vjp);
// The non-finite cases check-kernel `operation` takes: attention, linear-infsa, pure-infsa,
// neumann nan-q .. inf-v, attention-vjp and attention-jvp derivative_nonfinite_cases(), any other
// none.
std::vector<StressCase> nonfinite_cases_for(const std::string& operation);

// Q, K, V of `shape` = (N, d), (H, N, d) or (B, H, N, d) (K and V have Q's shape), mask none,
// scale `scale` (0: 1/sqrt(d)). DataError when a dimension is < 1 or the element count exceeds
// 2^28 per array. O(B H N d).
AttentionProblem generate_stress(StressCase c, std::uint64_t seed,
                                 const std::vector<std::int64_t>& shape, Format storage,
                                 double scale = 0);

// The directions of a derivative case, one array per shape in `shapes`: the cotangent dO
// (attention-vjp: the shape of O) or the tangents tq, tk, tv (attention-jvp: the shapes of q, k,
// v), N(0, 1) (Student's t, as above, for heavy-tail), drawn in order from a second
// std::mt19937_64 stream seeded with seed ^ 0xD1B54A32D192ED03 and rounded to `storage`; nan-do,
// inf-do (one shape) and nan-tq .. inf-tv (three shapes) then plant their element (DataError for
// another count of shapes). O(size).
std::vector<Array> generate_directions(StressCase c, std::uint64_t seed,
                                       const std::vector<std::vector<std::int64_t>>& shapes,
                                       Format storage);

// The mask of a boolean or additive case for q of shape `q_shape` ((N, d), (H, N, d) or
// (B, H, N, d); N_k = N_q = N): an array of shape (.., N, N) with q's leading dimensions, drawn
// from a third std::mt19937_64 stream seeded with seed ^ 0x9E3779B97F4A7C15, in this order:
//   per batch b, key padding: the last p_b keys hidden from every row, p_b uniform in
//   {0, .., floor(N / 4)};
//   per (b, h, i, j) row-major, two draws: U(0, 1) < 1/8 hides the key (holes: the visible keys
//   are no prefix), U(-4, 0) is an additive mask's value for a visible key;
//   fully masked rows: in every head the rows i = r (mod 16), r = 7 mod min(N, 16), hide every key.
// boolean: 1 visible, 0 hidden; additive: the value, -inf hidden, rounded to `storage`. DataError
// for a mask other than boolean or additive. O(B H N^2).
Array generate_mask(MaskKind mask, std::uint64_t seed, const std::vector<std::int64_t>& q_shape,
                    Format storage);

}  // namespace attnspec::kernels
