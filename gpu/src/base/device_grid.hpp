// The device side of the thread-context interface (attnspec/gpu/base/cpu_grid.hpp describes it):
// DeviceThread maps it to the CUDA built-ins, grid_kernel runs a body as a __global__ function
// and DeviceGrid launches it on a stream with the same call as CpuGrid, so a twin's kernel bodies
// and launch sequence are written once (e.g. gpu/src/infsa/linear_infsa_kernels.hpp) and run
// both here and on the CPU runner. For .cu files only.
#pragma once
#if !defined(__CUDACC__)
#error "device_grid.hpp is included by .cu files only"
#endif
#include <cuda_runtime.h>

#include <cstddef>

#include "attnspec/gpu/base/hd.hpp"
#include "cuda_status.hpp"

namespace attnspec::gpu {

// The bodies are ATTNSPEC_HD templates; the host branches (the second argument below) are never
// executed (a body runs on the host only with CpuThread), they only let the host pass of nvcc
// compile the templates.
#if defined(__CUDA_ARCH__)
#define ATTNSPEC_GRID_BUILTIN(device, host) device
#else
#define ATTNSPEC_GRID_BUILTIN(device, host) host
#endif

struct DeviceThread {
    ATTNSPEC_HD long thread() const { return ATTNSPEC_GRID_BUILTIN(long(threadIdx.x), 0); }
    ATTNSPEC_HD long block() const { return ATTNSPEC_GRID_BUILTIN(long(blockIdx.x), 0); }
    ATTNSPEC_HD long block_dim() const { return ATTNSPEC_GRID_BUILTIN(long(blockDim.x), 1); }
    ATTNSPEC_HD long grid_dim() const { return ATTNSPEC_GRID_BUILTIN(long(gridDim.x), 1); }
    ATTNSPEC_HD void sync() const { ATTNSPEC_GRID_BUILTIN(__syncthreads(), (void)0); }
    // The sum over this lane's aligned segment of `width` lanes (a power of two <= 32), every lane
    // gets its segment's (CpuThread::warp_sum adds in the same order); every lane of the warp
    // must call it.
    ATTNSPEC_HD float warp_sum(float x, int width = 32) const { return butterfly(x, width); }
    ATTNSPEC_HD double warp_sum(double x, int width = 32) const { return butterfly(x, width); }
    template <class T>
    ATTNSPEC_HD T* shared() const {
#if defined(__CUDA_ARCH__)
        extern __shared__ __align__(16) unsigned char attnspec_grid_shared[];
        return reinterpret_cast<T*>(attnspec_grid_shared);
#else
        return nullptr;
#endif
    }

  private:
    template <class T>
    ATTNSPEC_HD static T butterfly(T x, int width) {
#if defined(__CUDA_ARCH__)
        for (int off = width / 2; off > 0; off /= 2) x += __shfl_xor_sync(0xffffffffu, x, off);
#else
        (void)width;
#endif
        return x;
    }
};

#undef ATTNSPEC_GRID_BUILTIN

template <class Body>
__global__ void grid_kernel(Body body) {
    body(DeviceThread{});
}

// A body that declares its launch bound (hd.hpp launch_bound) is compiled with it.
template <class Body, int MaxThreads>
__global__ void __launch_bounds__(MaxThreads) bounded_grid_kernel(Body body) {
    body(DeviceThread{});
}

// Launches on `stream`; the launch status is checked (status::check_launch, named `what`). A
// launch of more threads than the body's launch bound is refused here (the device would fail it).
struct DeviceGrid {
    CUstream_st* stream;
    template <class Body>
    void operator()(long blocks, int threads, std::size_t shared_bytes, const Body& body,
                    const char* what) const {
        constexpr int bound = launch_bound<Body>::value;
        if constexpr (bound > 0) {
            if (threads > bound) status::check(cudaErrorInvalidConfiguration, what);
            bounded_grid_kernel<Body, bound>
                <<<unsigned(blocks), unsigned(threads), shared_bytes, stream>>>(body);
        } else {
            grid_kernel<Body><<<unsigned(blocks), unsigned(threads), shared_bytes, stream>>>(body);
        }
        status::check_launch(what);
    }
};

}  // namespace attnspec::gpu
