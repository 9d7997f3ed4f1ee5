// The float64 Linear-InfSA reference of one head and its rounding bound (private to
// lib/src/kernels/; the head and parameter checks pure-infsa shares;
// kernels/linear_infsa_check.hpp; derivation: proofs/kernel_tolerance.md, "Linear-InfSA",
// (L1)-(L8)), and attnspec's plain kernel of one head at a declared precision.
#pragma once
#include <functional>
#include <vector>

#include "attnspec/kernels/attention_reference.hpp"
#include "attnspec/kernels/linear_infsa_check.hpp"

namespace attnspec::kernels::detail {

// One head: Q (n_q x d), K (n_k x d), V (n_k x d_v), row-major.
struct HeadInput {
    const double* Q = nullptr;
    const double* K = nullptr;
    const double* V = nullptr;
    long nq = 0, nk = 0, d = 0, dv = 0;
    LinearInfsaParams par;
};

struct HeadAnalysis {
    std::vector<double> o;          // the reference's pooled output (d_v)
    std::vector<double> bound;      // kernel rounding bound per element, reference error included
    std::vector<double> ref_error;  // bound on the reference's own error per element
    std::vector<double> first;      // the floor's first-order term per element (before u_out)
};

// DataError unless p.mask is none, gamma finite, eps finite and >= 0 (parameters "mask", "gamma",
// "eps"); shared by linear-infsa and pure-infsa.
void check_infsa_params(const AttentionProblem& p, const LinearInfsaParams& par);
// Head h of batch b of `src` (the problem, or its inputs rounded to the storage format).
HeadInput head_input(const ProblemShape& sh, const AttentionProblem& src,
                     const LinearInfsaParams& par, long b, long h);

// One head's figures as check_infsa compares them: row i of each at offset i * stride (stride 0:
// every row the same, linear-infsa's broadcast; d_v: one row per query, pure-infsa).
struct HeadRows {
    const double *ref, *bound, *ref_error, *base, *first;
    long stride;
};
// head(exact, rounded, model): the reference, bounds, floor terms and baseline of one head (the
// baseline reading `rounded`, the inputs rounded to the storage format).
using HeadFn = std::function<HeadRows(const HeadInput&, const HeadInput&, const RoundingModel&)>;
// The check of linear-infsa and pure-infsa: the factor, parameters and shapes checked
// (DataError), every head's rows compared (check_compare.hpp) and the verdict; r.scale = scale.
KernelCheckResult check_infsa(const AttentionProblem& p, const LinearInfsaParams& par,
                              const Array& o, const KernelCheckOptions& opt, double scale,
                              const HeadFn& head);

// The reference and both bounds; `kernel` is kernel_model(...) of attention_reference.hpp (u_p
// and tau_p stand for the storage of q_bar and of the scores). O(n_q d + n_k (d + d_v)).
void analyze_head(const HeadInput& in, const RoundingModel& kernel, HeadAnalysis& out);

// The reference output alone (two sweeps, no bound): what reference_linear_infsa returns.
void reference_head(const HeadInput& in, std::vector<double>& o);

// The plain kernel at (storage, accumulate) on inputs already rounded to the storage format.
void baseline_head(const HeadInput& in, Format storage, Format accumulate, std::vector<double>& o);

}  // namespace attnspec::kernels::detail
