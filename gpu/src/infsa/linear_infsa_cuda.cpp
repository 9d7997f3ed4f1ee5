// Host side of the Linear-InfSA CUDA twin (gpu/include/attnspec/gpu/infsa/linear_infsa_cuda.hpp):
// argument checks as the CPU routine makes them, explicit transfers, the launcher of
// linear_infsa_cuda.cu, and the planted fault read once per call.
#include "attnspec/gpu/infsa/linear_infsa_cuda.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "linear_infsa_kernels.hpp"
#include "linear_infsa_launch.hpp"

namespace attnspec::gpu {

namespace {

std::string num(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.10g", x);
    return buf;
}

void check_options(const LinearInfsaOptions& opt) {
    if (!(opt.gamma > 0 && opt.gamma < 1))
        throw Error(ExitCode::DataError, "gamma = " + num(opt.gamma) + " must lie in (0, 1)",
                    "gamma");
    if (!(opt.eps >= 0) || !std::isfinite(opt.eps))
        throw Error(ExitCode::DataError, "eps = " + num(opt.eps) + " must be finite and >= 0",
                    "eps");
}

void check_sizes(long H, long N, long d, const char* who) {
    if (H <= 0 || N <= 0 || d <= 0)
        throw Error(ExitCode::DataError, std::string(who) + ": H, N, d must be positive");
    if (d > infsa_logic::kMaxHeadDim)
        throw Error(ExitCode::DataError,
                    std::string(who) + ": d = " + std::to_string(d) + " exceeds the twin's " +
                        std::to_string(infsa_logic::kMaxHeadDim) +
                        " (a warp's partials must fit in shared memory)",
                    "d");
}

detail::InfsaFormat to_detail(InputFormat f) {
    switch (f) {
        case InputFormat::f64:
            return detail::InfsaFormat::f64;
        case InputFormat::f32:
            return detail::InfsaFormat::f32;
        case InputFormat::bf16:
            return detail::InfsaFormat::bf16;
        case InputFormat::fp16:
            return detail::InfsaFormat::fp16;
    }
    return detail::InfsaFormat::f64;
}

std::size_t element_bytes(InputFormat f) {
    return f == InputFormat::f64 ? 8 : f == InputFormat::f32 ? 4 : 2;
}

// Uploads [H][N][d] inputs, runs, downloads the H x (2d + 2) doubles of results.
std::vector<double> run_host(Context& ctx, InputFormat fmt, const void* Q, const void* K,
                             const void* V, long H, long N, long d, const LinearInfsaOptions& opt) {
    const std::size_t bytes = element_bytes(fmt) * std::size_t(H) * std::size_t(N) * std::size_t(d);
    DeviceBuffer dQ(bytes), dK(bytes), dV(bytes), work, out;
    dQ.upload_sync(ctx, Q, bytes);
    dK.upload_sync(ctx, K, bytes);
    dV.upload_sync(ctx, V, bytes);
    linear_infsa_heads_device(ctx, fmt, dQ.data(), dK.data(), dV.data(), H, N, d, opt, work, out);
    std::vector<double> host(std::size_t(H) * std::size_t(2 * d + 2));
    out.download_sync(ctx, host.data(), host.size() * sizeof(double));
    return host;
}

}  // namespace

void linear_infsa_heads_device(Context& ctx, InputFormat fmt, const void* Q, const void* K,
                               const void* V, long H, long N, long d, const LinearInfsaOptions& opt,
                               DeviceBuffer& workspace, DeviceBuffer& out) {
    check_sizes(H, N, d, "linear_infsa_heads_device");
    check_options(opt);
    const std::size_t need = detail::linear_infsa_workspace_bytes(to_detail(fmt), H, N, d);
    if (workspace.bytes() < need) workspace = DeviceBuffer(need);
    const std::size_t out_bytes = sizeof(double) * std::size_t(H) * std::size_t(2 * d + 2);
    if (out.bytes() < out_bytes) out = DeviceBuffer(out_bytes);
    detail::launch_linear_infsa(ctx.stream(), to_detail(fmt), Q, K, V, H, N, d, opt.gamma, opt.eps,
                                infsa_logic::planted_fault_code(), workspace.data(),
                                static_cast<double*>(out.data()));
}

LinearInfsaResult linear_infsa(Context& ctx, const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                               const Eigen::MatrixXd& V, const LinearInfsaOptions& opt) {
    if (Q.size() == 0 || K.size() == 0 || V.size() == 0)
        throw Error(ExitCode::DataError, "linear_infsa: Q, K, V must be non-empty");
    if (Q.rows() != K.rows() || Q.cols() != K.cols() || V.rows() != Q.rows() ||
        V.cols() != Q.cols())
        throw Error(ExitCode::DataError, "linear_infsa: Q, K, V must all be N x d_h (Q is " +
                                             std::to_string(Q.rows()) + "x" +
                                             std::to_string(Q.cols()) + ")");
    if (!Q.allFinite() || !K.allFinite() || !V.allFinite())
        throw Error(ExitCode::DataError, "linear_infsa: inputs contain NaN or Inf");
    check_options(opt);
    using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const RowMajor q = Q, k = K, v = V;  // [N][d], the kernels' layout
    const long N = long(Q.rows()), d = long(Q.cols());
    const std::vector<double> o =
        run_host(ctx, InputFormat::f64, q.data(), k.data(), v.data(), 1, N, d, opt);
    LinearInfsaResult r;
    r.p = Eigen::Map<const Eigen::VectorXd>(o.data(), d);
    r.q_bar = Eigen::Map<const Eigen::VectorXd>(o.data() + d, d);
    r.sum_e = o[std::size_t(2 * d)];
    r.sum_s = o[std::size_t(2 * d + 1)];
    r.degenerate = r.sum_s == 0;
    return r;
}

void linear_infsa_heads_f32(Context& ctx, const float* Q, const float* K, const float* V, long H,
                            long N, long d, const LinearInfsaOptions& opt, float* P) {
    check_sizes(H, N, d, "linear_infsa_heads_f32");
    check_options(opt);
    const std::vector<double> o = run_host(ctx, InputFormat::f32, Q, K, V, H, N, d, opt);
    for (long i = 0; i < H * d; ++i) P[i] = float(o[std::size_t(i)]);
}

void linear_infsa_heads_16(Context& ctx, Input16 fmt, const std::uint16_t* Q,
                           const std::uint16_t* K, const std::uint16_t* V, long H, long N, long d,
                           const LinearInfsaOptions& opt, float* P) {
    check_sizes(H, N, d, "linear_infsa_heads_16");
    check_options(opt);
    const InputFormat f = fmt == Input16::bf16 ? InputFormat::bf16 : InputFormat::fp16;
    const std::vector<double> o = run_host(ctx, f, Q, K, V, H, N, d, opt);
    for (long i = 0; i < H * d; ++i) P[i] = float(o[std::size_t(i)]);
}

}  // namespace attnspec::gpu
