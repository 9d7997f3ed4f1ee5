// Enclosures of the device ReLU operator's products (relu_kernel_common.hpp), sized as
// lib/src/infsa/relu_kernel.cpp sizes the CPU operator's.
#include "relu_kernel_common.hpp"

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

}  // namespace attnspec::gpu::perron_logic
