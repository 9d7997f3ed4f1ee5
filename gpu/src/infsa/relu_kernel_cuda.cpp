// Host side of the device ReLU operator (gpu/include/attnspec/gpu/infsa/relu_kernel_cuda.hpp):
// transfers, the launcher of relu_kernel_cuda.cu, and the enclosures of relu_kernel_logic.hpp,
// sized exactly as lib/src/infsa/relu_kernel.cpp sizes them (the sum order differs, the bounds do
// not depend on it).
#include "attnspec/gpu/infsa/relu_kernel_cuda.hpp"

#include "attnspec/base/errors.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/infsa/relu_kernel.hpp"
#include "relu_kernel_common.hpp"
#include "relu_kernel_launch.hpp"
#include "relu_kernel_logic.hpp"

namespace attnspec::gpu {

ReluKernelOp::ReluKernelOp(Context& ctx, const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                           Eigen::Index tile)
    : ctx_(ctx), N_(Q.rows()), d_(Q.cols()), tile_(tile) {
    // The CPU operator's checks (check_qk, tile > 0) and messages, by constructing it (O(N d)).
    const attnspec::ReluKernelOp cpu_checks(Q, K, tile);
    nq_ = Q.rowwise().norm();
    nk_ = K.rowwise().norm();
    delta_ = 2 * gamma_n(double(d_) + 2);  // as ReluKernelOp: gamma_d of the dot, norms' rounding
    const std::size_t mat = sizeof(double) * std::size_t(N_) * std::size_t(d_);
    const std::size_t vec = sizeof(double) * std::size_t(N_);
    dQ_ = DeviceBuffer(mat);
    dK_ = DeviceBuffer(mat);
    dx_ = DeviceBuffer(vec);
    dz_ = DeviceBuffer(vec);
    df_ = DeviceBuffer(vec);
    dQ_.upload_sync(ctx_, Q.data(), mat);
    dK_.upload_sync(ctx_, K.data(), mat);
}

void ReluKernelOp::run(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z) const {
    const std::size_t vec = sizeof(double) * std::size_t(N_);
    dx_.upload_sync(ctx_, x.data(), vec);
    const double* R = static_cast<const double*>((transpose ? dK_ : dQ_).data());
    const double* C = static_cast<const double*>((transpose ? dQ_ : dK_).data());
    detail::launch_relu_rows(ctx_.stream(), R, C, N_, d_, tile_,
                             static_cast<const double*>(dx_.data()),
                             infsa_logic::planted_fault_code(), static_cast<double*>(dz_.data()),
                             static_cast<double*>(df_.data()));
    z.resize(N_);
    dz_.download_sync(ctx_, z.data(), vec);
    ++passes_;
    if (!frob_done_) {
        Eigen::VectorXd f(N_);
        df_.download_sync(ctx_, f.data(), vec);
        frob_ = perron_logic::enclose_frob(f, delta_, nq_, nk_, long(d_));
        frob_done_ = true;
    }
}

void ReluKernelOp::apply(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z,
                         Eigen::VectorXd& z_lo, Eigen::VectorXd& z_hi) const {
    run(x, transpose, z);
    perron_logic::enclose_products(x, transpose ? nk_ : nq_, transpose ? nq_ : nk_, delta_,
                                   long(d_), z, z_lo, z_hi);
}

Interval ReluKernelOp::frobenius() const {
    if (!frob_done_) {
        Eigen::VectorXd z;
        run(Eigen::VectorXd::Zero(N_), false, z);
    }
    return frob_;
}

PerronResult perron_tiled(Context& ctx, const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                          const PerronOptions& opt, Eigen::Index tile, Interval* frob_plus) {
    const ReluKernelOp op(ctx, Q, K, tile);
    PerronResult r = perron(op, opt);
    if (frob_plus) *frob_plus = op.frobenius();
    return r;
}

}  // namespace attnspec::gpu
