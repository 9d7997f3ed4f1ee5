// Linear-InfSA CUDA twin: the launcher (docs/MATH.md §3; CPU reference
// lib/src/infsa/linear_infsa.cpp). The kernel bodies and their launch sequence are
// linear_infsa_kernels.hpp, written once against the thread-context interface: here they run on
// the device through DeviceGrid, in the CPU suite on the CPU grid runner.
#include <cuda_runtime.h>

#include "../base/device_grid.hpp"
#include "linear_infsa_kernels.hpp"
#include "linear_infsa_launch.hpp"

namespace attnspec::gpu::detail {

namespace {

using namespace attnspec::gpu::infsa_logic;

template <Format F>
void run(CUstream_st* stream, const void* Q, const void* K, const void* V, long H, long N, long d,
         double gamma, double eps, int fault, void* workspace, double* out) {
    using In = typename Fmt<F>::In;
    DeviceGrid grid{stream};
    run_linear_infsa<F>(grid, static_cast<const In*>(Q), static_cast<const In*>(K),
                        static_cast<const In*>(V), H, N, d, gamma, eps, fault, workspace, out);
}

}  // namespace

std::size_t linear_infsa_workspace_bytes(InfsaFormat f, long H, long N, long d) {
    switch (f) {
        case InfsaFormat::f64:
            return workspace_bytes<Format::f64>(H, N, d);
        case InfsaFormat::f32:
            return workspace_bytes<Format::f32>(H, N, d);
        case InfsaFormat::bf16:
            return workspace_bytes<Format::bf16>(H, N, d);
        case InfsaFormat::fp16:
            return workspace_bytes<Format::fp16>(H, N, d);
    }
    return 0;
}

void launch_linear_infsa(CUstream_st* stream, InfsaFormat f, const void* Q, const void* K,
                         const void* V, long H, long N, long d, double gamma, double eps, int fault,
                         void* workspace, double* out) {
    switch (f) {
        case InfsaFormat::f64:
            return run<Format::f64>(stream, Q, K, V, H, N, d, gamma, eps, fault, workspace, out);
        case InfsaFormat::f32:
            return run<Format::f32>(stream, Q, K, V, H, N, d, gamma, eps, fault, workspace, out);
        case InfsaFormat::bf16:
            return run<Format::bf16>(stream, Q, K, V, H, N, d, gamma, eps, fault, workspace, out);
        case InfsaFormat::fp16:
            return run<Format::fp16>(stream, Q, K, V, H, N, d, gamma, eps, fault, workspace, out);
    }
}

}  // namespace attnspec::gpu::detail
