// check-kernel spec-attention on x or weights holding NaN or Inf
// (kernels/spec_attention_check.hpp, expected_spec_attention_nonfinite): the expected pattern of
// o, and the check of a kernel's output against it and, on the elements expected finite (and the
// `either` ones left finite), against the reference of the cleaned problem.
//
// Why the cleaned problem gives the right reference on the compared elements. An element (i, c)
// is compared only when row i's logits over its visible keys are finite or -inf (so q_i is
// finite: a non-finite q_i makes every logit of row i NaN or +-inf, and such a row is non-finite
// or 0-or-non-finite), and column c of v is finite on every key of finite logit. q_i finite
// needs x_i finite and W_Q finite (a non-finite W_Q[a, b] makes q_ib = x_ia W'_Q[a, b] NaN or
// +-inf for every i, 0 x inf included); a finite logit with key j needs k_j finite, so x_j and
// W_K finite; v_jc finite on those keys needs column c of W_V finite. Setting the non-finite rows
// of x and the non-finite entries of the weights to 0 therefore changes none of q_i, the k_j of
// finite logit, nor their v_jc, and hiding the keys of -inf logit by the mask gives them the
// weight 0 they have. The corrected weights W + lambda I of the finite weights are unchanged.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "attnspec/base/errors.hpp"
#include "attnspec/kernels/spec_attention_check.hpp"
#include "check_compare.hpp"
#include "nonfinite_check.hpp"
#include "spec_attention_projection.hpp"

namespace attnspec::kernels {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool finite(double x) { return std::isfinite(x); }

// DataError unless non-finite inputs of `p` can be checked: mask none or causal (attention's
// rule), and no non-finite weight under the SVD correction.
void refuse_unstated(const SpecAttentionProblem& p) {
    if (general_mask(p.mask))
        fail_data(std::string("NaN/Inf in the inputs of spec-attention under a ") +
                      mask_name(p.mask) +
                      " mask: non-finite inputs are checked under mask none or causal only",
                  "mask");
    if (p.correction != SpecCorrection::svd) return;
    for (const auto& [w, name] :
         {std::pair<const Array*, const char*>{&p.w_q, "w_q"}, {&p.w_k, "w_k"}, {&p.w_v, "w_v"}}) {
        const auto at = std::find_if_not(w->values.begin(), w->values.end(), finite);
        if (at == w->values.end()) continue;
        const long k = static_cast<long>(at - w->values.begin()), cols = w->shape[1];
        fail_data(std::string(name) + " holds " + value_text(*at) + " at (" +
                      std::to_string(k / cols) + ", " + std::to_string(k % cols) +
                      "): the SVD correction of a non-finite weight is not defined (its SVD "
                      "does not exist); check it with --correction lambda",
                  name);
    }
}

// The attention problem on the float64 projections X (W + C) (IEEE propagation: plain sums).
AttentionProblem projected_center(const SpecAttentionProblem& p) {
    const detail::ProjectionModel exact;
    AttentionProblem a;
    a.q =
        detail::project(p.x, detail::corrected_weight(p.w_q, p.correction, p.lambda, "w_q"), exact)
            .center;
    a.k =
        detail::project(p.x, detail::corrected_weight(p.w_k, p.correction, p.lambda, "w_k"), exact)
            .center;
    a.v =
        detail::project(p.x, detail::corrected_weight(p.w_v, p.correction, p.lambda, "w_v"), exact)
            .center;
    a.mask = p.mask, a.scale = p.scale;
    return a;
}

// The weaker of two expectations of one element (the float64 and the stored projections').
Expect merged(Expect a, Expect b) {
    if (a == b) return a;
    const auto nf = [](Expect e) {
        return e == Expect::nonfinite || e == Expect::zero_or_nonfinite;
    };
    return nf(a) && nf(b) ? Expect::zero_or_nonfinite : Expect::either;
}

// `p` with each non-finite row of x and each non-finite weight entry set to 0, and every key
// whose logit on `a` (p's float64 projections) is -inf hidden from its row by a boolean mask
// (p.mask none or causal; a boolean (.., N, N) mask only when some key is hidden).
SpecAttentionProblem cleaned(const SpecAttentionProblem& p, const AttentionProblem& a) {
    SpecAttentionProblem c = p;
    const long D = static_cast<long>(p.x.shape.back());
    for (std::size_t j = 0; j < c.x.values.size(); j += static_cast<std::size_t>(D)) {
        const auto row = c.x.values.begin() + static_cast<std::ptrdiff_t>(j);
        if (!std::all_of(row, row + D, finite)) std::fill(row, row + D, 0.0);
    }
    for (Array* w : {&c.w_q, &c.w_k, &c.w_v})
        for (double& x : w->values)
            if (!finite(x)) x = 0;
    const ProblemShape sh = problem_shape(a);
    const double scale = effective_scale(a, sh);
    const long N = sh.Nq, d = sh.d;
    Array mask;
    mask.shape = p.x.shape.size() == 3 ? std::vector<std::int64_t>{sh.H, N, N}
                                       : std::vector<std::int64_t>{N, N};
    mask.values.assign(static_cast<std::size_t>(sh.H * N * N), 1.0);
    bool hidden = false;
    for (long b = 0; b < sh.H; ++b)
        for (long i = 0; i < N; ++i) {
            const double* q = a.q.values.data() + (b * N + i) * d;
            double* m = mask.values.data() + (b * N + i) * N;
            for (long j = 0; j < N; ++j) {
                if (p.mask == MaskKind::causal && j > i) {
                    m[j] = 0;
                    continue;
                }
                const double* k = a.k.values.data() + (b * N + j) * d;
                if (std::all_of(q, q + d, finite) && std::all_of(k, k + d, finite)) continue;
                double dot = 0;
                for (long l = 0; l < d; ++l) dot += q[l] * k[l];
                if (scale * dot == -kInf) m[j] = 0, hidden = true;
            }
        }
    if (hidden) c.mask = MaskKind::boolean, c.mask_array = std::move(mask);
    return c;
}

// The pattern of o on `a`, p's float64 projections (projected_center).
std::vector<Expect> pattern_on(const AttentionProblem& a, Format storage) {
    AttentionProblem s = a;
    detail::round_all({&s.q, &s.k, &s.v}, storage);
    std::vector<Expect> x = expected_nonfinite(a).o;
    const std::vector<Expect> y = expected_nonfinite(s).o;
    for (std::size_t e = 0; e < x.size(); ++e) x[e] = merged(x[e], y[e]);
    return x;
}

}  // namespace

std::vector<Expect> expected_spec_attention_nonfinite(const SpecAttentionProblem& p,
                                                      Format storage) {
    detail::spec_dims(p);
    refuse_unstated(p);
    return pattern_on(projected_center(p), storage);
}

namespace detail {

KernelCheckResult check_spec_attention_nonfinite(const SpecAttentionProblem& p, const Array& o,
                                                 const KernelCheckOptions& opt) {
    spec_dims(p);
    refuse_unstated(p);
    const AttentionProblem a = projected_center(p);
    check_shape(o, problem_shape(a).out_shape(), "o");
    const std::vector<Expect> x = pattern_on(a, opt.storage);
    const SpecAttentionProblem clean = cleaned(p, a);
    const Array ref = reference_spec_attention(clean);
    KernelCheckResult r = check_spec_attention(clean, substituted(o, x, ref, true), opt);
    account(o, x, opt, "o", r);
    return r;
}

}  // namespace detail
}  // namespace attnspec::kernels
