// The lazy GPU backend's loader (gpu/base/backend.hpp): no backend (not built, no library) is
// exit 69, a library that is there but does not load or is not this build's backend is exit 72,
// each with one line saying what; a CUDA build's backend answers its own ABI and no other.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/backend.hpp"
#include "test_support.hpp"

using namespace attnspec;

TEST_CASE("loading a missing backend library is exit 69 naming the file and dlerror",
          "[gpu-backend]") {
    const Error e =
        test::error_of([] { gpu::load_backend_from("/nonexistent/libattnspec_gpu.so"); });
    CHECK(e.code() == ExitCode::NoDevice);
    const std::string m = e.what();
    CHECK(m.rfind("cannot load /nonexistent/libattnspec_gpu.so: ", 0) == 0);
    CHECK(m.find("No such file") != std::string::npos);
}

TEST_CASE("a backend library that is there but does not load is exit 72, not 69", "[gpu-backend]") {
    // A file where the library should be that dlopen refuses (as one whose libcublas is missing
    // would be): a broken install, never "no device".
    const std::string dir = test::temp_dir();
    const std::string path = dir + "/libattnspec_gpu.so";
    std::ofstream(path) << "not an ELF file\n";
    const Error e = test::error_of([&] { gpu::load_backend_from(path); });
    CHECK(e.code() == ExitCode::BackendLoad);
    CHECK(static_cast<int>(e.code()) == 72);
    const std::string m = e.what();
    INFO(m);
    CHECK(m.rfind("GPU backend failed to load: " + path + " is there, but dlopen fails: ", 0) == 0);
    std::remove(path.c_str());
    std::remove(dir.c_str());
}

TEST_CASE("a shared library without the backend entry is refused", "[gpu-backend]") {
    // libdl / libc are in every process: a real library that is not an attnspec backend.
    const Error e = test::error_of([] { gpu::load_backend_from("libc.so.6"); });
    CHECK(e.code() == ExitCode::BackendLoad);
    CHECK(std::string(e.what()) ==
          "libc.so.6: no attnspec_gpu_backend entry (not an attnspec GPU backend)");
}

TEST_CASE("load_backend: not built in a CPU-only build, this build's library in a CUDA build",
          "[gpu-backend]") {
    if (!gpu::backend_built()) {
        const Error e = test::error_of([] { gpu::load_backend(); });
        CHECK(e.code() == ExitCode::NoDevice);
        CHECK(std::string(e.what()).rfind("GPU backend not built (ATTNSPEC_CUDA=OFF", 0) == 0);
        return;
    }
#if ATTNSPEC_HAVE_CUDA
    CHECK(attnspec_gpu_backend(gpu::kBackendAbi + 1) == nullptr);  // another ABI: refused
    const gpu::Backend& b = gpu::load_backend();  // found through this test's RUNPATH
    CHECK(b.abi == gpu::kBackendAbi);
    gpu::DeviceInfo info;
    std::string error;
    CHECK(b.device_info(&info, &error) == 0);  // never fails, with or without a device
    CHECK(info.compiled);
    if (info.device_count == 0) {  // the runner refuses with 69 and words, through the table
        gpu::GpuCheckRun run;
        CHECK(b.run_gpu_check({}, gpu::MathMode::pedantic, gpu::PlantedFault::none, &run, &error) ==
              static_cast<int>(ExitCode::NoDevice));
        CHECK(error.rfind("no usable CUDA device: ", 0) == 0);
    }
#endif
}
