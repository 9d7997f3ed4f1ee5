// check-kernel attention-vjp and attention-jvp: a user's derivatives of attention against the
// float64 references of kernels/derivative_reference.hpp, with the two tolerances of the forward
// check (kernels/attention_check.hpp): the rounding bound (proofs/kernel_tolerance.md, (D1)-(D9))
// and the baseline rule (factor x the error of attnspec's plain derivatives at the same
// precisions, kernels/derivative_baseline.hpp, plus a floor), taken per row of each output (a
// query row of dQ and dO, a key row of dK and dV) and over each tensor. Verdicts as the forward's:
// pass, fail (beyond the rule, within the bound), wrong (beyond the bound, or NaN/Inf where the
// reference is finite). Masks: none, causal, boolean and additive (the forward's). Fully masked
// query rows (causal, N_q > N_k, or a mask hiding every key) expect zeros or NaN in dQ and dO.
// Memory O(B H N (d + d_v)) beyond the inputs; cost O(B H N_q N_k (d + d_v)) (vjp: through BLAS,
// heads on every core; jvp: one thread). CPU only; kernels/derivative_check.cpp.
#pragma once
#include <string>

#include "attnspec/kernels/attention_check.hpp"

namespace attnspec::kernels {

// The check of the three outputs of attention-vjp; `verdict` is the worst of the three.
struct VjpCheckResult {
    KernelVerdict verdict = KernelVerdict::pass;
    KernelCheckResult dq, dk, dv;
    std::string summary;  // one line: the verdict and each tensor's
};

// Checks dq, dk, dv (shapes of q, k, v) of attention on `p` for the cotangent `dout` (shape of
// O). DataError (65) on inconsistent shapes; NaN/Inf in the outputs count as wrong elements.
VjpCheckResult check_attention_vjp(const AttentionProblem& p, const Array& dout, const Array& dq,
                                   const Array& dk, const Array& dv, const KernelCheckOptions& opt);

// Checks `dout` (shape of O) of attention-jvp on `p` for the tangents tq, tk, tv (shapes of q, k,
// v). DataError (65) on inconsistent shapes.
KernelCheckResult check_attention_jvp(const AttentionProblem& p, const Array& tq, const Array& tk,
                                      const Array& tv, const Array& dout,
                                      const KernelCheckOptions& opt);

}  // namespace attnspec::kernels
