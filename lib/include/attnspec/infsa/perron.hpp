// Collatz–Wielandt-certified Perron pairs of non-negative operators (proofs/infsa_neumann.md,
// "Perron certificate"): power iteration whose every step encloses rho(B) between
// min_i (Bx)_i/x_i and max_i (Bx)_i/x_i with rounding accounted, for dense B (Eigen GEMV) or any
// NonnegOperator (e.g. the tiled ReluKernelOp); ||B||_2 enclosed through B^T B. CPU only.
#pragma once
#include <Eigen/Dense>

#include "attnspec/base/check.hpp"

namespace attnspec {

// A non-negative operator that returns z = B x (or B^T x) together with rigorous entrywise
// enclosures z_lo <= (exact B x) <= z_hi, for x >= 0 (rounding and any input error accounted).
class NonnegOperator {
  public:
    virtual ~NonnegOperator() = default;
    virtual Eigen::Index size() const = 0;
    virtual void apply(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z,
                       Eigen::VectorXd& z_lo, Eigen::VectorXd& z_hi) const = 0;
};

// Dense B >= 0 (throws DataError on a non-square, empty, negative or non-finite B). The certified
// matrix is the stored B (referenced, must outlive the operator). Pads: gamma_N on each sum of
// non-negative terms. apply() costs O(N^2).
class DenseNonnegOp final : public NonnegOperator {
  public:
    explicit DenseNonnegOp(const Eigen::MatrixXd& B);
    Eigen::Index size() const override { return B_.rows(); }
    void apply(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z, Eigen::VectorXd& z_lo,
               Eigen::VectorXd& z_hi) const override;

  private:
    const Eigen::MatrixXd& B_;
};

struct PerronOptions {
    bool left = true;          // left: B^T v = rho v (what Linear-InfSA approximates); else right
    double rel_width = 1e-10;  // stop when (hi - lo) <= rel_width * hi
    int max_iter = 500;
};

struct PerronResult {
    double rho = 0;        // Rayleigh-type estimate (x^T z / x^T x)
    Interval rho_enc;      // Collatz–Wielandt: contains rho(B) rigorously
    Eigen::VectorXd vec;   // non-negative, unit 2-norm
    double residual = 0;   // ||B^T v - rho v||_2 (left) or ||B v - rho v||_2
    double gap_ratio = 0;  // estimate of |lambda_2| / rho from the iteration's contraction
    double vec_error = 0;  // estimate of sin angle(v, exact): residual / (rho (1 - gap_ratio))
    int iterations = 0;
    bool converged = false;  // enclosure reached rel_width
    bool left = true;
};

// Power iteration with CW bounds min_i z_i/x_i <= rho <= max_i z_i/x_i at every step. Cost: one
// op.apply per iteration. Never throws on non-convergence: check `converged` and the enclosure.
// The dense overload throws DataError like DenseNonnegOp.
PerronResult perron(const NonnegOperator& op, const PerronOptions& opt = {});
PerronResult perron(const Eigen::MatrixXd& B, const PerronOptions& opt = {});

// ||B||_2 of a dense B >= 0 enclosed via CW on B^T B (also non-negative), capped by the rounded-up
// ||B||_F. Cost O(N^2) per iteration (at most 2000). DataError like DenseNonnegOp.
Interval norm2_enclosure(const Eigen::MatrixXd& B, double rel_width = 1e-10);

struct AffinityNorms {
    double frob = 0;
    Interval norm2;     // ||Â||_2
    PerronResult left;  // rho(Â) and v
};
// ||Â||_F, the ||Â||_2 enclosure and the left Perron pair. Cost O(N^2) per iteration.
AffinityNorms affinity_norms(const Eigen::MatrixXd& A_hat);

}  // namespace attnspec
