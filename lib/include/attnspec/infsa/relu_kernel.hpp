// The matrix-free InfSA operator A+ = ReLU(Q K^T / d_h) applied in tiles (one OpenBLAS dgemm per
// tile x tile block, never N x N), with rigorous enclosures of every product so that the
// Collatz–Wielandt bounds of infsa/perron.hpp hold for the exact A+ of the given Q, K; also
// encloses ||A+||_F. CPU only.
#pragma once
#include <Eigen/Dense>

#include "attnspec/base/check.hpp"
#include "attnspec/infsa/perron.hpp"

namespace attnspec {

// Enclosures account for the rounding of each q_i . k_j (gamma_{d+2} ||q_i|| ||k_j||, ReLU is
// 1-Lipschitz) and of the sums. Keeps references to Q and K (they must outlive the operator).
// The constructor throws DataError on bad Q, K (check_qk) or tile <= 0 (parameter "tile").
// apply() costs O(N^2 d_h) flops and O(N d_h + tile^2) memory.
class ReluKernelOp final : public NonnegOperator {
  public:
    ReluKernelOp(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, Eigen::Index tile = 1024);
    Eigen::Index size() const override { return Q_.rows(); }
    void apply(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z, Eigen::VectorXd& z_lo,
               Eigen::VectorXd& z_hi) const override;
    // ||A+||_F enclosure: accumulated during the first apply(), else one tiled pass.
    Interval frobenius() const;
    long passes() const { return passes_; }

  private:
    const Eigen::MatrixXd& Q_;
    const Eigen::MatrixXd& K_;
    Eigen::Index tile_;
    Eigen::VectorXd nq_, nk_;  // row 2-norms
    double delta_ = 0;         // per-entry pad factor: |fl(s_ij) - s_ij| <= delta nq_i nk_j
    mutable long passes_ = 0;
    mutable bool frob_done_ = false;
    mutable Interval frob_;
    Interval frobenius_from(double sum_sq) const;
};

}  // namespace attnspec
