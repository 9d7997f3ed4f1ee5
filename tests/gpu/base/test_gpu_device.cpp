// GPU tests: exit 77 ("SKIP: no CUDA device") where no device is present, so ctest shows them as
// skipped (SKIP_RETURN_CODE 77), never failed and never silently absent.
#include <cstdio>
#include <cstdlib>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/device.hpp"
#include "test_support.hpp"

namespace {
void skip_without_device() {
    const auto info = attnspec::gpu::device_info();
    if (info.device_count == 0) {
        std::printf("SKIP: no CUDA device (%s)\n", info.summary().c_str());
        std::fflush(stdout);
        std::exit(77);
    }
}
}  // namespace

TEST_CASE("device discovery reports the device and library versions", "[gpu]") {
    skip_without_device();
    const auto info = attnspec::gpu::device_info();
    CHECK(info.compiled);
    CHECK(!info.name.empty());
    CHECK(info.cc_major >= 7);
    CHECK(info.cublas_version > 0);
    CHECK(info.cusolver_version > 0);
    CHECK_NOTHROW(attnspec::gpu::require_device());
}
