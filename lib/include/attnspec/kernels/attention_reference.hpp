// The float64 reference of attention, one query row at a time, and the rounding bound of
// proofs/kernel_tolerance.md evaluated on it. For query row i with visible keys j < n:
//   x_j = s q_i.k_j,  m = max_j x_j,  t_j = exp(x_j - m),  l = sum_j t_j,  p_j = t_j / l,
//   o_c = sum_j p_j v_jc,  lse = m + log l.
// `analyze_row` returns o and lse with, per element, (a) the bound on the error of any kernel that
// rounds as RoundingModel says (proofs/kernel_tolerance.md, eqs. (B1)-(B7)) and (b) the bound on
// the float64 reference's own error (the same analysis with u = 2^-53). Memory O(n + d_v) scratch
// per row (no N x N matrix); cost O(n (d + d_v)). CPU only; kernels/attention_reference.cpp.
#pragma once
#include <vector>

#include "attnspec/kernels/precision.hpp"

namespace attnspec::kernels {

// How a kernel rounds (proofs/kernel_tolerance.md, "Assumptions"). Units u are relative errors of
// one rounding; tau are absolute errors of one underflow (flush to zero allowed).
struct RoundingModel {
    double u_a = 0;      // accumulation: dot products, scale, max shift, exp, sums, rescalings
    double u_in = 0;     // operand rounding of q, k, v on entry (0 when they are representable)
    double u_p = 0;      // P rounded before the PV product (0: kept in the accumulation format)
    double u_out = 0;    // the output's storage rounding
    double c_exp = 4;    // exp (and log) accurate to c_exp u_a relative (2 ulps = 4 u)
    bool online = true;  // online softmax: up to n - 1 rescalings of the running sums
    double tau_a = 0, tau_p = 0, tau_out = 0;  // underflow in accumulation, P, output
};

// The model of a kernel declared with storage format `storage` and accumulation `accumulate`;
// `inputs_exact`: every q, k, v value is representable in the operand format.
RoundingModel kernel_model(Format storage, Format accumulate, bool inputs_exact);
// The model of the float64 reference itself: u = 2^-53, one pass with the max taken first,
// exp_lanes within 4 u and glibc's log within 1 ulp (c_exp = 4, kernels/exp_lanes.hpp), no
// storage rounding.
RoundingModel reference_model();

// One query row: pointers to q_i (d values), K (n x d, row stride d), V (n x d_v, stride d_v).
struct RowInput {
    const double* q = nullptr;
    const double* K = nullptr;
    const double* V = nullptr;
    long n = 0, d = 0, dv = 0;
    double scale = 0;
    // Optional (boolean and additive masks): the visible keys are keys[0 .. n-1] (indices into K
    // and V) instead of 0 .. n-1, and bias[key] is added to each scaled logit, s q.k + bias
    // (proofs/kernel_tolerance.md, "Additive masks": the kernel adds it in its accumulation
    // format to the bias rounded to the operand format).
    const long* keys = nullptr;
    const double* bias = nullptr;
    long key(long j) const { return keys ? keys[j] : j; }
    // Optional absolute bounds on how far the kernel's operands may lie from q, K, V (nullptr:
    // none; all three or none): |dq_c|, |dK_jc|, |dV_jc| (layouts of q, K, V). The kernel model
    // then covers a kernel whose operands are any such perturbation, rounded to the model
    // (spec-attention's projections, proofs/kernel_tolerance.md, "SpecA forward"); the
    // reference's own error is that of q, K, V as given.
    const double* dq = nullptr;
    const double* dK = nullptr;
    const double* dV = nullptr;
};

struct RowAnalysis {
    std::vector<double> o;          // the float64 reference output (d_v)
    std::vector<double> bound;      // kernel rounding bound per element, reference error included
    std::vector<double> ref_error;  // bound on |o_ref - o_exact| per element
    double lse = 0, lse_bound = 0;  // log-sum-exp and its bound (reference error included)
    double denominator_error = 0;   // the kernel's bound eps_l on the softmax sum's rel. error
    double max_abs_logit = 0;       // max_j |x_j|
    double max_abs_pv = 0;          // max_c sum_j p_j |v_jc|
    bool masked = false;            // n == 0: no key visible (o, lse undefined)
};

// Scratch reused across rows (no allocation per row after the first).
struct RowScratch {
    std::vector<double> x, A, t, p, kappa, kappa_ref;  // p_j = t_j / l
    std::vector<double> Ap, dx;  // with a perturbation: A_j of |q| + dq, |k| + dk; logit error
    std::vector<double> absM;    // with a bias: |bias| of each visible key
};

// The reference row and both bounds. A bound is +inf where the analysis gives none (the softmax
// denominator's relative error bound reaches 1). O(n (d + d_v)).
void analyze_row(const RowInput& in, const RoundingModel& kernel, RowScratch& s, RowAnalysis& out);

}  // namespace attnspec::kernels
