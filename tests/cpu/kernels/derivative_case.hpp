// What the check-kernel derivative tests share (test_derivative_check.cpp,
// test_derivative_mask_check.cpp): complex-step inputs, the reference against an exact
// derivative, a generated VJP/JVP case (with its mask under boolean/additive), the checks and
// baselines on it. Header only, tests only.
#pragma once
#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "attnspec/kernels/derivative_baseline.hpp"
#include "attnspec/kernels/derivative_check.hpp"
#include "attnspec/kernels/derivative_reference.hpp"
#include "attnspec/kernels/stress.hpp"
#include "test_support.hpp"

namespace attnspec::kernels::test_deriv {

using Cplx = std::complex<double>;

// a + i h t, element by element (t null: a + 0i).
inline std::vector<Cplx> complexify(const Array& a, const Array* t = nullptr, double h = 0) {
    std::vector<Cplx> z(a.values.size());
    for (size_t e = 0; e < z.size(); ++e) z[e] = Cplx(a.values[e], t ? h * t->values[e] : 0.0);
    return z;
}

inline double max_abs(const std::vector<double>& x) {
    double m = 0;
    for (double e : x) m = std::max(m, std::fabs(e));
    return m;
}

// The reference is the exact derivative to within its own error bound (plus the complex step's
// own rounding, 1e-14 of the tensor's scale).
inline void check_reference(const ReferenceTensor& t, const std::vector<double>& exact) {
    const double scale = max_abs(exact);
    REQUIRE(scale > 0);
    for (size_t e = 0; e < exact.size(); ++e) {
        INFO("element " << e);
        CHECK(std::fabs(t.value.values[e] - exact[e]) <= t.ref_error[e] + 1e-14 * scale);
        CHECK(t.ref_error[e] <= 1e-12 * scale);
        CHECK(t.bound[e] >= t.ref_error[e]);
    }
}

inline float fl(double x, Format f) { return static_cast<float>(round_to(x, f)); }

struct Grads {
    Array dq, dk, dv;
};

inline KernelCheckOptions options(Format f) {
    KernelCheckOptions opt;
    opt.storage = f;
    return opt;
}

struct Case {
    AttentionProblem p;
    Array dout;               // vjp cotangent
    std::vector<Array> tang;  // jvp tangents
};

// A generated case (seed 11); under a boolean or additive mask with its generated mask (fully
// masked rows included: row 7 of 16).
inline Case make_case(StressCase c, Format f, MaskKind mask,
                      std::vector<std::int64_t> shape = {2, 64, 32}) {
    Case k;
    k.p = generate_stress(c, 11, shape, f);
    k.p.mask = mask;
    if (general_mask(mask)) k.p.mask_array = generate_mask(mask, 11, k.p.q.shape, f);
    const ProblemShape sh = problem_shape(k.p);
    k.dout = generate_directions(c, 11, {sh.out_shape()}, f)[0];
    k.tang = generate_directions(c, 11, {k.p.q.shape, k.p.k.shape, k.p.v.shape}, f);
    return k;
}

inline VjpCheckResult vjp(const Case& k, const Grads& g, Format f) {
    return check_attention_vjp(k.p, k.dout, g.dq, g.dk, g.dv, options(f));
}

inline KernelCheckResult jvp(const Case& k, const Array& o, Format f) {
    return check_attention_jvp(k.p, k.tang[0], k.tang[1], k.tang[2], o, options(f));
}

inline Grads baseline_grads(const Case& k, Format f) {
    Grads g;
    baseline_vjp(k.p, k.dout, f, Format::fp32, g.dq, g.dk, g.dv);
    return g;
}

inline Array baseline_tangent(const Case& k, Format f) {
    Array o;
    baseline_jvp(k.p, k.tang[0], k.tang[1], k.tang[2], f, Format::fp32, o);
    return o;
}

inline double vjp_bound_ratio(const VjpCheckResult& r) {
    return std::max({r.dq.worst_bound_ratio, r.dk.worst_bound_ratio, r.dv.worst_bound_ratio});
}

}  // namespace attnspec::kernels::test_deriv
