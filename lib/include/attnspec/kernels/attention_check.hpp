// check-kernel attention: a user's attention output O (and optionally its log-sum-exp) against
// the float64 reference, with two tolerances per element (proofs/kernel_tolerance.md):
//   * the rounding bound: no kernel that rounds correctly at the declared precisions (storage
//     format, accumulation format, exp within c_exp u) can be farther from the exact result;
//   * the baseline rule: factor x the error of attnspec's plain kernel at the same precisions
//     (kernels/attention_baseline.hpp) plus a floor, taken as a max-abs over each query row and
//     over the whole tensor, as FlashAttention's tests do.
// Verdict: pass (the tensor and every row within the rule), fail (beyond the rule, every element
// within the rounding bound), wrong (some element beyond the rounding bound, or NaN/Inf where the
// reference is finite). Fully masked rows (causal with N_q > N_k; a boolean or additive mask
// hiding every key of the row) expect all zeros
// (FlashAttention) or all NaN (PyTorch's math path); anything else there is wrong. Memory O(N d)
// beyond the inputs (a block of 64 query rows x N_k keys per thread); cost O(B H N_q N_k (d +
// d_v)) through BLAS, blocks of one head on every core (available_threads(), one BLAS thread
// each); the results do not depend on the thread count. Boolean and additive masks: row by row
// over each row's visible keys (no BLAS), O(N_k) scratch per row. CPU only;
// kernels/attention_check.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attnspec/kernels/attention_problem.hpp"
#include "attnspec/kernels/precision.hpp"

namespace attnspec::kernels {

enum class KernelVerdict { pass, fail, wrong };
const char* verdict_name(KernelVerdict v);

struct KernelCheckOptions {
    Format storage = Format::fp32;     // the kernel's dtype (inputs, P, output)
    Format accumulate = Format::fp32;  // its accumulation (fp32 or fp64)
    double factor = 2;                 // allowed = factor x baseline error + floor
    // floor = floor_units x max_c [(2 u_a max_j |x_j| + 4 u_a + u_p) sum_j p_j |v_jc| + u_out
    // |o_c|] over the row (the tensor's: the largest row floor): the first-order error of a kernel
    // that rounds each intermediate (logits, exp, sum, division, P, PV sum, output) once, which
    // no kernel avoids where the baseline happens to be accurate (proofs/kernel_tolerance.md)
    double floor_units = 2;
    int worst = 5;  // how many worst elements to keep per list
};

// One element of O (or of LSE, with c = -1): its index as the file holds it.
struct ElementReport {
    std::vector<std::int64_t> index;
    double got = 0, reference = 0;
    double error = 0;     // |got - reference| (inf for NaN/Inf)
    double bound = 0;     // the rounding bound, reference error included
    double allowed = 0;   // the row's factor x baseline error + floor
    double baseline = 0;  // the plain kernel's error at this element
};

struct KernelCheckResult {
    KernelVerdict verdict = KernelVerdict::pass;
    std::vector<std::int64_t> q_shape, k_shape, v_shape;
    double scale = 0;
    bool inputs_exact = true;  // q, k, v representable in the storage format
    long rows = 0, masked_rows = 0;
    long rows_beyond_rule = 0;  // rows whose max error exceeds their allowed error
    long elements_beyond_bound = 0, nonfinite = 0;
    // Inputs with NaN/Inf (attention, its derivatives, linear and pure InfSA: attention_nonfinite,
    // derivative_nonfinite, infsa_nonfinite.hpp): the elements of the output (and LSE) that must
    // be non-finite, and the elements that break the stated propagation (a finite value where
    // NaN/Inf is required, or a non-zero one where 0 or NaN/Inf is: also counted beyond the bound;
    // NaN/Inf where a finite value is required: also in nonfinite or the lse count). Both 0 for
    // finite inputs.
    long nonfinite_expected = 0, nonfinite_mismatch = 0;
    double tensor_error = 0, tensor_baseline = 0, tensor_allowed = 0, tensor_floor = 0;
    double worst_rule_ratio = 0;      // max over rows of row error / row allowed
    double worst_bound_ratio = 0;     // max over elements of error / bound
    double baseline_bound_ratio = 0;  // the same for the baseline (<= 1: a self-check)
    double max_reference_error = 0;   // max bound on the reference's own error
    std::vector<ElementReport> worst_by_bound, worst_by_rule;
    // log-sum-exp, when given
    bool has_lse = false;
    long lse_beyond_bound = 0;
    double lse_error = 0, lse_baseline = 0, lse_allowed = 0, lse_bound_ratio = 0;
    std::vector<ElementReport> worst_lse;
    std::string summary;  // one line: the verdict and why
};

// Checks `o` (shape (.., N_q, d_v)) and, when non-null, `lse` (shape (.., N_q)) against the
// reference of `p`. DataError (65) on inconsistent shapes. NaN/Inf in o and lse count as wrong
// elements where the reference is finite; with NaN/Inf in q, k or v the expected pattern of
// kernels/attention_nonfinite.hpp decides which elements must be non-finite (rows one at a time).
KernelCheckResult check_attention(const AttentionProblem& p, const Array& o, const Array* lse,
                                  const KernelCheckOptions& opt);

// attnspec's own plain kernel at the declared precisions on `p` (the baseline): O and LSE arrays
// shaped as a user's kernel writes them. O(B H N_q N_k (d + d_v)).
void baseline_attention(const AttentionProblem& p, Format storage, Format accumulate, Array& o,
                        Array& lse);

}  // namespace attnspec::kernels
