// info's CUDA words from planted driver probes (gpu/base/driver_probe.hpp: describe_driver is a
// pure function), and the probe of this machine.
#include "attnspec/gpu/base/driver_probe.hpp"
#include "test_support.hpp"

using namespace attnspec::gpu;

namespace {
DriverProbe driver(int version, int init, int count) {
    DriverProbe p;
    p.library_found = true;
    p.driver_version = version;
    p.init_result = init;
    p.device_count = count;
    return p;
}
}  // namespace

TEST_CASE("describe_driver says why no device is usable", "[gpu-probe]") {
    DriverProbe none;
    none.load_error = "libcuda.so.1: cannot open shared object file: No such file or directory";
    CHECK(describe_driver(none, 13000).words == "no NVIDIA driver (libcuda.so.1 not found)");
    CHECK_FALSE(describe_driver(none, 13000).usable);

    DriverProbe broken;
    broken.load_error = "libcuda.so.1: undefined symbol: foo";
    CHECK(describe_driver(broken, 13000).words.find("unusable (libcuda.so.1: undefined symbol") !=
          std::string::npos);

    const auto old = describe_driver(driver(12040, 0, 1), 13000);
    CHECK(old.words == "driver supports CUDA 12.4, this build needs 13.0");
    CHECK_FALSE(old.usable);
    // a newer minor of the same major runs the build (CUDA minor-version compatibility)
    CHECK(describe_driver(driver(13000, 0, 1), 13010).words.find("needs") == std::string::npos);

    CHECK(describe_driver(driver(13000, 100, 0), 13000).words == "driver present, no device");
    CHECK(describe_driver(driver(13000, 0, 0), 13000).words == "driver present, no device");
    CHECK(describe_driver(driver(13000, 999, 0), 13000).words ==
          "driver present, cuInit failed (CUresult 999)");
}

TEST_CASE("describe_driver names the device and sm when one is usable", "[gpu-probe]") {
    DriverProbe p = driver(13000, 0, 1);
    p.device_name = "NVIDIA H200";
    p.cc_major = 9;
    p.cc_minor = 0;
    const auto s = describe_driver(p, 13000);
    CHECK(s.usable);
    CHECK(s.words == "device 0: NVIDIA H200 (sm_90), driver supports CUDA 13.0");
    // not compiled: the device is described but not usable by this build
    CHECK_FALSE(describe_driver(p, 0).usable);
    CHECK(cuda_summary(p, 0) ==
          "CUDA: not compiled (built with ATTNSPEC_CUDA=OFF); device 0: NVIDIA H200 (sm_90), "
          "driver supports CUDA 13.0");
    CHECK(cuda_summary(p, 13000) ==
          "CUDA 13.0 build: device 0: NVIDIA H200 (sm_90), driver supports CUDA 13.0");
}

TEST_CASE("the probe of this machine is consistent with its words", "[gpu-probe]") {
    const DriverProbe p = probe_driver();
    const DriverStatus s = describe_driver(p, build_cuda_version());
    CHECK_FALSE(s.words.empty());
    if (!p.library_found) CHECK_FALSE(s.usable);
    if (p.library_found && p.init_result == 0 && p.device_count > 0) CHECK(!p.device_name.empty());
    CHECK((build_cuda_version() == 0) ==
          (cuda_summary(p, build_cuda_version()).rfind("CUDA: not compiled", 0) == 0));
}
