// check-kernel neumann on inputs with NaN/Inf (kernels/infsa_nonfinite.hpp,
// expected_neumann_nonfinite): the stated propagation on hand-built 3-token heads (a chain graph,
// an entry that underflows in fp16, +inf and -inf entries, grouped K/V heads with a loop), and
// kernels: attnspec's LU baseline, a float64 Neumann series (dense, with a NaN-keeping ReLU, or
// skipping zero entries) and an explicit Eigen inverse pass on every non-finite case at fp64, fp32
// and bf16; planted wrong ones -- NaN/Inf replaced by 0 (numpy.nan_to_num), a NaN spread over its
// head, an error of 0.1 in one element expected finite -- are `wrong`.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

#include "attnspec/kernels/infsa_nonfinite.hpp"
#include "attnspec/kernels/neumann_check.hpp"
#include "attnspec/kernels/stress.hpp"
#include "infsa_check_support.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::kernels;
using namespace attnspec::test;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// G = gamma A+ / (||A+||_F + eps) of one head in float64, A+ = max(0, q_i.k_j / d) rounded to
// `storage`; the ReLU reads NaN as 0 (std::max) unless `nan_relu` (torch.relu: NaN stays).
RowMatrix head_g(const double* Q, const double* K, long n, long d, const LinearInfsaParams& par,
                 Format storage, bool nan_relu) {
    RowMatrix G(n, n);
    double F2 = 0;
    for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j) {
            double x = 0;
            for (long l = 0; l < d; ++l) x += Q[i * d + l] * K[j * d + l];
            const double y = x / double(d);
            const double a = G(i, j) =
                round_to(nan_relu && std::isnan(y) ? y : std::max(0.0, y), storage);
            F2 += a * a;
        }
    return G * (par.gamma / (std::sqrt(F2) + par.eps));
}

enum class Kernel { series_dense, series_nan_relu, series_skip_zero, eigen_inverse };

// sum_{k=1..600} G^k V (gamma^600 < 1e-13; dense: every product formed, 0 x NaN = NaN; nan_relu:
// dense with the ReLU keeping NaN; skip_zero: only the entries of G != 0), or ((I - G)^-1 - I) V
// through Eigen's inverse; the output rounded to output_format(storage).
Array float64_kernel(const AttentionProblem& p, const LinearInfsaParams& par, Format storage,
                     Kernel kind) {
    const ProblemShape sh = problem_shape(p);
    const long n = sh.Nq, d = sh.d, dv = sh.dv;
    return for_each_head(p, [&](const double* Q, const double* K, const double* V, double* o) {
        const RowMatrix G = head_g(Q, K, n, d, par, storage, kind == Kernel::series_nan_relu);
        const RowMatrix Vm = Eigen::Map<const RowMatrix>(V, n, dv);
        RowMatrix O = RowMatrix::Zero(n, dv);
        if (kind == Kernel::eigen_inverse) {
            const RowMatrix I = RowMatrix::Identity(n, n);
            O = (RowMatrix(I - G).inverse() - I) * Vm;
        } else {
            RowMatrix T = Vm, next(n, dv);
            for (int k = 1; k <= 600; ++k) {
                next.setZero();
                for (long i = 0; i < n; ++i)
                    for (long j = 0; j < n; ++j)
                        if (kind != Kernel::series_skip_zero || G(i, j) != 0)
                            next.row(i) += G(i, j) * T.row(j);
                T.swap(next);
                O += T;
            }
        }
        for (long e = 0; e < n * dv; ++e)
            o[e] = round_to(O(e / dv, e % dv), output_format(storage));
    });
}

KernelCheckOptions options(Format f) {
    KernelCheckOptions opt = at(f);
    if (f == Format::fp64) opt.accumulate = Format::fp64;
    return opt;
}

// 3 tokens, d = 2, d_v = 2: q_0 = (1, 0), q_1 = (0, 1), q_2 = 0, k_0 = 0, k_1 = (1, -1),
// k_2 = (-1, 1): the only entries y > 0 are y_01 and y_12, the chain 0 -> 1 -> 2.
AttentionProblem chain() {
    AttentionProblem p;
    p.q.shape = p.k.shape = p.v.shape = {3, 2};
    p.q.values = {1, 0, 0, 1, 0, 0};
    p.k.values = {0, 0, 1, -1, -1, 1};
    p.v.values = {0.5, -1, 2, 0.25, -0.75, 1.5};
    return p;
}

// Two query heads on chain()'s one K/V head (grouped): head 0 the chain, head 1 q_0 = (0, 1),
// q_1 = (1, 0), q_2 = 0: the entries y > 0 are y_02 and y_11 (0 -> 2 and the loop 1 -> 1); v NaN
// at (2, 0) and (1, 1).
AttentionProblem grouped() {
    AttentionProblem p = chain();
    p.q.shape = {2, 3, 2};
    p.k.shape = p.v.shape = {1, 3, 2};
    p.q.values.insert(p.q.values.end(), {0, 1, 1, 0, 0, 0});
    p.v.values[2 * 2 + 0] = p.v.values[1 * 2 + 1] = kNan;
    return p;
}

std::vector<Expect> pattern(std::initializer_list<Expect> e) { return e; }

constexpr Expect F = Expect::finite, N = Expect::nonfinite, E = Expect::either,
                 Z = Expect::zero_or_nonfinite;

// The correct kernels' outputs on p at f: the baseline (LU), the float64 series (dense, with the
// NaN-keeping ReLU, skipping zeros) and the explicit inverse.
std::vector<Array> correct_outputs(const AttentionProblem& p, const LinearInfsaParams& par,
                                   Format f) {
    return {baseline_neumann(p, par, f, options(f).accumulate),
            float64_kernel(p, par, f, Kernel::series_dense),
            float64_kernel(p, par, f, Kernel::series_nan_relu),
            float64_kernel(p, par, f, Kernel::series_skip_zero),
            float64_kernel(p, par, f, Kernel::eigen_inverse)};
}

// The planted faults on a correct output o of p: NaN/Inf turned into 0 must be wrong when some
// element must be non-finite; the head's NaN spread over the head (heads of `block` elements) and
// 0.1 added to an element expected finite must be wrong. Counts what it tried.
struct Planted {
    long hidden = 0, spread = 0, shifted = 0;
};
void planted_are_wrong(const AttentionProblem& p, const LinearInfsaParams& par, const Array& o,
                       const KernelCheckOptions& opt, long block, Planted& n) {
    const std::vector<Expect> x = expected_neumann_nonfinite(p, par, opt.storage);
    if (std::count(x.begin(), x.end(), Expect::nonfinite) > 0) {
        Array z = o;
        for (double& v : z.values)
            if (!std::isfinite(v)) v = 0;
        ++n.hidden;
        CHECK(check_neumann(p, par, z, opt).verdict == KernelVerdict::wrong);
    }
    Array s = o;
    bool changed = false;
    for (size_t h = 0; h < s.values.size(); h += static_cast<size_t>(block)) {
        const auto b = s.values.begin() + static_cast<std::ptrdiff_t>(h);
        if (std::all_of(b, b + block, [](double v) { return std::isfinite(v); })) continue;
        for (size_t e = h; e < h + static_cast<size_t>(block); ++e)
            changed = changed || x[e] == Expect::finite, s.values[e] = kNan;
    }
    if (changed) {
        ++n.spread;
        CHECK(check_neumann(p, par, s, opt).verdict == KernelVerdict::wrong);
    }
    const auto it = std::find(x.begin(), x.end(), Expect::finite);
    if (it != x.end()) {
        Array f = o;
        f.values[static_cast<size_t>(it - x.begin())] += 0.1;
        ++n.shifted;
        CHECK(check_neumann(p, par, f, opt).verdict == KernelVerdict::wrong);
    }
}

}  // namespace

TEST_CASE("check-kernel neumann non-finite: the stated propagation", "[kernels][neumann]") {
    const LinearInfsaParams par;
    AttentionProblem p = chain();
    SECTION("NaN in v_2c: the rows reaching 2 (1 directly, 0 through 1), row 2 either") {
        p.v.values[2 * 2 + 0] = kNan;
        CHECK(expected_neumann_nonfinite(p, par, Format::fp32) == pattern({N, F, N, F, E, F}));
        p.v.values[2 * 2 + 1] = -kInf;  // both columns
        CHECK(expected_neumann_nonfinite(p, par, Format::fp32) == pattern({N, N, N, N, E, E}));
    }
    SECTION("NaN in v_1c: row 0 reaches 1; rows 1 and 2 do not") {
        p.v.values[1 * 2 + 1] = kNan;
        CHECK(expected_neumann_nonfinite(p, par, Format::fp32) == pattern({F, N, F, E, F, E}));
    }
    SECTION("NaN in v_0c: no row reaches 0") {
        p.v.values[0] = kInf;
        CHECK(expected_neumann_nonfinite(p, par, Format::bf16) == pattern({E, F, E, F, E, F}));
    }
    SECTION("an edge fp16 rounds to 0 is no edge; fp32 and bf16 keep it") {
        p.q.values[3] = 1e-30;  // y_12 = 5e-31: below fp16's smallest subnormal
        p.v.values[2 * 2 + 0] = kNan;
        CHECK(expected_neumann_nonfinite(p, par, Format::bf16) == pattern({N, F, N, F, E, F}));
        CHECK(expected_neumann_nonfinite(p, par, Format::fp16) == pattern({E, F, E, F, E, F}));
    }
    SECTION("grouped K/V heads: each query head's own graph; a loop is a path of length 1") {
        CHECK(expected_neumann_nonfinite(grouped(), par, Format::fp32) ==
              pattern({N, N, N, E, E, E, N, E, E, N, E, E}));
    }
    SECTION("+inf entry y_01: row 0 non-finite, the others 0 or non-finite") {
        p.k.values[2] = kInf;  // y_01 = inf; y_11 = 0 x inf = NaN, y_21 NaN
        CHECK(expected_neumann_nonfinite(p, par, Format::fp32) == pattern({N, N, Z, Z, Z, Z}));
    }
    SECTION("NaN entries without +inf: every element either; NaN v still non-finite") {
        p.q.values[4] = kNan;  // row 2 of y NaN
        CHECK(expected_neumann_nonfinite(p, par, Format::fp32) == pattern({E, E, E, E, E, E}));
        p.v.values[2 * 2 + 1] = kNan;
        CHECK(expected_neumann_nonfinite(p, par, Format::fp32) == pattern({E, N, E, N, E, E}));
    }
    SECTION("-inf entries are exact zeros: every element finite") {
        p.q.values = {-kInf, 1, 0, 1, 0, 0};  // q_0 = (-inf, 1)
        p.k.values = {1, 0, 1, -1, 1, 1};     // every k_j0 > 0: y_0j = -inf; y_12 = 1/2
        CHECK(expected_neumann_nonfinite(p, par, Format::fp32) == pattern({F, F, F, F, F, F}));
    }
}

TEST_CASE("check-kernel neumann non-finite: hand-built heads through the check",
          "[kernels][neumann]") {
    const LinearInfsaParams par;
    AttentionProblem nan_v = chain();
    nan_v.v.values[2 * 2 + 0] = kNan;      // column 0 of rows 0, 1 non-finite, column 1 finite
    AttentionProblem minus_inf = chain();  // every entry of row 0 -inf: all finite
    minus_inf.q.values = {-kInf, 1, 0, 1, 0, 0};
    minus_inf.k.values = {1, 0, 1, -1, 1, 1};
    AttentionProblem two = grouped();  // every element non-finite or either
    Planted n;
    long all_nan = 0;
    for (const AttentionProblem* p : {&nan_v, &minus_inf, &two})
        for (Format f : {Format::fp64, Format::fp32, Format::bf16}) {
            const KernelCheckOptions opt = options(f);
            long k = 0;
            for (const Array& o : correct_outputs(*p, par, f)) {
                CAPTURE(format_name(f), k++);
                const KernelCheckResult r = check_neumann(*p, par, o, opt);
                INFO(r.summary);
                CHECK(r.verdict == KernelVerdict::pass);
                CHECK(r.nonfinite_mismatch == 0);
                planted_are_wrong(*p, par, o, opt, 6, n);
                if (p == &minus_inf) {  // -inf x 0 = NaN everywhere: a head required finite
                    Array s = o;
                    std::fill(s.values.begin(), s.values.end(), kNan);
                    ++all_nan;
                    CHECK(check_neumann(*p, par, s, opt).verdict == KernelVerdict::wrong);
                }
            }
        }
    CHECK(n.hidden == 30);   // nan_v and two: 3 formats x 5 kernels each
    CHECK(n.spread == 15);   // nan_v
    CHECK(n.shifted == 30);  // nan_v and minus_inf
    CHECK(all_nan == 15);
}

TEST_CASE("check-kernel neumann non-finite: correct and planted kernels on the stress cases",
          "[kernels][neumann]") {
    const LinearInfsaParams par;
    Planted n;
    long cases = 0;
    for (StressCase c : nonfinite_cases_for("neumann"))
        for (Format f : {Format::fp64, Format::fp32, Format::bf16})
            for (std::uint64_t seed : {1u, 2u}) {
                CAPTURE(stress_name(c), format_name(f), seed);
                const AttentionProblem p = generate_neumann(stress_name(c), seed, {2, 16, 8}, f);
                const KernelCheckOptions opt = options(f);
                long k = 0;
                for (const Array& o : correct_outputs(p, par, f)) {
                    CAPTURE(k++);
                    const KernelCheckResult r = check_neumann(p, par, o, opt);
                    INFO(r.summary);
                    CHECK(r.verdict == KernelVerdict::pass);
                    CHECK(r.nonfinite_mismatch == 0);
                    planted_are_wrong(p, par, o, opt, 16 * 8, n);
                }
                ++cases;
            }
    CHECK(cases == 36);      // 6 cases x 3 formats x 2 seeds, 5 kernels each:
    CHECK(n.hidden == 120);  // inf-q, inf-k (+inf entries), nan-v, inf-v
    CHECK(n.spread == 60);   // nan-v and inf-v: the other columns of the head stay finite
    CHECK(n.shifted == 60);  // the same
}
