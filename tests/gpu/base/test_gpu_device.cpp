// GPU tests: exit 77 ("SKIP: no CUDA device") where no device is present, so ctest shows them as
// skipped (SKIP_RETURN_CODE 77), never failed and never silently absent.
#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/device.hpp"
#include "gpu_skip.hpp"
#include "test_support.hpp"

using attnspec::test::skip_without_device;

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
