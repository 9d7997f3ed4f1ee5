// The spectral twins' entries in a build without CUDA: each reports "not compiled" (exit 69), so
// callers never need an #ifdef. Compiled in both builds, empty with CUDA.
#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/spectral/svd_cuda.hpp"

namespace attnspec::gpu {

#if !ATTNSPEC_HAVE_CUDA
namespace {
[[noreturn]] void not_compiled() {
    throw Error(ExitCode::NoDevice,
                "CUDA support not compiled (rebuild with -DATTNSPEC_CUDA=ON): no gpu::svd");
}
}  // namespace
SvdResult svd(Context&, const Eigen::MatrixXd&, const SvdOptions&) { not_compiled(); }
SvdResult svd(Context&, const Eigen::MatrixXd&, SvdMethod) { not_compiled(); }
std::vector<SvdResult> svd_batched(Context&, const std::vector<Eigen::MatrixXd>&,
                                   const SvdOptions&) {
    not_compiled();
}
Kappa kappa(Context&, const Eigen::MatrixXd&, KappaConvention, double) { not_compiled(); }
#endif

}  // namespace attnspec::gpu
