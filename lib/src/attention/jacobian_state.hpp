// Private to the Jacobian sources: the forward state at the effective weights and the two
// differential kernels (forward mode dA = J [dX | dW], reverse mode [dX | dW]bar = J^T Abar).
#pragma once
#include <Eigen/Dense>
#include <string>

#include "attnspec/attention/attention.hpp"

namespace attnspec {

struct AttentionState {
    Eigen::MatrixXd X, W_Q, W_K, W_V;  // effective weights W + C
    double s = 1;
    Eigen::MatrixXd Q, K, V, S, A;
    Eigen::Index N, D, d;
    // magnitude: the absolute-value evaluation of the same formulas (X, W <- |X|, |W|; S kept;
    // V - A -> V + A in P^c), the running-error scale of every route (jacobian.hpp).
    bool magnitude = false;
    explicit AttentionState(const Head& h, bool magnitude = false);  // validates
    // P^c (N x N): P^c_ik = S_ik (V_kc - A_ic) = (Lambda(p_i) V)_kc, the softmax row block of
    // Lambda applied to column c of V (S_ik (V_kc + A_ic) for the magnitude state).
    Eigen::MatrixXd P(Eigen::Index c) const;
};

// Forward mode: dA (N x d) for perturbations dX (N x D) and dW_* (D x d); a null pointer is a
// zero perturbation. O(N D d + N^2 d).
Eigen::MatrixXd attention_jvp(const AttentionState& st, const double* dX, const double* dW_Q,
                              const double* dW_K, const double* dW_V);

// Reverse mode: for Abar (N x d) writes the adjoints of W_Q, W_K, W_V (D x d each) and X
// (N x D); a null output is skipped. O(N D d + N^2 d).
void attention_vjp(const AttentionState& st, const double* Abar, double* WQbar, double* WKbar,
                   double* WVbar, double* Xbar);

// Shared refusal helper: DataError "<what> (RxC) would need ..." when above max_bytes.
void refuse_dense(Eigen::Index rows, Eigen::Index cols, double max_bytes, const std::string& what);

}  // namespace attnspec
