// Host side of the device ReLU operator (gpu/include/attnspec/gpu/infsa/relu_kernel_cuda.hpp):
// transfers and the launcher of relu_kernel_cuda.cu; the enclosures around each pass are
// ReluRowsOp's (relu_kernel_common.cpp).
#include "attnspec/gpu/infsa/relu_kernel_cuda.hpp"

#include "infsa_faults.hpp"
#include "relu_kernel_launch.hpp"

namespace attnspec::gpu {

ReluKernelOp::ReluKernelOp(Context& ctx, const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                           Eigen::Index tile)
    : ReluRowsOp(Q, K, tile), ctx_(ctx) {
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

void ReluKernelOp::rows(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z,
                        Eigen::VectorXd* f) const {
    const std::size_t vec = sizeof(double) * std::size_t(N_);
    dx_.upload_sync(ctx_, x.data(), vec);
    const double* R = static_cast<const double*>((transpose ? dK_ : dQ_).data());
    const double* C = static_cast<const double*>((transpose ? dQ_ : dK_).data());
    detail::launch_relu_rows(ctx_.stream(), R, C, N_, d_, static_cast<const double*>(dx_.data()),
                             infsa_logic::planted_fault_code(), static_cast<double*>(dz_.data()),
                             static_cast<double*>(df_.data()));
    z.resize(N_);
    dz_.download_sync(ctx_, z.data(), vec);
    if (f) {
        f->resize(N_);
        df_.download_sync(ctx_, f->data(), vec);
    }
}

PerronResult perron_tiled(Context& ctx, const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                          const PerronOptions& opt, Eigen::Index tile, Interval* frob_plus) {
    const ReluKernelOp op(ctx, Q, K, tile);
    PerronResult r = perron(op, opt);
    if (frob_plus) *frob_plus = op.frobenius();
    return r;
}

}  // namespace attnspec::gpu
