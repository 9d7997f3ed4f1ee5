// SpecA's row softmax kernel body (gpu/src/attention/attention_kernels.hpp): its launch bound
// (__launch_bounds__(256) on the device) refuses a wider launch on the runner as on the device.
#include <string>
#include <vector>

#include "../../../gpu/src/attention/attention_kernels.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/cpu_grid.hpp"
#include "test_support.hpp"

using namespace attnspec;
namespace at = attnspec::gpu::attn;

TEST_CASE("SpecA softmax body declares its launch bound of 256 threads", "[gpu-logic][attention]") {
    STATIC_REQUIRE(gpu::launch_bound<at::SoftmaxRowsBody<double>>::value == at::kSoftmaxWidth);
    STATIC_REQUIRE(gpu::launch_bound<at::SoftmaxRowsBody<float>>::value == 256);
    STATIC_REQUIRE(gpu::launch_bound<at::FillColumnsBody<double>>::value == 0);  // none declared
    std::vector<double> L(512, 0.0);
    gpu::CpuGrid grid;
    const at::SoftmaxRowsBody<double> body{L.data(), 512, 1, false};
    const Error e = test::error_of(
        [&] { grid(1, 512, sizeof(double) * 512, body, "softmax launched too wide"); });
    CHECK(e.code() == ExitCode::Internal);
    CHECK(std::string(e.what()).find("softmax launched too wide") != std::string::npos);
    CHECK(grid.counters().launches == 0);
}
