// check-kernel spec-attention: verdict, reference, baseline and stress cases
// (kernels/spec_attention_check.hpp; the bound is proofs/kernel_tolerance.md, "SpecA forward").
#include "attnspec/kernels/spec_attention_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnspec/base/enum_names.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/kernels/derivative_nonfinite.hpp"
#include "check_compare.hpp"
#include "nonfinite_check.hpp"
#include "spec_attention_projection.hpp"

namespace attnspec::kernels {
namespace {

constexpr EnumName<SpecCorrection> kCorrectionNames[] = {{SpecCorrection::lambda, "lambda"},
                                                         {SpecCorrection::svd, "svd"}};
constexpr const char* kCases[] = {"gaussian", "large-lambda", "rank-deficient-w", "large-logits"};
constexpr const char* kNonfiniteCases[] = {"nan-x", "inf-x", "nan-w", "inf-w"};
constexpr double kPaperLambda = 10, kLargeLambda = 100;

// The three corrected weights and the attention problem on the float64 projections.
struct Projected {
    detail::CorrectedWeight wq, wk, wv;
    detail::Projection q, k, v;
    AttentionProblem center;
};

Projected projected(const SpecAttentionProblem& p, const detail::ProjectionModel& m) {
    detail::spec_dims(p);
    Projected r;
    r.wq = detail::corrected_weight(p.w_q, p.correction, p.lambda, "w_q");
    r.wk = detail::corrected_weight(p.w_k, p.correction, p.lambda, "w_k");
    r.wv = detail::corrected_weight(p.w_v, p.correction, p.lambda, "w_v");
    r.q = detail::project(p.x, r.wq, m), r.k = detail::project(p.x, r.wk, m);
    r.v = detail::project(p.x, r.wv, m);
    r.center.q = r.q.center, r.center.k = r.k.center, r.center.v = r.v.center;
    r.center.mask = p.mask, r.center.scale = p.scale, r.center.mask_array = p.mask_array;
    return r;
}

// The operand perturbations of one row: pointers into `a`, `b`, `c` at the offsets of in's q, K,
// V in `center`.
RowInput perturbed(RowInput in, const AttentionProblem& center, const std::vector<double>& a,
                   const std::vector<double>& b, const std::vector<double>& c) {
    in.dq = a.data() + (in.q - center.q.values.data());
    in.dK = b.data() + (in.K - center.k.values.data());
    in.dV = c.data() + (in.V - center.v.values.data());
    return in;
}

// max_j A_j = s sum_c |q_c| |k_jc| over the row's keys: what one rounding of each projected
// element (relative cf) moves a logit by, over 2 cf.
double max_abs_dot(const RowInput& in) {
    double mx = 0;
    for (long j = 0; j < in.n; ++j) {
        double dot = 0;
        const double* k = in.K + in.key(j) * in.d;
        for (long c = 0; c < in.d; ++c) dot += std::fabs(in.q[c] * k[c]);
        mx = std::max(mx, in.scale * dot);
    }
    return mx;
}

// nan-x, inf-x: per batch one element of x; nan-w, inf-w: one element of one weight (drawn);
// NaN, or +inf (-inf for half the draws).
void plant_spec_nonfinite(const std::string& name, SpecAttentionProblem& p, Rng& rng, long B,
                          long N, long D, long d) {
    const bool is_nan = name[0] == 'n';
    const auto value = [&] {
        if (is_nan) return std::numeric_limits<double>::quiet_NaN();
        return rng.integer(0, 1) == 1 ? -std::numeric_limits<double>::infinity()
                                      : std::numeric_limits<double>::infinity();
    };
    if (name.back() == 'x') {
        for (long b = 0; b < B; ++b) {
            const long i = rng.integer(0, N - 1), c = rng.integer(0, D - 1);
            p.x.values[static_cast<size_t>((b * N + i) * D + c)] = value();
        }
        return;
    }
    Array* w[] = {&p.w_q, &p.w_k, &p.w_v};
    Array& a = *w[rng.integer(0, 2)];
    const long k = rng.integer(0, D - 1), c = rng.integer(0, d - 1);
    a.values[static_cast<size_t>(k * d + c)] = value();
}

}  // namespace

const char* spec_correction_name(SpecCorrection c) { return enum_name(c, kCorrectionNames); }

SpecCorrection parse_spec_correction(const std::string& text, const std::string& parameter) {
    return enum_from_name(text, kCorrectionNames, "correction", parameter);
}

KernelCheckResult check_spec_attention(const SpecAttentionProblem& given, const Array& o,
                                       const KernelCheckOptions& opt) {
    detail::check_factor(opt);
    // The inputs as a kernel storing opt.storage reads them (check_compare.hpp).
    detail::refuse_beyond_range(
        {{&given.x, "x"}, {&given.w_q, "w_q"}, {&given.w_k, "w_k"}, {&given.w_v, "w_v"}},
        opt.storage);
    if (any_nonfinite({&given.x, &given.w_q, &given.w_k, &given.w_v}))
        return detail::check_spec_attention_nonfinite(given, o, opt);
    SpecAttentionProblem holder;
    Array mask;
    const bool stored = given.mask == MaskKind::additive &&
                        &detail::mask_as_stored(given.mask_array, opt.storage, mask) == &mask;
    if (stored) holder = given, holder.mask_array = std::move(mask);
    const SpecAttentionProblem& p = stored ? holder : given;
    KernelCheckResult r;
    r.inputs_exact = detail::all_exact({&p.x, &p.w_q, &p.w_k, &p.w_v, &p.mask_array}, opt.storage);
    const detail::ProjectionModel pm =
        detail::projection_model(opt.storage, opt.accumulate, r.inputs_exact);
    const Projected P = projected(p, pm);
    const ProblemShape sh = problem_shape(P.center);
    detail::check_shape(o, sh.out_shape(), "o");
    r.q_shape = p.x.shape, r.k_shape = p.w_q.shape, r.v_shape = p.w_v.shape;
    r.scale = effective_scale(P.center, sh);
    // The projected operands are what the kernel's attention reads (stored in the storage
    // format: (Q5) charged that rounding), so the attention model takes them as exact (Q6).
    const RoundingModel model = kernel_model(opt.storage, opt.accumulate, true);
    const double cf = detail::projection_floor_units(pm);
    const Array base = baseline_spec_attention(p, opt.storage, opt.accumulate);
    RowScratch scratch;
    RowAnalysis ref, own;
    std::vector<long> keys;
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h)
            for (long i = 0; i < sh.Nq; ++i) {
                const long at = ((b * sh.H + h) * sh.Nq + i) * sh.dv;
                const RowInput in0 = detail::row_input_any(sh, P.center, r.scale, b, h, i, keys);
                ++r.rows;
                if (in0.n == 0) {
                    detail::masked_row(o.values.data() + at, sh.dv,
                                       detail::element_index(sh, b, h, i, 0), opt, r);
                    continue;
                }
                const RowInput in = perturbed(in0, P.center, P.q.kernel, P.k.kernel, P.v.kernel);
                analyze_row(in, model, scratch, ref);
                // The reference's own error against the exact SpecA: its attention's rounding
                // plus the propagation of its projections' error (Q6).
                analyze_row(perturbed(in0, P.center, P.q.ref, P.k.ref, P.v.ref), reference_model(),
                            scratch, own);
                // The floor adds one rounding (relative cf) of each projected q, k, v: 2 cf A_j
                // on a logit, twice that through the softmax, cf on each v_jc.
                detail::RowValues v;
                v.got = o.values.data() + at, v.ref = ref.o.data(), v.bound = ref.bound.data();
                v.ref_error = own.bound.data(), v.base = base.values.data() + at;
                v.n = sh.dv;
                v.first_row = (2 * model.u_a * ref.max_abs_logit + 4 * model.u_a + model.u_p +
                               4 * cf * max_abs_dot(in0) + cf) *
                              ref.max_abs_pv;
                v.index = detail::element_index(sh, b, h, i, 0);
                detail::compare_row(v, model.u_out, opt, r);
            }
    detail::decide(r, opt, "o", 0);
    return r;
}

Array reference_spec_attention(const SpecAttentionProblem& p) {
    const Projected P = projected(p, detail::ProjectionModel{});
    const ProblemShape sh = problem_shape(P.center);
    const double scale = effective_scale(P.center, sh);
    Array out;
    out.shape = sh.out_shape();
    out.values.assign(static_cast<size_t>(sh.B * sh.H * sh.Nq * sh.dv), 0.0);
    RowScratch scratch;
    RowAnalysis ref;
    std::vector<long> keys;
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h)
            for (long i = 0; i < sh.Nq; ++i) {
                analyze_row(detail::row_input_any(sh, P.center, scale, b, h, i, keys),
                            reference_model(), scratch, ref);
                std::copy(ref.o.begin(), ref.o.end(),
                          out.values.begin() + ((b * sh.H + h) * sh.Nq + i) * sh.dv);
            }
    return out;
}

Array baseline_spec_attention(const SpecAttentionProblem& p, Format storage, Format accumulate) {
    detail::spec_dims(p);
    Array x = p.x;
    detail::round_all({&x}, storage);
    AttentionProblem a;
    a.q = detail::baseline_project(x, p.w_q,
                                   detail::corrected_weight(p.w_q, p.correction, p.lambda, "w_q"),
                                   storage, accumulate);
    a.k = detail::baseline_project(x, p.w_k,
                                   detail::corrected_weight(p.w_k, p.correction, p.lambda, "w_k"),
                                   storage, accumulate);
    a.v = detail::baseline_project(x, p.w_v,
                                   detail::corrected_weight(p.w_v, p.correction, p.lambda, "w_v"),
                                   storage, accumulate);
    a.mask = p.mask, a.scale = p.scale,
    a.mask_array = p.mask_array;  // baseline_attention rounds it
    Array o, lse;
    baseline_attention(a, storage, accumulate, o, lse);
    return o;
}

std::vector<std::string> spec_attention_cases() {
    return std::vector<std::string>(std::begin(kCases), std::end(kCases));
}

std::vector<std::string> spec_attention_nonfinite_cases() {
    return std::vector<std::string>(std::begin(kNonfiniteCases), std::end(kNonfiniteCases));
}

double spec_case_lambda(const std::string& name) {
    return name == kCases[1] ? kLargeLambda : kPaperLambda;
}

SpecAttentionProblem generate_spec_attention(const std::string& name, std::uint64_t seed,
                                             const std::vector<std::int64_t>& shape,
                                             Format storage) {
    const bool nonfinite = std::find(std::begin(kNonfiniteCases), std::end(kNonfiniteCases),
                                     name) != std::end(kNonfiniteCases);
    if (!nonfinite && std::find(std::begin(kCases), std::end(kCases), name) == std::end(kCases))
        fail_usage("unknown spec-attention stress case '" + name +
                       "' (expected gaussian, large-lambda, rank-deficient-w, large-logits, "
                       "nan-x, inf-x, nan-w or inf-w)",
                   "stress_case");
    if (shape.size() < 3 || shape.size() > 4)
        fail_data("a spec-attention stress shape is (N, D, d) or (B, N, D, d), got " +
                  shape_text(shape));
    for (std::int64_t e : shape)
        if (e < 1 || e > (1 << 16))
            fail_data("a spec-attention stress shape has dimensions in [1, 65536], got " +
                      shape_text(shape));
    const size_t r = shape.size();
    const long N = static_cast<long>(shape[r - 3]), D = static_cast<long>(shape[r - 2]),
               d = static_cast<long>(shape[r - 1]);
    const long B = r == 4 ? static_cast<long>(shape[0]) : 1;
    if (static_cast<double>(B) * N * D > double(1 << 28) || double(D) * d > double(1 << 28))
        fail_data("a spec-attention stress shape above 2^28 elements: " + shape_text(shape));
    Rng rng(seed);
    SpecAttentionProblem p;
    p.lambda = spec_case_lambda(name);
    p.x.shape = r == 4 ? std::vector<std::int64_t>{B, N, D} : std::vector<std::int64_t>{N, D};
    const double sx = (name == "large-logits" ? 4.0 : 1.0) / std::sqrt(static_cast<double>(D));
    p.x.values.resize(static_cast<size_t>(B * N * D));
    for (double& v : p.x.values) v = sx * rng.normal();
    const long rank = std::max(1L, d / 4);
    for (Array* w : {&p.w_q, &p.w_k, &p.w_v}) {
        w->shape = {D, d};
        Eigen::MatrixXd W = rng.gaussian(D, d) / std::sqrt(static_cast<double>(D));
        if (name == "rank-deficient-w")
            W = rng.gaussian(D, rank) * rng.gaussian(rank, d) / std::sqrt(static_cast<double>(D)) +
                1e-3 * W;
        w->values.resize(static_cast<size_t>(D * d));
        for (long k = 0; k < D; ++k)
            for (long c = 0; c < d; ++c) w->values[k * d + c] = W(k, c);
    }
    for (Array* a : {&p.x, &p.w_q, &p.w_k, &p.w_v}) detail::round_all({a}, storage);
    if (nonfinite) plant_spec_nonfinite(name, p, rng, B, N, D, d);
    return p;
}

}  // namespace attnspec::kernels
