// The infsa twins' entries that need no device (both builds), and, in a build without CUDA, the
// entries that report "not compiled" (exit 69) so callers never need an #ifdef.
#include "attnspec/gpu/base/device.hpp"
#include "attnspec/gpu/infsa/linear_infsa_cuda.hpp"
#include "attnspec/gpu/infsa/perron_tiled_cuda.hpp"

namespace attnspec::gpu {

const char* to_string(Input16 f) { return f == Input16::bf16 ? "bf16" : "fp16"; }

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

ReluKernelOp::ReluKernelOp(Context& ctx, const Eigen::MatrixXd&, const Eigen::MatrixXd&,
                           Eigen::Index)
    : ctx_(ctx) {
    // Named so that a compiler seeing every member defined here does not call them unused.
    (void)ctx_, (void)d_, (void)tile_, (void)delta_, (void)frob_done_;
    require_device();
}
void ReluKernelOp::apply(const Eigen::VectorXd&, bool, Eigen::VectorXd&, Eigen::VectorXd&,
                         Eigen::VectorXd&) const {
    require_device();
}
Interval ReluKernelOp::frobenius() const {
    require_device();
    return {};
}
void ReluKernelOp::run(const Eigen::VectorXd&, bool, Eigen::VectorXd&) const { require_device(); }

PerronResult perron_tiled(Context&, const Eigen::MatrixXd&, const Eigen::MatrixXd&,
                          const PerronOptions&, Eigen::Index, Interval*) {
    require_device();
    return {};
}

#endif

}  // namespace attnspec::gpu
