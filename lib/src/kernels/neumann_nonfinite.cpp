// check-kernel neumann on inputs holding NaN or Inf (kernels/infsa_nonfinite.hpp): the expected
// pattern, and the check of a kernel's output against it and, on the elements expected finite
// (and the `either` ones left finite), against the reference of the cleaned inputs.
//
// Why the cleaned reference (detail::check_infsa_cleaned: every q or k row holding NaN/Inf set to
// 0, every NaN/Inf of v set to 0) is the true value of every compared element, per head:
//   * some y_ij = +inf: no element is compared (non-finite or zero_or_nonfinite);
//   * otherwise each entry y_ij reading a non-finite q_i or k_j is -inf or NaN (an infinite
//     component times finite ones, inf x 0 = NaN, inf - inf = NaN; +inf is excluded), so A+ holds
//     0 there (-inf, or NaN read as 0 by the ReLU) where the cleaned problem holds 0 too, and
//     every other entry reads only finite rows, which the cleaning leaves alone: a kernel whose
//     ReLU maps NaN to 0 sees the cleaned A+ exactly, hence its ||A+||_F and G. One whose ReLU
//     propagates NaN makes ||A+||_F, so all of G and O, NaN: nothing finite to compare;
//   * a non-finite v_jc enters O_rc through ((I - G)^-1 G)_rj only, which is exactly 0 on the
//     elements left `either` or finite for that reason (r does not reach j through entries > 0;
//     an entry > 0 that the storage format rounds to 0 is its rounding, inside the bound), so
//     v_jc = 0 gives the same value; the columns of v without NaN/Inf are not changed.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attnspec/kernels/infsa_nonfinite.hpp"
#include "attnspec/kernels/neumann_check.hpp"
#include "attnspec/kernels/precision.hpp"
#include "check_compare.hpp"
#include "nonfinite_check.hpp"

namespace attnspec::kernels {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// mark[r] = 1 for every row r reaching j by a path of length >= 1 along edge (row-major n x n,
// edge[r * n + k]: r -> k): a reverse breadth-first search from j. O(n^2).
void reaching(const std::vector<char>& edge, long n, long j, std::vector<char>& mark,
              std::vector<long>& queue) {
    mark.assign(static_cast<size_t>(n), 0);
    queue.clear();
    const auto visit = [&](long k) {
        for (long r = 0; r < n; ++r)
            if (edge[static_cast<size_t>(r * n + k)] && !mark[static_cast<size_t>(r)])
                mark[static_cast<size_t>(r)] = 1, queue.push_back(r);
    };
    visit(j);
    for (size_t at = 0; at < queue.size();) visit(queue[at++]);  // it grows: no range-for
}

}  // namespace

std::vector<Expect> expected_neumann_nonfinite(const AttentionProblem& p,
                                               const LinearInfsaParams& par, Format storage) {
    check_neumann_params(p, par);
    const ProblemShape sh = problem_shape(p);
    const long d = sh.d, dv = sh.dv, n = sh.Nq;
    std::vector<Expect> x(static_cast<size_t>(sh.B * sh.H * n * dv), Expect::finite);
    std::vector<double> y(static_cast<size_t>(n * n));
    std::vector<char> edge(y.size()), mark;
    std::vector<long> queue;
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h) {
            const long qh = (b * sh.H + h) * n, kv = (b * sh.H_kv + sh.kv_head(h)) * n;
            const double* Q = p.q.values.data() + qh * d;
            const double* K = p.k.values.data() + kv * d;
            const double* V = p.v.values.data() + kv * dv;
            Expect* head = x.data() + qh * dv;
            bool inf = false, nan = false;
            for (long i = 0; i < n; ++i)
                for (long j = 0; j < n; ++j) {
                    double dot = 0;
                    for (long l = 0; l < d; ++l) dot += Q[i * d + l] * K[j * d + l];
                    const double yij = y[static_cast<size_t>(i * n + j)] =
                        dot / static_cast<double>(d);
                    inf |= yij == kInf, nan |= std::isnan(yij);
                    // an entry > 0 the storage keeps > 0 (NaN and -inf are no edges)
                    edge[static_cast<size_t>(i * n + j)] = yij > 0 && round_to(yij, storage) > 0;
                }
            if (inf) {  // A^: inf / inf = NaN at the +inf entries, x / inf = 0 elsewhere
                for (long i = 0; i < n; ++i) {
                    const double* yi = y.data() + i * n;
                    const Expect e = std::any_of(yi, yi + n, [](double v) { return v == kInf; })
                                         ? Expect::nonfinite
                                         : Expect::zero_or_nonfinite;
                    std::fill(head + i * dv, head + (i + 1) * dv, e);
                }
                continue;
            }
            if (nan) std::fill(head, head + n * dv, Expect::either);  // ||A+||_F NaN or finite
            for (long j = 0; j < n; ++j) {
                const double* vj = V + j * dv;
                if (std::all_of(vj, vj + dv, [](double v) { return std::isfinite(v); })) continue;
                reaching(edge, n, j, mark, queue);
                for (long r = 0; r < n; ++r)
                    for (long c = 0; c < dv; ++c)
                        if (!std::isfinite(vj[c]))
                            detail::raise_expect(head[r * dv + c], mark[static_cast<size_t>(r)]
                                                                       ? Expect::nonfinite
                                                                       : Expect::either);
            }
        }
    return x;
}

namespace detail {

KernelCheckResult check_neumann_nonfinite(const AttentionProblem& p, const LinearInfsaParams& par,
                                          const Array& o, const KernelCheckOptions& opt) {
    check_neumann_params(p, par);
    check_shape(o, problem_shape(p).out_shape(), "o");
    return check_infsa_cleaned(p, par, o, expected_neumann_nonfinite(p, par, opt.storage), opt,
                               reference_neumann, check_neumann);
}

}  // namespace detail
}  // namespace attnspec::kernels
