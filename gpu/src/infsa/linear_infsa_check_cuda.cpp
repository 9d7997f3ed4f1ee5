// gpu-check cases of the Linear-InfSA twin on the device (check_linear_infsa, gpu_check.hpp): the
// cases of linear_infsa_check.hpp with the twin's host entries (float64 one head at a time, as
// attnspec::linear_infsa; float32 and 16-bit inputs all heads at once).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/gpu/infsa/linear_infsa_cuda.hpp"
#include "linear_infsa_check.hpp"

namespace attnspec::gpu {

std::vector<TwinCase> check_linear_infsa(Context& ctx, const GpuCheckOptions& opt) {
    const LinearInfsaRun on_device = [&ctx](InputFormat fmt, const void* Q, const void* K,
                                            const void* V, long H, long N, long d,
                                            const LinearInfsaOptions& o, double* p) {
        if (fmt == InputFormat::f64) {
            using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
            const auto head = [&](const void* X, long h) {
                return Eigen::MatrixXd(
                    Eigen::Map<const RowMajor>(static_cast<const double*>(X) + h * N * d, N, d));
            };
            for (long h = 0; h < H; ++h) {
                const LinearInfsaResult r =
                    linear_infsa(ctx, head(Q, h), head(K, h), head(V, h), o);
                for (long l = 0; l < d; ++l) p[h * d + l] = r.p[l];
            }
            return;
        }
        std::vector<float> P(std::size_t(H * d));
        if (fmt == InputFormat::f32)
            linear_infsa_heads_f32(ctx, static_cast<const float*>(Q), static_cast<const float*>(K),
                                   static_cast<const float*>(V), H, N, d, o, P.data());
        else
            linear_infsa_heads_16(ctx, fmt == InputFormat::bf16 ? Input16::bf16 : Input16::fp16,
                                  static_cast<const std::uint16_t*>(Q),
                                  static_cast<const std::uint16_t*>(K),
                                  static_cast<const std::uint16_t*>(V), H, N, d, o, P.data());
        std::copy(P.begin(), P.end(), p);
    };
    return linear_infsa_cases(opt, on_device, "timings include host<->device transfers");
}

}  // namespace attnspec::gpu
