// ATTNSPEC_HD marks per-element and per-tile arithmetic shared by the CUDA kernels and the CPU
// test suite: under nvcc it is `__host__ __device__`, under the host compiler it is empty, so
// tests/cpu/ runs the same index and reduction logic without a GPU. Such headers live next to
// their kernel (gpu/src/<module>/<stem>_logic.hpp), include only this file and <cstdint>/<cmath>,
// and never Eigen or CUDA headers.
#pragma once

#if defined(__CUDACC__)
#define ATTNSPEC_HD __host__ __device__ inline
#else
#define ATTNSPEC_HD inline
#endif

namespace attnspec::gpu {

// The most threads a kernel body is launched with: Body::kMaxThreads when the body declares it
// (the device compiles it with __launch_bounds__(kMaxThreads), and both grids reject a larger
// launch), else 0: no bound declared (the device's limit, 1024 threads, and no
// __launch_bounds__, so the compiler's register budget is left as it was).
template <class Body, class = void>
struct launch_bound {
    static constexpr int value = 0;
};
template <class Body>
struct launch_bound<Body, decltype(void(Body::kMaxThreads))> {
    static constexpr int value = Body::kMaxThreads;
};

}  // namespace attnspec::gpu
