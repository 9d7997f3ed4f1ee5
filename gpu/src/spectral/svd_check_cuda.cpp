// check_svd (gpu_check.hpp): the cases of svd_check_common.cpp with the twin on the device
// (gpu::svd, svd_batched).
#include <vector>

#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/gpu/spectral/svd_cuda.hpp"
#include "svd_check.hpp"

namespace attnspec::gpu {

std::vector<TwinCase> check_svd(Context& ctx, const GpuCheckOptions& opt) {
    SvdTwin twin;
    twin.note = "device";
    twin.single = [&ctx](const Eigen::MatrixXd& M, const SvdOptions& o) { return svd(ctx, M, o); };
    twin.batched = [&ctx](const std::vector<Eigen::MatrixXd>& Ms, const SvdOptions& o) {
        return svd_batched(ctx, Ms, o);
    };
    return svd_cases(opt, twin);
}

}  // namespace attnspec::gpu
