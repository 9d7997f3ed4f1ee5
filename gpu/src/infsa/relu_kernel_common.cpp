// Enclosures of the device ReLU operator's products (relu_kernel_common.hpp), sized as
// lib/src/infsa/relu_kernel.cpp sizes the CPU operator's, and the operator's host half
// (gpu::ReluRowsOp) that wraps them around each raw row pass, on the device or emulated.
#include "relu_kernel_common.hpp"

#include <algorithm>

#include "attnspec/base/rounding.hpp"
#include "attnspec/gpu/infsa/relu_kernel_cuda.hpp"
#include "attnspec/infsa/relu_kernel.hpp"
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

namespace attnspec::gpu {

ReluRowsOp::ReluRowsOp(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, Eigen::Index tile)
    : N_(Q.rows()), d_(Q.cols()), tile_(tile) {
    // The CPU operator's checks (check_qk, tile > 0) and messages, by constructing it (O(N d)).
    const attnspec::ReluKernelOp cpu_checks(Q, K, tile);
    nq_ = Q.rowwise().norm();
    nk_ = K.rowwise().norm();
    delta_ = 2 * gamma_n(double(d_) + 2);  // as ReluKernelOp: gamma_d of the dot, norms' rounding
}

void ReluRowsOp::run(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z) const {
    Eigen::VectorXd f;
    rows(x, transpose, z, frob_done_ ? nullptr : &f);
    ++passes_;
    if (!frob_done_) {
        frob_ = perron_logic::enclose_frob(f, delta_, nq_, nk_, long(d_));
        frob_done_ = true;
    }
}

void ReluRowsOp::apply(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z,
                       Eigen::VectorXd& z_lo, Eigen::VectorXd& z_hi) const {
    run(x, transpose, z);
    perron_logic::enclose_products(x, transpose ? nk_ : nq_, transpose ? nq_ : nk_, delta_,
                                   long(d_), z, z_lo, z_hi);
}

Interval ReluRowsOp::frobenius() const {
    if (!frob_done_) {
        Eigen::VectorXd z;
        run(Eigen::VectorXd::Zero(N_), false, z);
    }
    return frob_;
}

}  // namespace attnspec::gpu
