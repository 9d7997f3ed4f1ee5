// check-kernel attention: reference, rounding bound, baseline rule and verdict
// (kernels/attention_check.hpp; the bound is derived in proofs/kernel_tolerance.md).
#include "attnspec/kernels/attention_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnspec/base/enum_names.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/kernels/attention_baseline.hpp"
#include "attnspec/kernels/attention_reference.hpp"
#include "check_compare.hpp"

namespace attnspec::kernels {
namespace {

constexpr EnumName<KernelVerdict> kVerdictNames[] = {
    {KernelVerdict::pass, "pass"}, {KernelVerdict::fail, "fail"}, {KernelVerdict::wrong, "wrong"}};

using detail::keep_worst;
using detail::Key;
using detail::ratio;

// The check's running state over rows.
struct Checker {
    Checker(const AttentionProblem& p_, const ProblemShape& sh_, const KernelCheckOptions& opt_,
            const RoundingModel& model_, KernelCheckResult& r_)
        : p(p_), sh(sh_), opt(opt_), model(model_), r(r_) {}
    const AttentionProblem& p;
    const ProblemShape sh;
    const KernelCheckOptions& opt;
    const RoundingModel model;
    KernelCheckResult& r;
    RowScratch scratch;
    RowAnalysis ref;
    std::vector<double> base, t;
    double base_lse = 0;
    double max_abs_lse = 0;

    std::vector<std::int64_t> index(long b, long h, long i, long c) const {
        return detail::element_index(sh, b, h, i, c);
    }
    const AttentionProblem* entered = &p;  // q, k, v as the baseline reads them (see below)

    // Row i of head h in batch b, reading `src` (p, or the inputs rounded to the storage format).
    RowInput row_input(long b, long h, long i, const AttentionProblem& src) const {
        return detail::row_input(sh, src, p.mask, r.scale, b, h, i);
    }
    void row(long b, long h, long i, const double* got, const double* got_lse);
    void lse_element(long b, long h, long i, double got);
};

void Checker::row(long b, long h, long i, const double* got, const double* got_lse) {
    const RowInput in = row_input(b, h, i, p);
    ++r.rows;
    if (in.n == 0) {
        detail::masked_row(got, sh.dv, index(b, h, i, 0), opt, r);
        if (got_lse && std::isfinite(*got_lse)) ++r.lse_beyond_bound;  // +-inf or NaN expected
        return;
    }
    analyze_row(in, model, scratch, ref);
    baseline_row(row_input(b, h, i, *entered), opt.storage, opt.accumulate, base, base_lse, t);
    // The floor: the first-order error of a kernel that rounds each intermediate once -- the
    // logits (through the softmax: 2 u_a max|x|), exp, the sum, the division, P, the PV sum,
    // the output (proofs/kernel_tolerance.md, "The baseline rule and its floor").
    detail::RowValues v;
    v.got = got, v.ref = ref.o.data(), v.bound = ref.bound.data();
    v.ref_error = ref.ref_error.data(), v.base = base.data(), v.n = sh.dv;
    v.first_row = (2 * model.u_a * ref.max_abs_logit + 4 * model.u_a + model.u_p) * ref.max_abs_pv;
    v.index = index(b, h, i, 0);
    detail::compare_row(v, model.u_out, opt, r);
    if (got_lse) lse_element(b, h, i, *got_lse);
}

void Checker::lse_element(long b, long h, long i, double got) {
    ElementReport e;
    e.index = index(b, h, i, -1);
    e.got = got, e.reference = ref.lse, e.bound = ref.lse_bound;
    e.error =
        std::isfinite(got) ? std::fabs(got - ref.lse) : std::numeric_limits<double>::infinity();
    e.baseline = std::fabs(base_lse - ref.lse);
    r.lse_error = std::max(r.lse_error, e.error);
    r.lse_baseline = std::max(r.lse_baseline, e.baseline);
    max_abs_lse = std::max(max_abs_lse, std::fabs(ref.lse));
    if (e.error > e.bound) ++r.lse_beyond_bound;
    r.lse_bound_ratio = std::max(r.lse_bound_ratio, ratio(e.error, e.bound));
    keep_worst(r.worst_lse, e, Key::bound, opt.worst);
}

}  // namespace

const char* verdict_name(KernelVerdict v) { return enum_name(v, kVerdictNames); }

KernelCheckResult check_attention(const AttentionProblem& p, const Array& o, const Array* lse,
                                  const KernelCheckOptions& opt) {
    detail::check_factor(opt);
    const ProblemShape sh = problem_shape(p);
    detail::check_shape(o, sh.out_shape(), "o");
    if (lse) detail::check_shape(*lse, sh.lse_shape(), "lse");
    KernelCheckResult r;
    r.q_shape = p.q.shape, r.k_shape = p.k.shape, r.v_shape = p.v.shape;
    r.scale = effective_scale(p, sh);
    r.inputs_exact = detail::all_exact({&p.q, &p.k, &p.v}, opt.storage);
    r.has_lse = lse != nullptr;
    Checker ck(p, sh, opt, kernel_model(opt.storage, opt.accumulate, r.inputs_exact), r);
    AttentionProblem rounded;
    if (!r.inputs_exact) {
        rounded = p;
        detail::round_all({&rounded.q, &rounded.k, &rounded.v}, opt.storage);
        ck.entered = &rounded;
    }
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h)
            for (long i = 0; i < sh.Nq; ++i) {
                const long row = (b * sh.H + h) * sh.Nq + i;
                ck.row(b, h, i, o.values.data() + row * sh.dv,
                       lse ? lse->values.data() + row : nullptr);
            }
    detail::decide(r, opt, "o", ck.max_abs_lse);
    return r;
}

void baseline_attention(const AttentionProblem& p, Format storage, Format accumulate, Array& o,
                        Array& lse) {
    const ProblemShape sh = problem_shape(p);
    AttentionProblem scaled = p;
    detail::round_all({&scaled.q, &scaled.k, &scaled.v}, storage);
    scaled.scale = effective_scale(p, sh);
    o.shape = sh.out_shape(), lse.shape = sh.lse_shape();
    o.values.assign(static_cast<size_t>(sh.B * sh.H * sh.Nq * sh.dv), 0.0);
    lse.values.assign(static_cast<size_t>(sh.B * sh.H * sh.Nq), 0.0);
    KernelCheckResult unused;
    unused.scale = scaled.scale;
    KernelCheckOptions opt;
    const Checker ck(scaled, sh, opt, RoundingModel{}, unused);
    std::vector<double> row, t;
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h)
            for (long i = 0; i < sh.Nq; ++i) {
                const long at = (b * sh.H + h) * sh.Nq + i;
                baseline_row(ck.row_input(b, h, i, scaled), storage, accumulate, row,
                             lse.values[at], t);
                std::copy(row.begin(), row.end(), o.values.begin() + at * sh.dv);
            }
}

}  // namespace attnspec::kernels
