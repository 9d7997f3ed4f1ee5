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
