// The perron_tiled twin's operator with its kernel body and launch (relu_kernel_kernels.hpp) run
// on the CPU grid runner (attnspec/gpu/base/cpu_grid.hpp) and the host enclosures of
// relu_kernel_common.hpp around each pass, exactly as the device operator wraps its kernel; any
// fault code (gpu-check's and the runner-only ones of infsa_faults.hpp) reaches the body. Shared
// by the CPU tests of the twin's arithmetic (tests/cpu/infsa/test_relu_kernel_logic.cpp) and of
// its gpu-check tolerances (tests/cpu/gpu/test_perron_check_tolerance.cpp).
#pragma once
#include <Eigen/Dense>

#include "../../../gpu/src/infsa/relu_kernel_common.hpp"
#include "../../../gpu/src/infsa/relu_kernel_kernels.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/gpu/base/cpu_grid.hpp"
#include "attnspec/infsa/perron.hpp"

namespace attnspec::test {

class EmulatedReluOp final : public NonnegOperator {
  public:
    EmulatedReluOp(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, int fault)
        : Q_(Q), K_(K), fault_(fault) {
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
        gpu::perron_logic::run_relu_rows(grid, R.data(), C.data(), N, d, x.data(), fault_, z.data(),
                                         f.data());
        frob = gpu::perron_logic::enclose_frob(f, delta_, nq_, nk_, d);
        gpu::perron_logic::enclose_products(x, transpose ? nk_ : nq_, transpose ? nq_ : nk_, delta_,
                                            d, z, lo, hi);
    }
    mutable Interval frob;
    mutable gpu::CpuGrid grid;  // its counters: the launches so far

  private:
    const Eigen::MatrixXd& Q_;
    const Eigen::MatrixXd& K_;
    int fault_;
    Eigen::VectorXd nq_, nk_;
    double delta_;
};

}  // namespace attnspec::test
