// The float64 references' fast paths give the bits of the general ones: analyze_row's rounding
// model without perturbed operands or a mask (vector lanes, attention_reference.cpp) against the
// same row with zero perturbations (the general loop: e_j + 0 = e_j), and attention-jvp's reference
// on one thread against several (rows in blocks, derivative_reference.cpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "attnspec/kernels/attention_reference.hpp"
#include "attnspec/kernels/derivative_reference.hpp"
#include "attnspec/kernels/stress.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::kernels;

TEST_CASE("check-kernel reference: zero perturbations give the bits of none", "[kernels]") {
    // 203 keys (not a multiple of the lanes); magnitude 8 with fp16 or bf16 accumulation puts
    // exponent arguments of the kernel's model above 1/2 (the expm1 branch), fp32 never.
    const long n = 203, d = 24, dv = 16;
    std::mt19937_64 rng(5);
    std::normal_distribution<double> g;
    for (double mag : {1.0, 8.0}) {
        std::vector<double> q(d), K(n * d), V(n * dv);
        for (double& x : q) x = mag * g(rng);
        for (double& x : K) x = mag * g(rng);
        for (double& x : V) x = g(rng);
        const std::vector<double> zq(d, 0.0), zK(K.size(), 0.0), zV(V.size(), 0.0);
        RowInput in;
        in.q = q.data(), in.K = K.data(), in.V = V.data(), in.n = n, in.d = d, in.dv = dv;
        in.scale = 0.2;
        RowInput zero = in;
        zero.dq = zq.data(), zero.dK = zK.data(), zero.dV = zV.data();
        for (Format f : {Format::fp32, Format::fp16, Format::bf16}) {
            INFO(format_name(f) << " magnitude " << mag);
            const RoundingModel M = kernel_model(f, f, true);
            RowScratch s1, s2;
            RowAnalysis a, b;
            analyze_row(in, M, s1, a);
            analyze_row(zero, M, s2, b);
            CHECK(a.o == b.o);
            CHECK(a.bound == b.bound);
            CHECK(a.ref_error == b.ref_error);
            CHECK(a.lse == b.lse);
            CHECK(a.lse_bound == b.lse_bound);
            CHECK(a.denominator_error == b.denominator_error);
            CHECK(s1.kappa == s2.kappa);
            CHECK(s1.kappa_ref == s2.kappa_ref);
            // Not vacuous: the reference's weights differ from key to key, and the fp32 bound is
            // finite (fp16 and bf16 at magnitude 8 may have none: the same in both).
            CHECK(s1.kappa_ref[0] != s1.kappa_ref[1]);
            if (f == Format::fp32) CHECK(std::isfinite(a.bound[0]));
        }
    }
}

TEST_CASE("attention-jvp reference: the same bits on one thread and on three", "[kernels]") {
    // 2 x 3 heads of 150 rows: 900 rows, 15 blocks of at most 64, so three threads share them.
    for (MaskKind mask : {MaskKind::none, MaskKind::causal}) {
        INFO(mask_name(mask));
        AttentionProblem p =
            generate_stress(StressCase::gaussian, 3, {2, 3, 150, 16}, Format::fp32);
        p.mask = mask;
        const AttentionProblem t =
            generate_stress(StressCase::gaussian, 4, {2, 3, 150, 16}, Format::fp32);
        const RoundingModel M = kernel_model(Format::fp32, Format::fp32, true);
        const ReferenceTensor one = reference_jvp(p, t.q, t.k, t.v, M, 1);
        const ReferenceTensor three = reference_jvp(p, t.q, t.k, t.v, M, 3);
        REQUIRE(one.value.values.size() == 2 * 3 * 150 * 16);
        CHECK(one.value.values == three.value.values);
        CHECK(one.bound == three.bound);
        CHECK(one.ref_error == three.ref_error);
        CHECK(one.first == three.first);
        CHECK(one.value.values.back() != 0.0);  // the last block was computed
    }
}
