// The attention twins' entries in a build without CUDA: each reports "not compiled" (exit 69), so
// callers never need an #ifdef. Compiled in both builds, empty with CUDA.
#include "attnspec/gpu/attention/attention_cuda.hpp"
#include "attnspec/gpu/attention/jacobian_spectrum_cuda.hpp"
#include "attnspec/gpu/base/device.hpp"

namespace attnspec::gpu {

#if !ATTNSPEC_HAVE_CUDA
Eigen::MatrixXd multihead_forward(Context&, const MultiHead&) {
    require_device();
    return {};
}
Eigen::MatrixXf multihead_forward_fp32(Context&, const MultiHead&) {
    require_device();
    return {};
}
struct SpecAttentionRun::Impl {};
SpecAttentionRun::SpecAttentionRun(Context&, const MultiHead&, bool) { require_device(); }
SpecAttentionRun::~SpecAttentionRun() = default;
void SpecAttentionRun::run() { require_device(); }
Eigen::MatrixXd SpecAttentionRun::output() const {
    require_device();
    return {};
}
OperatorSpectrum jacobian_spectrum(Context&, const Head&, const LargeSvdOptions&) {
    require_device();
    return {};
}
#endif

}  // namespace attnspec::gpu
