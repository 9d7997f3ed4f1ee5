// The base entries (device discovery, Context, DeviceBuffer) in a build without CUDA: each reports
// "not compiled" (exit 69 where required). Compiled in both builds, empty with CUDA.
#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/context.hpp"
#include "attnspec/gpu/base/device.hpp"

namespace attnspec::gpu {

#if !ATTNSPEC_HAVE_CUDA

DeviceInfo device_info() { return DeviceInfo{}; }

std::string DeviceInfo::summary() const {
    return "CUDA: not compiled (built with ATTNSPEC_CUDA=OFF)";
}

void require_device() {
    throw Error(ExitCode::NoDevice, "CUDA support not compiled (rebuild with -DATTNSPEC_CUDA=ON)");
}

Context::Context(int, MathMode) { require_device(); }
Context::~Context() = default;
std::string Context::math_mode_description() const { return "none (CUDA not compiled)"; }
void Context::synchronize() const {}

DeviceBuffer::DeviceBuffer(std::size_t) { require_device(); }
DeviceBuffer::~DeviceBuffer() = default;
DeviceBuffer::DeviceBuffer(DeviceBuffer&&) noexcept = default;
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&&) noexcept = default;
void DeviceBuffer::upload_sync(const Context&, const void*, std::size_t, std::size_t) {
    require_device();
}
void DeviceBuffer::download_sync(const Context&, void*, std::size_t, std::size_t) const {
    require_device();
}
void DeviceBuffer::zero(const Context&) { require_device(); }

#endif

}  // namespace attnspec::gpu
