// Inputs beyond the storage format's range (kernels/check_compare.hpp, refuse_beyond_range and
// mask_as_stored; docs/cli/check-kernel.md, "Values beyond the storage range"): an additive mask
// value that fp16 stores as -inf hides its key, for the reference too, so a row whose every key
// is masked that way is a fully masked row (its bound finite, a kernel writing the float64
// mask's average there caught); q, k, v or a positive mask value beyond the range are refused.
#include <cmath>
#include <string>

#include "attnspec/base/errors.hpp"
#include "attnspec/kernels/attention_check.hpp"
#include "attnspec/kernels/attention_reference.hpp"
#include "attnspec/kernels/derivative_check.hpp"
#include "attnspec/kernels/stress.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::kernels;

namespace {
constexpr long kN = 16, kD = 8;

// Gaussian (2, 16, 8) inputs at fp16 with an additive mask of -7e4 (beyond fp16's 65504) on keys
// 0-3 of every row and on every key of row 3.
AttentionProblem overflowing_mask(double big = -7e4) {
    AttentionProblem p = generate_stress(StressCase::gaussian, 5, {2, kN, kD}, Format::fp16);
    p.mask = MaskKind::additive;
    p.mask_array.shape = {kN, kN};
    p.mask_array.values.assign(kN * kN, 0.0);
    for (long i = 0; i < kN; ++i)
        for (long j = 0; j < kN; ++j)
            if (j < 4 || i == 3) p.mask_array.values[i * kN + j] = big;
    return p;
}

KernelCheckOptions fp16() {
    KernelCheckOptions opt;
    opt.storage = Format::fp16;
    return opt;
}
}  // namespace

TEST_CASE("check-kernel: a mask value fp16 stores as -inf hides its key, reference included",
          "[kernels][mask][storage-range]") {
    const AttentionProblem p = overflowing_mask();
    Array o, lse;
    baseline_attention(p, Format::fp16, Format::fp32, o, lse);  // rounds the mask: -inf
    for (long h = 0; h < 2; ++h)
        for (long c = 0; c < kD; ++c) CHECK(o.values[(h * kN + 3) * kD + c] == 0);
    const KernelCheckResult r = check_attention(p, o, &lse, fp16());
    CHECK(r.verdict == KernelVerdict::pass);
    CHECK(std::isfinite(r.worst_bound_ratio));
    CHECK(r.worst_bound_ratio <= 1);
    // A kernel that reads the mask as the float64 file holds it (finite -7e4: row 3 the average
    // of V) is no fp16 kernel: row 3 is fully masked in fp16. (Checked against the float64 mask,
    // as before mask_as_stored, row 3's rounding bound was infinite and this kernel passed.)
    AttentionProblem wide = p;
    wide.mask_array.values.assign(kN * kN, 0.0);
    for (long j = 0; j < 4; ++j)
        for (long i = 0; i < kN; ++i) wide.mask_array.values[i * kN + j] = -INFINITY;
    Array o_wide, lse_wide;
    baseline_attention(wide, Format::fp16, Format::fp32, o_wide, lse_wide);
    for (long h = 0; h < 2; ++h)  // row 3 as the float64 mask gives it: the mean of V's rows
        for (long c = 0; c < kD; ++c) {
            double mean = 0;
            for (long j = 0; j < kN; ++j) mean += p.v.values[(h * kN + j) * kD + c] / kN;
            o_wide.values[(h * kN + 3) * kD + c] = round_to(mean, Format::fp16);
        }
    const KernelCheckResult bad = check_attention(p, o_wide, nullptr, fp16());
    CHECK(bad.verdict != KernelVerdict::pass);
    // At fp32, -7e4 is in range: nothing changes, row 3 sees its keys (uniform weights).
    KernelCheckOptions f32;
    AttentionProblem p32 = overflowing_mask();
    Array o32, lse32;
    baseline_attention(p32, Format::fp32, Format::fp32, o32, lse32);
    CHECK(o32.values[3 * kD] != 0);
    CHECK(check_attention(p32, o32, &lse32, f32).verdict == KernelVerdict::pass);
}

TEST_CASE("check-kernel: inputs beyond the storage range are refused with their index",
          "[kernels][storage-range]") {
    AttentionProblem p = overflowing_mask();
    Array o, lse;
    baseline_attention(p, Format::fp16, Format::fp32, o, lse);
    AttentionProblem big_q = p;
    big_q.q.values[kD + 2] = 7e4;  // (0, 1, 2)
    const Error e = test::error_of([&] { check_attention(big_q, o, nullptr, fp16()); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK_THAT(std::string(e.what()),
               Catch::Contains("q holds 70000 at (0, 1, 2)") && Catch::Contains("beyond fp16"));
    AttentionProblem plus = overflowing_mask(7e4);
    const Error m = test::error_of([&] { check_attention(plus, o, nullptr, fp16()); });
    CHECK(m.code() == ExitCode::DataError);
    CHECK_THAT(std::string(m.what()), Catch::Contains("stores as +inf"));
    // The derivatives: a cotangent beyond the range.
    Array dout = o;
    dout.values[0] = -1e5;
    Array dq = p.q, dk = p.k, dv = p.v;
    const Error d = test::error_of([&] { check_attention_vjp(p, dout, dq, dk, dv, fp16()); });
    CHECK(d.code() == ExitCode::DataError);
    CHECK_THAT(std::string(d.what()), Catch::Contains("do holds"));
    // In range at fp32.
    KernelCheckOptions f32;
    CHECK_NOTHROW(check_attention(big_q, o, nullptr, f32));
}
