// SpecA's row softmax kernel body (gpu/src/attention/attention_kernels.hpp) on the CPU grid
// runner against a plain softmax on the host: rows of 1, 255, 256, 257 and 600 logits (partial
// tiles of the 256 threads), in double and float. Clean, every entry agrees to a few ulps; the
// runner-only planted faults (rows walked one element short, the barrier before the sum tree left
// out) move entries by far more; the body's launch bound (__launch_bounds__(256) on the device)
// refuses a wider launch on the runner as on the device.
#include <cmath>
#include <random>
#include <vector>

#include "../../../gpu/src/attention/attention_kernels.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/cpu_grid.hpp"
#include "test_support.hpp"

using namespace attnspec;
namespace at = attnspec::gpu::attn;

namespace {

// Rows of n logits, count rows, row-major (row r at r n), as the forward's L columns.
template <class T>
std::vector<T> logits(long n, long count, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-4.0, 4.0);
    std::vector<T> L(std::size_t(n * count));
    for (T& v : L) v = T(u(rng));
    return L;
}

template <class T>
std::vector<double> host_softmax(const std::vector<T>& L, long n, long count) {
    std::vector<double> out(L.size());
    for (long r = 0; r < count; ++r) {
        double m = -INFINITY, s = 0;
        for (long j = 0; j < n; ++j) m = std::max(m, double(L[std::size_t(r * n + j)]));
        for (long j = 0; j < n; ++j) s += std::exp(double(L[std::size_t(r * n + j)]) - m);
        for (long j = 0; j < n; ++j)
            out[std::size_t(r * n + j)] = std::exp(double(L[std::size_t(r * n + j)]) - m) / s;
    }
    return out;
}

// The largest |runner - host| over all entries (infinity when the runner gives a NaN).
template <class T>
double softmax_error(long n, long count, int fault, long* barriers = nullptr) {
    std::vector<T> L = logits<T>(n, count, unsigned(n * 7 + count));
    const std::vector<double> ref = host_softmax(L, n, count);
    gpu::CpuGrid grid;
    at::softmax_rows(grid, L.data(), n, count, false, fault);
    if (barriers) *barriers = grid.counters().barriers;
    double err = 0;
    for (std::size_t i = 0; i < L.size(); ++i) {
        const double e = std::abs(double(L[i]) - ref[i]);
        err = std::isnan(e) ? INFINITY : std::max(err, e);
    }
    return err;
}

}  // namespace

TEST_CASE("SpecA softmax body on the CPU grid runner matches a host softmax, faults do not",
          "[gpu-logic][attention]") {
    for (long n : {1L, 255L, 256L, 257L, 600L}) {
        INFO("n " << n);
        const long count = 3;
        long clean_barriers = 0, faulty_barriers = 0;
        CHECK(softmax_error<double>(n, count, at::kSoftmaxFaultNone, &clean_barriers) <= 1e-15);
        CHECK(softmax_error<float>(n, count, at::kSoftmaxFaultNone) <= 2e-6);
        // per row: 1 + 8 (max tree) + 1 + 1 + 8 (sum tree) + 1
        CHECK(clean_barriers == count * 20);
        if (n > 1) CHECK(softmax_error<double>(n, count, at::kSoftmaxFaultRowStride) >= 1e-3);
        CHECK(softmax_error<double>(n, count, at::kSoftmaxFaultNoBarrier, &faulty_barriers) >=
              1e-3);
        CHECK(faulty_barriers == count * 19);
        CHECK(softmax_error<float>(n, count, at::kSoftmaxFaultNoBarrier) >= 1e-3);
    }
}

TEST_CASE("SpecA softmax body declares its launch bound of 256 threads", "[gpu-logic][attention]") {
    STATIC_REQUIRE(gpu::launch_bound<at::SoftmaxRowsBody<double>>::value == at::kSoftmaxWidth);
    STATIC_REQUIRE(gpu::launch_bound<at::SoftmaxRowsBody<float>>::value == 256);
    STATIC_REQUIRE(gpu::launch_bound<at::FillColumnsBody<double>>::value == 0);  // none declared
    std::vector<double> L(512, 0.0);
    gpu::CpuGrid grid;
    const at::SoftmaxRowsBody<double> body{L.data(), 512, 1, false, at::kSoftmaxFaultNone};
    const Error e = test::error_of(
        [&] { grid(1, 512, sizeof(double) * 512, body, "softmax launched too wide"); });
    CHECK(e.code() == ExitCode::Internal);
    CHECK(std::string(e.what()).find("softmax launched too wide") != std::string::npos);
    CHECK(grid.counters().launches == 0);
}
