// gpu-check entry of the SpecA twin on the device (check_spec_attention, gpu_check.hpp): the
// cases of attention_check.hpp with gpu::multihead_forward (fp64) and multihead_forward_fp32.
#include <vector>

#include "attention_check.hpp"
#include "attnspec/gpu/attention/attention_cuda.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"

namespace attnspec::gpu {

std::vector<TwinCase> check_spec_attention(Context& ctx, const GpuCheckOptions& opt) {
    const SpecAttentionRunFn on_device = [&ctx](const MultiHead& m, bool fp32) -> Eigen::MatrixXd {
        return fp32 ? Eigen::MatrixXd(multihead_forward_fp32(ctx, m).cast<double>())
                    : multihead_forward(ctx, m);
    };
    return spec_attention_cases(opt, on_device,
                                ctx.math_mode_description() + "; GPU time includes the transfers");
}

}  // namespace attnspec::gpu
