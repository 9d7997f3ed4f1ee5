// check-kernel linear-infsa and pure-infsa on inputs holding NaN or Inf: which elements of the
// output must be non-finite, which finite (checked against the reference and bound of
// kernels/linear_infsa_check.hpp, pure_infsa_check.hpp), which may be either. Derived from the
// definitions in IEEE arithmetic. linear-infsa, per head (q~_i = q_i / sqrt(d), e_i = ||q~_i||,
// q_bar = sum_i e_i q~_i / (sum_i e_i + eps), s_j = max(0, q_bar.k_j / sqrt(d)), o = gamma sum_j
// s_j v_j / (sum_j s_j + eps), every row of the head the same), where max(0, NaN) is not determined
// (IEEE maxNum and std::max give 0, a ReLU written x > 0 ? x : 0 gives 0, torch.relu gives NaN)
// (docs/cli/check-kernel.md, "Non-finite inputs"):
//   * NaN or Inf in some q_i of the head: e_i is, so every component of q_bar is NaN (NaN, or
//     +-inf / inf) and every s_j = max(0, NaN): each output element of the head is 0 (every score
//     0) or non-finite (zero_or_nonfinite);
//   * otherwise, per key j of the head's K/V head, x_j = q_bar.k_j / sqrt(d) in float64:
//     +inf (Inf in k_j along the sign of q_bar): s_j = inf, the numerator inf x v_jc and the
//       denominator inf: every element non-finite;
//     NaN (NaN in k_j, or inf x 0): s_j is 0 or NaN: every element `either`;
//     -inf: s_j = 0 exactly (determined);
//   * NaN or Inf in v_jc: column c non-finite when s_j > 0; `either` when s_j = 0 (0 x NaN = NaN
//     in a kernel that multiplies it, nothing in one that skips zero scores).
// check-kernel pure-infsa (A+ = ReLU(Q K^T / d), A^ = A+ / (||A+||_F + eps), O = gamma A^ V),
// per head, from the entries y_ij = q_i.k_j / d in float64:
//   * some y_ij = +inf: ||A+||_F = inf, so row i of A^ holds inf / inf = NaN (row i of O
//     non-finite) and every finite entry of A^ is exactly 0: the other rows are 0 or non-finite
//     (zero_or_nonfinite; non-finite where a NaN entry's ReLU gave NaN, or 0 x NaN with v);
//   * otherwise some y_ij NaN: ||A+||_F is NaN or finite: every element `either`;
//   * NaN or Inf in v_jc: column c of row i non-finite when y_ij > 0, `either` when y_ij <= 0.
// The strongest expectation wins. Elements expected finite, and `either` ones a kernel left
// finite, are compared with the reference on the inputs with every row of q and of k holding
// NaN/Inf set to 0 (its scores or entries are then 0, as its -inf, or its NaN read as 0, give)
// and each NaN/Inf of v set to 0 (a v_jc of weight 0 adds nothing). CPU only;
// kernels/linear_infsa_nonfinite.cpp.
// check-kernel neumann (kernels/neumann_check.hpp: G = gamma A^ with A^ as pure-infsa's,
// O = ((I - G)^-1 - I) V = (I - G)^-1 G V), per head, from the same entries y_ij:
//   * some y_ij = +inf: every finite entry of A^ is 0 and entry ij is NaN, so row i of O
//     (= G_i.(V + O)) is non-finite and every other row, 0 in exact arithmetic, is
//     zero_or_nonfinite (a dense LU or solve can spread the NaN);
//   * otherwise some y_ij NaN: every element `either` (||A+||_F NaN or finite);
//   * NaN or Inf in v_jc: O_rc = sum_j ((I - G)^-1 G)_rj v_jc with (I - G)^-1 G > 0 at rj exactly
//     when row r reaches j by a path of length >= 1 through entries y > 0: column c of row r
//     non-finite when it reaches such a j through entries that stay > 0 in the storage format,
//     `either` otherwise (0 x NaN in a dense product; an entry that underflows in storage gives a
//     skip-zero kernel a finite value);
//   * y_ij = -inf: ReLU gives exactly 0 (no edge).
// The strongest expectation wins; the compared elements as for pure-infsa
// (kernels/neumann_nonfinite.cpp).
#pragma once
#include <vector>

#include "attnspec/kernels/attention_nonfinite.hpp"
#include "attnspec/kernels/linear_infsa_check.hpp"

namespace attnspec::kernels {

// The expected pattern of o (shape (.., N_q, d_v)) of linear-infsa on `p`. DataError as
// check_linear_infsa. O(B H (N_q d + N_k (d + d_v))).
std::vector<Expect> expected_linear_infsa_nonfinite(const AttentionProblem& p,
                                                    const LinearInfsaParams& par);
// The same for pure-infsa. O(B H N_q N_k d).
std::vector<Expect> expected_pure_infsa_nonfinite(const AttentionProblem& p,
                                                  const LinearInfsaParams& par);
// The same for neumann; `storage` the kernel's storage format (an entry of A+ it rounds to 0 is
// no edge). DataError as check_neumann. O(B H N^2 d) and O(N^2) per distinct key row j of a head
// whose v_j holds NaN/Inf.
std::vector<Expect> expected_neumann_nonfinite(const AttentionProblem& p,
                                               const LinearInfsaParams& par, Format storage);

}  // namespace attnspec::kernels
