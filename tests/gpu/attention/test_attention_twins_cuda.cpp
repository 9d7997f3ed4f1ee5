// GPU tests of the attention twins (spec_attention_cuda, jacobian_spectrum_cuda): their gpu-check
// entries agree with the CPU reference on the quick cases, planted faults are caught, bad input and
// refusals come back with the documented codes. Exit 77 ("SKIP: no CUDA device") without a device.
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/attention/attention_cuda.hpp"
#include "attnspec/gpu/attention/jacobian_spectrum_cuda.hpp"
#include "attnspec/gpu/base/device.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "gpu_skip.hpp"
#include "test_support.hpp"

using namespace attnspec;

#if ATTNSPEC_HAVE_CUDA
namespace {
void print(const gpu::TwinCase& c) {
    std::printf("%-18s %-32s %-5s abs %.3e rel %.3e tol %.3e %s gpu %.3g s cpu %.3g s  %s\n",
                c.twin.c_str(), c.case_name.c_str(), c.precision.c_str(), c.max_abs_err,
                c.max_rel_err, c.tolerance, c.agrees ? "agrees" : "DISAGREES", c.gpu_seconds,
                c.cpu_seconds, c.note.c_str());
}

gpu::GpuCheckOptions quick() {
    gpu::GpuCheckOptions o;
    o.quick = true;
    o.timings = false;
    return o;
}
}  // namespace

TEST_CASE("spec_attention twin agrees with multihead_forward on the quick cases", "[gpu]") {
    test::skip_without_device();
    gpu::Context ctx;
    const auto cases = gpu::check_spec_attention(ctx, quick());
    REQUIRE(cases.size() >= 10);
    for (const auto& c : cases) {
        print(c);
        CHECK(c.agrees);
    }
}

TEST_CASE("jacobian_spectrum twin agrees with the CPU enclosures on the quick cases", "[gpu]") {
    test::skip_without_device();
    gpu::Context ctx;
    const auto cases = gpu::check_jacobian_spectrum(ctx, quick());
    REQUIRE(cases.size() >= 4);
    for (const auto& c : cases) {
        print(c);
        CHECK(c.agrees);
    }
}

TEST_CASE("planted faults make the attention twins disagree", "[gpu]") {
    test::skip_without_device();
    gpu::Context ctx;
    for (const auto f : {gpu::PlantedFault::off_by_one_tile, gpu::PlantedFault::dropped_term}) {
        const gpu::ScopedPlantedFault plant(f);
        INFO("fault " << gpu::to_string(f));
        for (const auto& c : gpu::check_spec_attention(ctx, quick())) {
            print(c);
            CHECK(!c.agrees);
        }
        // kappa(J): dropped J_V J_V^T changes every diagonal block, so every case; the skipped
        // last tile leaves a corner of each block column uncombined, which moves sigma_max or
        // sigma_min by an amount depending on the eigenvectors there: at least one case (gpu-check
        // then exits 1).
        long caught = 0, n = 0;
        for (const auto& c : gpu::check_jacobian_spectrum(ctx, quick())) {
            print(c);
            caught += c.agrees ? 0 : 1;
            ++n;
        }
        if (f == gpu::PlantedFault::dropped_term)
            CHECK(caught == n);
        else
            CHECK(caught >= 1);
    }
}

TEST_CASE("spec_attention reruns are bitwise identical and equal the one-shot twin", "[gpu]") {
    test::skip_without_device();
    gpu::Context ctx;
    const MultiHead m = gpu::spec_attention_instance(257, 64, 16, 3, 9, true);
    for (const bool fp32 : {false, true}) {
        gpu::SpecAttentionRun r(ctx, m, fp32);
        r.run();
        const Eigen::MatrixXd first = r.output();
        r.run();
        CHECK((r.output().array() == first.array()).all());  // fixed-order reductions
        const Eigen::MatrixXd once = fp32 ? gpu::multihead_forward_fp32(ctx, m).cast<double>()
                                          : gpu::multihead_forward(ctx, m);
        CHECK((once.array() == first.array()).all());
    }
}

TEST_CASE("attention twins: bad input is a data error, a refused size is 65", "[gpu]") {
    test::skip_without_device();
    gpu::Context ctx;
    MultiHead m = gpu::spec_attention_instance(8, 6, 4, 2, 1, false);
    m.X.modify([](Eigen::MatrixXd& X) { X(0, 0) = std::nan(""); });
    try {
        gpu::multihead_forward(ctx, m);
        FAIL("NaN input accepted");
    } catch (const Error& e) {
        CHECK(e.code() == ExitCode::DataError);
    }
    const Head h = gpu::spec_attention_instance(16, 8, 4, 1, 2, false).head(0);
    LargeSvdOptions o;
    o.max_bytes = 0.5 * gpu::jacobian_spectrum_device_bytes(16, 8, 4);
    try {
        gpu::jacobian_spectrum(ctx, h, o);
        FAIL("a size above max_bytes was not refused");
    } catch (const Error& e) {
        CHECK(e.code() == ExitCode::DataError);
        CHECK(e.parameter() == "max_bytes");
    }
}
#else
TEST_CASE("attention twins: a build without CUDA has no device", "[gpu]") {
    test::skip_without_device();
    FAIL("device_info reported a device in a build without CUDA");
}
#endif
