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

// gpu-check tolerances of the Perron twin, known before the device answers (issue 32): the
// largest enclosure an honest device can return, from the CPU's enclosure of the same exact value
// and the inputs' norms, never from the device's own width. An honest device's raw sum z has
// lo(z) <= exact <= cpu_hi, so z <= z_up = (cpu_hi d / (1 - 2u) + nr pad_sum) / (1 - g) (for
// ||A+||_F: 4u, pad, gamma_{2N+4}); the width hi(z) - lo(z) grows with z, so its value at z_up
// bounds the device's. |gpu - cpu| <= width_cpu + width_gpu (both enclose the exact value).
// Products: the largest over entries of cpu_hi - cpu_lo + width(z_up), nr / nc / delta as for
// enclose_products.
double product_check_tolerance(const Eigen::VectorXd& x, const Eigen::VectorXd& nr,
                               const Eigen::VectorXd& nc, double delta, long d,
                               const Eigen::VectorXd& cpu_lo, const Eigen::VectorXd& cpu_hi);
// ||A+||_F midpoints: cpu.radius() + width(F_up) / 2, N tokens.
double frobenius_check_tolerance(const Interval& cpu, double delta, const Eigen::VectorXd& nq,
                                 const Eigen::VectorXd& nk, long d);
// rho(A+) midpoints of two converged Collatz-Wielandt enclosures: converged means
// hi - lo <= rel_width hi, and an honest lo <= rho <= cpu.hi gives hi <= cpu.hi / (1 - rel_width),
// so the device's radius is at most rel_width cpu.hi / (2 (1 - rel_width)); + cpu.radius().
double rho_check_tolerance(const Interval& cpu, double rel_width);

}  // namespace attnspec::gpu::perron_logic
