// Enclosures of the device ReLU operator's products (relu_kernel_common.hpp), sized as
// lib/src/infsa/relu_kernel.cpp sizes the CPU operator's.
#include "relu_kernel_common.hpp"

#include <algorithm>

#include "attnspec/base/rounding.hpp"
#include "relu_kernel_logic.hpp"

namespace attnspec::gpu::perron_logic {

void enclose_products(const Eigen::VectorXd& x, const Eigen::VectorXd& nr,
                      const Eigen::VectorXd& nc, double delta, long d, Eigen::VectorXd& z,
                      Eigen::VectorXd& lo, Eigen::VectorXd& hi) {
    const Eigen::Index N = z.size();
    const double pad_sum = nc.dot(x) * delta * (1 + gamma_n(double(N) + 2));
    const double g = gamma_n(double(N) + 4);
    const double inv_d = 1.0 / double(d);
    lo.resize(N);
    hi.resize(N);
    for (Eigen::Index i = 0; i < N; ++i) {
        const Entry e = enclose_entry(z[i], nr[i], pad_sum, g, inv_d, kUnitRoundoff);
        z[i] = e.z;
        lo[i] = e.lo;
        hi[i] = e.hi;
    }
}

Interval enclose_frob(const Eigen::VectorXd& f, double delta, const Eigen::VectorXd& nq,
                      const Eigen::VectorXd& nk, long d) {
    const double g = gamma_n(2.0 * double(f.size()) + 4);
    const Entry e =
        enclose_frobenius(f.sum(), delta, nq.norm(), nk.norm(), g, 1.0 / double(d), kUnitRoundoff);
    return {e.lo, e.hi};
}

double product_check_tolerance(const Eigen::VectorXd& x, const Eigen::VectorXd& nr,
                               const Eigen::VectorXd& nc, double delta, long d,
                               const Eigen::VectorXd& cpu_lo, const Eigen::VectorXd& cpu_hi) {
    const Eigen::Index N = x.size();
    const double pad_sum = nc.dot(x) * delta * (1 + gamma_n(double(N) + 2));
    const double g = gamma_n(double(N) + 4), u = kUnitRoundoff;
    double tol = 0;
    for (Eigen::Index i = 0; i < N; ++i) {
        const double z_up = (cpu_hi[i] * double(d) / (1 - 2 * u) + nr[i] * pad_sum) / (1 - g);
        const Entry e = enclose_entry(z_up, nr[i], pad_sum, g, 1.0 / double(d), u);
        tol = std::max(tol, (cpu_hi[i] - cpu_lo[i]) + (e.hi - e.lo));
    }
    return tol * kBoundSafety;
}

double frobenius_check_tolerance(const Interval& cpu, double delta, const Eigen::VectorXd& nq,
                                 const Eigen::VectorXd& nk, long d) {
    const double g = gamma_n(2.0 * double(nq.size()) + 4), u = kUnitRoundoff;
    const double pad = delta * nq.norm() * nk.norm() * (1 + g);
    const double f_up = (cpu.hi * double(d) / (1 - 4 * u) + pad) / (1 - g);
    const Entry e =
        enclose_frobenius(f_up * f_up, delta, nq.norm(), nk.norm(), g, 1.0 / double(d), u);
    return (cpu.radius() + 0.5 * (e.hi - e.lo)) * kBoundSafety;
}

double rho_check_tolerance(const Interval& cpu, double rel_width) {
    return (cpu.radius() + rel_width * cpu.hi / (2 * (1 - rel_width))) * kBoundSafety;
}

}  // namespace attnspec::gpu::perron_logic
