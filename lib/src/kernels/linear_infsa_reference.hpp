// The float64 Linear-InfSA reference of one head and its rounding bound (private to
// lib/src/kernels/; the head and parameter checks pure-infsa shares;
// kernels/linear_infsa_check.hpp; derivation: proofs/kernel_tolerance.md, "Linear-InfSA",
// (L1)-(L8)), and attnspec's plain kernel of one head at a declared precision.
#pragma once
#include <algorithm>
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

// The affinity A+ = ReLU(Q K^T / d) of pure-infsa and neumann (kernels/pure_infsa_check.cpp).
// (P1) of proofs/kernel_tolerance.md: the error of one stored entry of A+ under model M, A the
// absolute logit sum_l |q_l k_l| / d, a the entry.
double entry_error(const RoundingModel& M, double A, double a, long d);
// (P2): the figures of D^ = ||A^+||_F + eps under model M, from F^2 = sum a^2 and EF2 = sum of
// the squared entry errors over the m entries; `wide` widens the float64 sums, ref_dD is the
// reference's dD (< 0 for the reference's own pass).
struct NormBound {
    double EF = 0;     // ||A^+ - A+||_F bound
    double dD = 0;     // |D^ - D| bound
    double Dlo = 0;    // a lower bound on D
    double eps_D = 0;  // dD / Dlo (+inf when Dlo <= 0)
};
NormBound norm_bound(const RoundingModel& M, double F2, double EF2, double m, double eps,
                     double wide, double ref_dD);

// The baselines' entry a_ij of A+ = ReLU(Q K^T / d) (pure-infsa, neumann): the dot product and the
// product by inv_d with every result rounded by `ra`, the ReLU, stored in `storage`.
template <class R>
double baseline_entry(const HeadInput& in, long i, long j, double inv_d, Format storage, R ra) {
    double x = 0;
    for (long l = 0; l < in.d; ++l) x = ra(x + ra(in.Q[i * in.d + l] * in.K[j * in.d + l]));
    return round_to(std::max(0.0, ra(x * inv_d)), storage);
}

// Runs `fn(head, rows)` for every head of `p` (parameters already checked) and concatenates the
// heads' n_q x d_v rows into an array of shape (.., N_q, d_v).
template <class F>
Array per_head(const AttentionProblem& p, const LinearInfsaParams& par, F&& fn) {
    const ProblemShape sh = problem_shape(p);
    Array out;
    out.shape = sh.out_shape();
    out.values.reserve(static_cast<size_t>(sh.B * sh.H * sh.Nq * sh.dv));
    std::vector<double> rows;
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h) {
            fn(head_input(sh, p, par, b, h), rows);
            out.values.insert(out.values.end(), rows.begin(), rows.end());
        }
    return out;
}

}  // namespace attnspec::kernels::detail
