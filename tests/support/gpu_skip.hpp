// GPU tests exit 77 ("SKIP: no CUDA device") where no device is usable, so ctest shows them as
// skipped (SKIP_RETURN_CODE 77), never failed and never silently passed. Call first in every
// tests/gpu/ TEST_CASE.
#pragma once
#include <cstdio>
#include <cstdlib>

#include "attnspec/gpu/base/device.hpp"

namespace attnspec::test {
// Exits 77 with "SKIP: no CUDA device (...)" when no CUDA device is usable; returns otherwise.
inline void skip_without_device() {
    const auto info = attnspec::gpu::device_info();
    if (info.device_count == 0) {
        std::printf("SKIP: no CUDA device (%s)\n", info.summary().c_str());
        std::fflush(stdout);
        std::exit(77);
    }
}
}  // namespace attnspec::test
