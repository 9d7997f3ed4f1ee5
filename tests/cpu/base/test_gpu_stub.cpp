// Without a device, require_device() throws the documented NoDevice error (exit 69) and the
// summary says why; device_info() never throws.
#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/device.hpp"
#include "test_support.hpp"

TEST_CASE("device_info never throws and require_device maps to exit 69", "[gpu-stub]") {
    const auto info = attnspec::gpu::device_info();
    CHECK_FALSE(info.summary().empty());
    if (info.device_count == 0) {
        try {
            attnspec::gpu::require_device();
            FAIL("require_device did not throw without a device");
        } catch (const attnspec::Error& e) {
            CHECK(e.code() == attnspec::ExitCode::NoDevice);
        }
    }
}
