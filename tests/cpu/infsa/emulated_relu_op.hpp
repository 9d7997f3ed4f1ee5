// The perron_tiled twin's device operator (gpu::ReluKernelOp) with its kernel launch replaced by a
// loop over the grid's threads (one per output row) calling the kernel's per-thread function
// (gpu/src/infsa/relu_kernel_logic.hpp) and the host enclosures of relu_kernel_common.hpp, exactly
// as the device operator wraps its kernel. Shared by the CPU tests of the twin's arithmetic
// (tests/cpu/infsa/test_relu_kernel_logic.cpp) and of its gpu-check tolerances
// (tests/cpu/gpu/test_perron_check_tolerance.cpp).
#pragma once
#include <Eigen/Dense>

#include "../../../gpu/src/infsa/relu_kernel_common.hpp"
#include "../../../gpu/src/infsa/relu_kernel_logic.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/infsa/perron.hpp"

namespace attnspec::test {

class EmulatedReluOp final : public NonnegOperator {
  public:
    EmulatedReluOp(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, long tile, int fault)
        : Q_(Q), K_(K), tile_(tile), fault_(fault) {
        nq_ = Q.rowwise().norm();
        nk_ = K.rowwise().norm();
        delta_ = 2 * gamma_n(double(Q.cols()) + 2);
    }
    Eigen::Index size() const override { return Q_.rows(); }
    void apply(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z, Eigen::VectorXd& lo,
               Eigen::VectorXd& hi) const override {
        const long N = long(Q_.rows()), d = long(Q_.cols());
        const Eigen::MatrixXd& R = transpose ? K_ : Q_;
        const Eigen::MatrixXd& C = transpose ? Q_ : K_;
        z.resize(N);
        Eigen::VectorXd f(N);
        for (long r = 0; r < N; ++r)  // thread r
            z[r] = gpu::perron_logic::row_apply(R.data(), C.data(), N, d, tile_, r, x.data(),
                                                fault_, &f[r]);
        frob = gpu::perron_logic::enclose_frob(f, delta_, nq_, nk_, d);
        gpu::perron_logic::enclose_products(x, transpose ? nk_ : nq_, transpose ? nq_ : nk_, delta_,
                                            d, z, lo, hi);
    }
    mutable Interval frob;

  private:
    const Eigen::MatrixXd& Q_;
    const Eigen::MatrixXd& K_;
    long tile_;
    int fault_;
    Eigen::VectorXd nq_, nk_;
    double delta_;
};

}  // namespace attnspec::test
