// Matrix-free linear operators. LinearOperator (y = A x, y = A^T x without forming A) is the
// interface the spectral engine (operator_spectrum.hpp) consumes and the Jacobian operators
// (attention/jacobian.hpp) implement. SpectraGramOp adapts one to Spectra's `perform_op` protocol
// as the symmetric operator A A^T (or A^T A). DenseOperator wraps an explicit matrix. CPU only.
#pragma once
#include <Eigen/Dense>

namespace attnspec {

class LinearOperator {
  public:
    virtual ~LinearOperator() = default;
    virtual Eigen::Index rows() const = 0;
    virtual Eigen::Index cols() const = 0;
    // y = A x (x: cols(), y: rows()); y is resized by the caller.
    virtual void apply(const double* x, double* y) const = 0;
    // y = A^T x (x: rows(), y: cols()).
    virtual void apply_transpose(const double* x, double* y) const = 0;

    Eigen::VectorXd operator*(const Eigen::VectorXd& x) const {
        Eigen::VectorXd y(rows());
        apply(x.data(), y.data());
        return y;
    }
    Eigen::VectorXd transpose_times(const Eigen::VectorXd& x) const {
        Eigen::VectorXd y(cols());
        apply_transpose(x.data(), y.data());
        return y;
    }
};

class DenseOperator final : public LinearOperator {
  public:
    explicit DenseOperator(const Eigen::MatrixXd& A) : A_(A) {}
    Eigen::Index rows() const override { return A_.rows(); }
    Eigen::Index cols() const override { return A_.cols(); }
    void apply(const double* x, double* y) const override {
        Eigen::Map<Eigen::VectorXd>(y, A_.rows()).noalias() =
            A_ * Eigen::Map<const Eigen::VectorXd>(x, A_.cols());
    }
    void apply_transpose(const double* x, double* y) const override {
        Eigen::Map<Eigen::VectorXd>(y, A_.cols()).noalias() =
            A_.transpose() * Eigen::Map<const Eigen::VectorXd>(x, A_.rows());
    }

  private:
    const Eigen::MatrixXd& A_;
};

// Spectra operator for the symmetric Gram product: outer = true -> A A^T (size rows()),
// outer = false -> A^T A (size cols()). Spectra calls perform_op(x_in, y_out).
class SpectraGramOp {
  public:
    using Scalar = double;
    SpectraGramOp(const LinearOperator& A, bool outer)
        : A_(A), outer_(outer), tmp_(outer ? A.cols() : A.rows()) {}
    Eigen::Index rows() const { return outer_ ? A_.rows() : A_.cols(); }
    Eigen::Index cols() const { return rows(); }
    void perform_op(const double* x, double* y) const {
        if (outer_) {
            A_.apply_transpose(x, tmp_.data());
            A_.apply(tmp_.data(), y);
        } else {
            A_.apply(x, tmp_.data());
            A_.apply_transpose(tmp_.data(), y);
        }
    }

  private:
    const LinearOperator& A_;
    bool outer_;
    mutable Eigen::VectorXd tmp_;
};

}  // namespace attnspec
