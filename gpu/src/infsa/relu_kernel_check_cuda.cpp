// gpu-check cases of the matrix-free Perron twin on the device (check_perron_tiled,
// gpu_check.hpp): the cases of relu_kernel_check.hpp with gpu::ReluKernelOp.
#include <memory>
#include <vector>

#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/gpu/infsa/relu_kernel_cuda.hpp"
#include "relu_kernel_check.hpp"

namespace attnspec::gpu {

std::vector<TwinCase> check_perron_tiled(Context& ctx, const GpuCheckOptions& opt) {
    const ReluOpFactory on_device = [&ctx](const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                                           Eigen::Index tile) -> std::unique_ptr<ReluRowsOp> {
        return std::make_unique<ReluKernelOp>(ctx, Q, K, tile);
    };
    return perron_tiled_cases(opt, on_device, "gpu time includes the x/z transfers");
}

}  // namespace attnspec::gpu
