// The InfSA affinity Â of one (sample, head) (IS, MATH.md §3): ReLU(Q K^T / d_h) / (||.||_F + eps)
// (the public code's form) or the row softmax of Q K^T / sqrt(d_h). One dgemm through OpenBLAS
// CBLAS; dense N x N, refused beyond a memory limit. CPU only (the reference the CUDA twins are
// checked against).
#pragma once
#include <Eigen/Dense>
#include <string>
#include <vector>

namespace attnspec {

enum class AffinityKind { relu, softmax };  // relu: ReLU(QK^T/d_h)/(||.||_F+eps) (code form)
// "relu" / "softmax" (one table, base/enum_names.hpp).
const char* to_string(AffinityKind k);
// Inverse of to_string; throws Error(Usage) naming parameter "affinity" on an unknown name.
AffinityKind affinity_kind_from_string(const std::string& s);

struct AffinityOptions {
    AffinityKind kind = AffinityKind::relu;
    double eps = 1e-6;     // the code's epsilon in the Frobenius normalisation
    double max_bytes = 0;  // refuse dense N x N beyond this; 0: memory_limit_bytes() (the budget)
};

struct Affinity {
    Eigen::MatrixXd A_hat;  // N x N, entrywise >= 0
    double frob_plus = 0;   // relu: ||A+||_F before normalisation; softmax: 0
    AffinityKind kind = AffinityKind::relu;
};

// Validates Q, K (same N x d_h shape, non-empty, finite; DataError otherwise) and the size.
void check_qk(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, const std::string& who);

// Dense affinity of one (sample, head). Cost O(N^2 d_h) (one dgemm) and 8 N^2 bytes.
// Throws DataError on bad shapes, NaN/Inf, eps < 0 (parameter "eps"), or 8 N^2 bytes beyond
// opt.max_bytes (parameter "max_bytes", option --max-memory).
Affinity affinity(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                  const AffinityOptions& opt = {});

// Batched / multi-head: Qs[h], Ks[h] for each (sample, head); one Affinity each. Same cost and
// failures as affinity() per block, DataError when the block counts differ.
std::vector<Affinity> affinities(const std::vector<Eigen::MatrixXd>& Qs,
                                 const std::vector<Eigen::MatrixXd>& Ks,
                                 const AffinityOptions& opt = {});

}  // namespace attnspec
