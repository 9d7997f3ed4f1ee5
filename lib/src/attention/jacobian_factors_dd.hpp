// Private to the Jacobian sources: the factors of J~ for the double-double certificate, computed
// in double-double and rounded once, with a proved bound on ||J~ - J||_2
// (proofs/spectral_enclosure.md §8, "The factors' error").
#pragma once
#include <Eigen/Dense>
#include <vector>

#include "attnspec/attention/attention.hpp"

namespace attnspec {

using RowMatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct DdFactors {
    RowMatD X;                       // the effective head's X (exact)
    Eigen::MatrixXd Q, K, S;         // rounded from double-double: Q^, K^, S^
    std::vector<Eigen::MatrixXd> P;  // P^c^, c < d
    double s = 1;
    // ||J~ - J||_2 <= error, J the exact weight Jacobian at the effective head, J~ the same
    // formulas on the factors above (+inf when unknown: logits beyond ~1e13); its parts (dJ_Q,
    // dJ_K in Frobenius, dJ_V in 2-norm)
    double error = 0, error_q = 0, error_k = 0, error_v = 0;
    double exp_relative = 0;  // delta: the relative error of each exp(t) (A-exp and the pairs')
};

// Validates (DataError); error = +inf for logits whose double-double error the bound cannot carry
// (|s Q K^T| beyond ~1e13; the certificate then falls back to A2). Cost
// O(N D d + N^2 d) double-double multiply-adds and O(N^2 d^2) flops for the bound; memory
// 2 d N^2 doubles while it runs (P^c and its bound), d N^2 returned.
DdFactors dd_factors(const Head& h);

}  // namespace attnspec
