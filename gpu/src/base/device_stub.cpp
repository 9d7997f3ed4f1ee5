// CPU-only build of attnspec_gpu: every entry reports "not compiled" (exit 69 where required).
#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/device.hpp"

namespace attnspec::gpu {

DeviceInfo device_info() { return DeviceInfo{}; }

std::string DeviceInfo::summary() const {
    return "CUDA: not compiled (built with ATTNSPEC_CUDA=OFF)";
}

void require_device() {
    throw Error(ExitCode::NoDevice, "CUDA support not compiled (rebuild with -DATTNSPEC_CUDA=ON)");
}

}  // namespace attnspec::gpu
