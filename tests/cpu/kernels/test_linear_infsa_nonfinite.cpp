// check-kernel linear-infsa and pure-infsa on inputs with NaN/Inf (kernels/infsa_nonfinite.hpp):
// the stated propagation on small hand-built problems, and kernels: float Linear-InfSA and
// one-hop InfSA written here pass on every non-finite case with either ReLU (x > 0 ? x : 0, which
// maps NaN to 0, or one propagating NaN); planted wrong ones -- NaN/Inf replaced by 0
// (numpy.nan_to_num), a NaN spread over its head, an error of 0.1 in one element expected finite
// -- do not pass.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attnspec/kernels/infsa_nonfinite.hpp"
#include "attnspec/kernels/pure_infsa_check.hpp"
#include "attnspec/kernels/stress.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::kernels;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Linear-InfSA in float arithmetic, heads of (N, d) with d_v = d, the output broadcast; the
// ReLU maps NaN to 0 unless `nan_relu`; a zero score sum gives 0.
Array float_kernel(const AttentionProblem& p, const LinearInfsaParams& par, bool nan_relu) {
    const long d = static_cast<long>(p.q.shape.back());
    const long N = static_cast<long>(p.q.shape[p.q.shape.size() - 2]);
    const long heads = static_cast<long>(p.q.values.size()) / (N * d);
    const float c = 1.f / std::sqrt(static_cast<float>(d)), eps = static_cast<float>(par.eps);
    Array o = p.v;
    std::vector<float> qb(d), acc(d), sc(N);
    for (long h = 0; h < heads; ++h) {
        const double *Q = p.q.values.data() + h * N * d, *K = p.k.values.data() + h * N * d;
        const double* V = p.v.values.data() + h * N * d;
        std::fill(qb.begin(), qb.end(), 0.f);
        float E = 0, S = 0;
        for (long i = 0; i < N; ++i) {
            float e2 = 0;
            for (long l = 0; l < d; ++l)
                e2 += (c * float(Q[i * d + l])) * (c * float(Q[i * d + l]));
            const float e = std::sqrt(e2);
            E += e;
            for (long l = 0; l < d; ++l) qb[l] += e * c * float(Q[i * d + l]);
        }
        for (float& x : qb) x /= E + eps;
        for (long j = 0; j < N; ++j) {
            float x = 0;
            for (long l = 0; l < d; ++l) x += qb[l] * float(K[j * d + l]);
            x *= c;
            S += sc[j] = nan_relu && std::isnan(x) ? x : x > 0 ? x : 0.f;
        }
        std::fill(acc.begin(), acc.end(), 0.f);
        for (long j = 0; j < N; ++j)
            for (long l = 0; l < d; ++l) acc[l] += sc[j] * float(V[j * d + l]);
        for (long i = 0; i < N; ++i)
            for (long l = 0; l < d; ++l)
                o.values[(h * N + i) * d + l] =
                    S == 0 ? 0.0 : double(float(par.gamma) * acc[l] / (S + eps));
    }
    return o;
}

// One-hop InfSA in float arithmetic (heads of (N, d), d_v = d): A+ = ReLU(Q K^T / d) with the
// ReLU as above, F = ||A+||_F, O = gamma A+ V / (F + eps) formed as (A+ / (F + eps)) V.
Array float_pure(const AttentionProblem& p, const LinearInfsaParams& par, bool nan_relu) {
    const long d = static_cast<long>(p.q.shape.back());
    const long N = static_cast<long>(p.q.shape[p.q.shape.size() - 2]);
    const long heads = static_cast<long>(p.q.values.size()) / (N * d);
    Array o = p.v;
    std::vector<float> a(static_cast<size_t>(N * N));
    for (long h = 0; h < heads; ++h) {
        const double *Q = p.q.values.data() + h * N * d, *K = p.k.values.data() + h * N * d;
        const double* V = p.v.values.data() + h * N * d;
        float F = 0;
        for (long i = 0; i < N; ++i)
            for (long j = 0; j < N; ++j) {
                float x = 0;
                for (long l = 0; l < d; ++l) x += float(Q[i * d + l]) * float(K[j * d + l]);
                x /= float(d);
                F += (a[i * N + j] = nan_relu && std::isnan(x) ? x
                                     : x > 0                   ? x
                                                               : 0.f) *
                     a[i * N + j];
            }
        const float D = std::sqrt(F) + float(par.eps);
        for (long i = 0; i < N; ++i)
            for (long c = 0; c < d; ++c) {
                float acc = 0;
                for (long j = 0; j < N; ++j) acc += a[i * N + j] / D * float(V[j * d + c]);
                o.values[(h * N + i) * d + c] = double(float(par.gamma) * acc);
            }
    }
    return o;
}

AttentionProblem small(long n, long d) {
    AttentionProblem p;
    p.q.shape = p.k.shape = p.v.shape = {n, d};
    for (long i = 0; i < n * d; ++i) {
        p.q.values.push_back(1.0 + 0.1 * double(i % 3));
        p.k.values.push_back(i % 2 == 0 ? 0.5 : -0.2);
        p.v.values.push_back(0.1 * double(i));
    }
    return p;
}

bool all_are(const std::vector<Expect>& x, long from, long step, Expect e) {
    for (size_t i = static_cast<size_t>(from); i < x.size(); i += static_cast<size_t>(step))
        if (x[i] != e) return false;
    return true;
}

}  // namespace

TEST_CASE("check-kernel linear-infsa non-finite: the stated propagation", "[kernels]") {
    const LinearInfsaParams par;
    AttentionProblem p = small(3, 2);  // q_bar > 0 in both components
    SECTION("NaN in q: every element 0 or NaN/Inf") {
        p.q.values[3] = kNan;
        CHECK(all_are(expected_linear_infsa_nonfinite(p, par), 0, 1, Expect::zero_or_nonfinite));
    }
    SECTION("+Inf in k_jc along q_bar: every element; -Inf: score 0, finite") {
        p.k.values[2] = kInf;
        CHECK(all_are(expected_linear_infsa_nonfinite(p, par), 0, 1, Expect::nonfinite));
        p.k.values[2] = -kInf;
        CHECK(all_are(expected_linear_infsa_nonfinite(p, par), 0, 1, Expect::finite));
        p.k.values[3] = kNan;
        CHECK(all_are(expected_linear_infsa_nonfinite(p, par), 0, 1, Expect::either));
    }
    SECTION("NaN in v_jc: column c when s_j > 0, either when s_j = 0") {
        p.v.values[1 * 2 + 1] = kNan;  // s_1 > 0
        std::vector<Expect> x = expected_linear_infsa_nonfinite(p, par);
        CHECK(all_are(x, 0, 2, Expect::finite));
        CHECK(all_are(x, 1, 2, Expect::nonfinite));
        p.k.values[1 * 2 + 0] = -1.0;  // s_1 = max(0, negative) = 0
        x = expected_linear_infsa_nonfinite(p, par);
        CHECK(all_are(x, 1, 2, Expect::either));
    }
}

TEST_CASE("check-kernel pure-infsa non-finite: the stated propagation", "[kernels]") {
    const LinearInfsaParams par;
    AttentionProblem p = small(3, 2);
    p.k.values[2] = kInf;  // y_i1 = +inf in every row (q > 0): every row non-finite
    CHECK(all_are(expected_pure_infsa_nonfinite(p, par), 0, 1, Expect::nonfinite));
    p.q.values[0] = -1.0, p.q.values[1] = 0.0;  // y_01 = -inf: row 0 of A^ is 0 / inf = 0
    std::vector<Expect> x = expected_pure_infsa_nonfinite(p, par);
    CHECK((x[0] == Expect::zero_or_nonfinite && x[1] == Expect::zero_or_nonfinite));
    CHECK(all_are(x, 2, 1, Expect::nonfinite));
    p = small(3, 2);
    p.v.values[1 * 2 + 0] = kNan;  // every y_i1 > 0: column 0 of every row
    x = expected_pure_infsa_nonfinite(p, par);
    CHECK((all_are(x, 0, 2, Expect::nonfinite) && all_are(x, 1, 2, Expect::finite)));
    p.q.values[2 * 2 + 1] = kNan;  // a NaN entry: ||A+||_F NaN or finite
    CHECK(all_are(expected_pure_infsa_nonfinite(p, par), 1, 2, Expect::either));
}

TEST_CASE("check-kernel pure-infsa non-finite: correct and planted kernels", "[kernels]") {
    const LinearInfsaParams par;
    long spread_changes = 0, hidden_checks = 0;
    for (StressCase c : nonfinite_stress_cases())
        for (std::uint64_t seed : {1u, 2u, 3u}) {
            CAPTURE(stress_name(c), seed);
            const AttentionProblem p =
                generate_linear_infsa(stress_name(c), seed, {2, 16, 8}, Format::fp32);
            const std::vector<Expect> x = expected_pure_infsa_nonfinite(p, par);
            KernelCheckOptions opt;
            for (bool nan_relu : {false, true}) {
                const Array o = float_pure(p, par, nan_relu);
                const KernelCheckResult r = check_pure_infsa(p, par, o, opt);
                INFO(r.summary);
                CHECK(r.verdict == KernelVerdict::pass);
                CHECK(r.nonfinite_mismatch == 0);
                if (std::count(x.begin(), x.end(), Expect::nonfinite) > 0) {
                    Array z = o;
                    for (double& v : z.values)
                        if (!std::isfinite(v)) v = 0;
                    ++hidden_checks;
                    CHECK(check_pure_infsa(p, par, z, opt).verdict == KernelVerdict::wrong);
                }
                Array s = o;  // a NaN spread over its head (16 rows of 8)
                bool changed = false;
                for (long h = 0; h < 2; ++h) {
                    const auto b = s.values.begin() + h * 128;
                    if (std::all_of(b, b + 128, [](double v) { return std::isfinite(v); }))
                        continue;
                    for (long e = h * 128; e < (h + 1) * 128; ++e)
                        changed = changed || x[static_cast<size_t>(e)] == Expect::finite,
                        s.values[static_cast<size_t>(e)] = kNan;
                }
                if (changed) {
                    ++spread_changes;
                    CHECK(check_pure_infsa(p, par, s, opt).verdict == KernelVerdict::wrong);
                }
            }
        }
    CHECK(hidden_checks >= 6);
    CHECK(spread_changes >= 6);
}

TEST_CASE("check-kernel linear-infsa non-finite: correct and planted kernels", "[kernels]") {
    const std::vector<std::int64_t> shape = {3, 24, 8};
    const LinearInfsaParams par;
    long spread_changes = 0;
    for (StressCase c : nonfinite_stress_cases())
        for (std::uint64_t seed : {1u, 2u, 3u}) {
            CAPTURE(stress_name(c), seed);
            const AttentionProblem p =
                generate_linear_infsa(stress_name(c), seed, shape, Format::fp32);
            KernelCheckOptions opt;
            const std::vector<Expect> x = expected_linear_infsa_nonfinite(p, par);
            for (bool nan_relu : {false, true}) {
                const Array o = float_kernel(p, par, nan_relu);
                const KernelCheckResult r = check_linear_infsa(p, par, o, opt);
                INFO(r.summary);
                CHECK(r.verdict == KernelVerdict::pass);
                CHECK(r.nonfinite_mismatch == 0);
                Array z = o;
                bool hidden = false;
                for (size_t e = 0; e < z.values.size(); ++e)
                    if (!std::isfinite(z.values[e])) z.values[e] = 0, hidden = true;
                if (hidden) {
                    // 0 is allowed where 0 or NaN/Inf is: nan-q with a NaN-propagating ReLU
                    const bool zero_ok = std::all_of(
                        x.begin(), x.end(), [](Expect e) { return e != Expect::nonfinite; });
                    if (!zero_ok)
                        CHECK(check_linear_infsa(p, par, z, opt).verdict == KernelVerdict::wrong);
                }
                Array s = o;  // a NaN spread over its head (24 rows of 8)
                bool changed = false;
                for (long h = 0; h < 3; ++h) {
                    const auto b = s.values.begin() + h * 24 * 8;
                    if (std::all_of(b, b + 24 * 8, [](double v) { return std::isfinite(v); }))
                        continue;
                    for (long e = h * 24 * 8; e < (h + 1) * 24 * 8; ++e)
                        changed = changed || x[static_cast<size_t>(e)] == Expect::finite,
                        s.values[static_cast<size_t>(e)] = kNan;
                }
                if (changed) {
                    ++spread_changes;
                    CHECK(check_linear_infsa(p, par, s, opt).verdict == KernelVerdict::wrong);
                }
                const auto it = std::find(x.begin(), x.end(), Expect::finite);
                if (it != x.end()) {
                    Array f = o;
                    f.values[static_cast<size_t>(it - x.begin())] += 0.1;
                    CHECK(check_linear_infsa(p, par, f, opt).verdict != KernelVerdict::pass);
                }
            }
        }
    CHECK(spread_changes >= 6);  // nan-v and inf-v: the other columns of the head stay finite
}
