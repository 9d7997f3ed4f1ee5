// Exit 77 ("SKIP: no CUDA device") when no device is present, so CTest shows the solver twins'
// GPU tests as skipped (SKIP_RETURN_CODE 77), never as passed.
#pragma once
#include <cstdio>
#include <cstdlib>

#include "attnspec/gpu/base/device.hpp"

namespace attnspec::test {
inline void skip_without_cuda_device() {
    const auto info = attnspec::gpu::device_info();
    if (info.device_count == 0) {
        std::printf("SKIP: no CUDA device (%s)\n", info.summary().c_str());
        std::fflush(stdout);
        std::exit(77);
    }
}
}  // namespace attnspec::test
