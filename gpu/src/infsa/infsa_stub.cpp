// The infsa twins' entries in a build without CUDA: each reports "not compiled" (exit 69), so
// callers never need an #ifdef. Compiled in both builds, empty with CUDA.
#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/device.hpp"
#include "attnspec/gpu/infsa/linear_infsa_cuda.hpp"
#include "attnspec/gpu/infsa/neumann_cuda.hpp"
#include "attnspec/gpu/infsa/relu_kernel_cuda.hpp"

namespace attnspec::gpu {

#if !ATTNSPEC_HAVE_CUDA

LinearInfsaResult linear_infsa(Context&, const Eigen::MatrixXd&, const Eigen::MatrixXd&,
                               const Eigen::MatrixXd&, const LinearInfsaOptions&) {
    require_device();
    return {};
}

void linear_infsa_heads_f32(Context&, const float*, const float*, const float*, long, long, long,
                            const LinearInfsaOptions&, float*) {
    require_device();
}

void linear_infsa_heads_16(Context&, Input16, const std::uint16_t*, const std::uint16_t*,
                           const std::uint16_t*, long, long, long, const LinearInfsaOptions&,
                           float*) {
    require_device();
}

void linear_infsa_heads_device(Context&, InputFormat, const void*, const void*, const void*, long,
                               long, long, const LinearInfsaOptions&, DeviceBuffer&,
                               DeviceBuffer&) {
    require_device();
}

ReluKernelOp::ReluKernelOp(Context& ctx, const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                           Eigen::Index tile)
    : ReluRowsOp(Q, K, tile), ctx_(ctx) {
    (void)
        ctx_;  // named so that a compiler seeing every member defined here does not call it unused
    require_device();
}
void ReluKernelOp::rows(const Eigen::VectorXd&, bool, Eigen::VectorXd&, Eigen::VectorXd*) const {
    require_device();
}

PerronResult perron_tiled(Context&, const Eigen::MatrixXd&, const Eigen::MatrixXd&,
                          const PerronOptions&, Eigen::Index, Interval*) {
    require_device();
    return {};
}

namespace {
[[noreturn]] void not_compiled() {
    throw Error(ExitCode::NoDevice,
                "CUDA support not compiled (rebuild with -DATTNSPEC_CUDA=ON): "
                "no gpu::closure_times / neumann_kernels");
}
}  // namespace
std::vector<Eigen::MatrixXd> neumann_kernels(Context&, const std::vector<Eigen::MatrixXd>&, double,
                                             std::vector<NeumannSolveStats>*) {
    not_compiled();
}
std::vector<Eigen::MatrixXd> closure_times(Context&, const std::vector<Eigen::MatrixXd>&, double,
                                           const std::vector<Eigen::MatrixXd>&,
                                           std::vector<NeumannSolveStats>*) {
    not_compiled();
}
Eigen::MatrixXd closure_times_mixed(Context&, const Eigen::MatrixXd&, double,
                                    const Eigen::MatrixXd&, int*, IrsLowest, NeumannSolveStats*) {
    not_compiled();
}
#endif

}  // namespace attnspec::gpu
