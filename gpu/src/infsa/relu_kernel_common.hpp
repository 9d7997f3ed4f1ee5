// Host steps of the device ReLU operator shared by its wrapper (relu_kernel_cuda.cpp) and the
// CPU suite's emulation (tests/cpu/infsa/test_relu_kernel_logic.cpp): the enclosures of a
// computed product and of ||A+||_F (relu_kernel_common.cpp, both builds).
#pragma once
#include <Eigen/Dense>

#include "attnspec/base/check.hpp"

namespace attnspec::gpu::perron_logic {

// z: the raw row sums sum_c relu(fl s_rc) x_c on entry, A+ x (scaled by 1/d) on exit; lo, hi
// their rigorous enclosures (enclose_entry). nr / nc: the row norms of the output rows / of the
// summed rows; delta = 2 gamma_{d+2}.
void enclose_products(const Eigen::VectorXd& x, const Eigen::VectorXd& nr,
                      const Eigen::VectorXd& nc, double delta, long d, Eigen::VectorXd& z,
                      Eigen::VectorXd& lo, Eigen::VectorXd& hi);

// ||A+||_F from the per-row sums of squares f (enclose_frobenius).
Interval enclose_frob(const Eigen::VectorXd& f, double delta, const Eigen::VectorXd& nq,
                      const Eigen::VectorXd& nk, long d);

}  // namespace attnspec::gpu::perron_logic
