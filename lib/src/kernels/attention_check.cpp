// check-kernel attention: reference, rounding bound, baseline rule and verdict
// (kernels/attention_check.hpp; the bound is derived in proofs/kernel_tolerance.md).
#include "attnspec/kernels/attention_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "attnspec/base/enum_names.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/kernels/attention_baseline.hpp"
#include "attnspec/kernels/attention_reference.hpp"

namespace attnspec::kernels {
namespace {

constexpr EnumName<KernelVerdict> kVerdictNames[] = {
    {KernelVerdict::pass, "pass"}, {KernelVerdict::fail, "fail"}, {KernelVerdict::wrong, "wrong"}};

using Ratio = double (*)(const ElementReport&);

double ratio(double error, double limit) {
    if (error == 0) return 0;
    return limit > 0 ? error / limit : std::numeric_limits<double>::infinity();
}
double by_bound(const ElementReport& x) { return ratio(x.error, x.bound); }
double by_rule(const ElementReport& x) { return ratio(x.error, x.allowed); }

// Keeps the `k` elements of largest key in `list` (descending).
void keep_worst(std::vector<ElementReport>& list, const ElementReport& e, Ratio key, int k) {
    if (k <= 0) return;
    if (static_cast<int>(list.size()) == k && key(e) <= key(list.back())) return;
    const auto at = std::find_if(list.begin(), list.end(),
                                 [&](const ElementReport& x) { return key(e) > key(x); });
    list.insert(at, e);
    if (static_cast<int>(list.size()) > k) list.pop_back();
}

bool all_inputs_exact(const AttentionProblem& p, Format f) {
    for (const Array* a : {&p.q, &p.k, &p.v})
        for (double x : a->values)
            if (!representable(x, f)) return false;
    return true;
}

// q, k, v rounded to `f` (what a kernel's matrix units read); O(B H N d) memory, once.
AttentionProblem entered_inputs(const AttentionProblem& p, Format f) {
    AttentionProblem e = p;
    for (Array* a : {&e.q, &e.k, &e.v})
        for (double& x : a->values) x = round_to(x, f);
    return e;
}

void check_shape(const Array& a, const std::vector<std::int64_t>& want, const char* name) {
    if (a.shape != want)
        fail_data(std::string(name) + " has shape " + shape_text(a.shape) + ", expected " +
                  shape_text(want) + " from q, k, v");
    std::size_t n = 1;
    for (std::int64_t e : want) n *= static_cast<std::size_t>(e);
    if (a.values.size() != n)
        fail_data(std::string(name) + " holds " + std::to_string(a.values.size()) +
                  " values, its shape needs " + std::to_string(n));
}

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
        std::vector<std::int64_t> ix;
        if (sh.rank == 4) ix.push_back(b);
        if (sh.rank >= 3) ix.push_back(h);
        ix.push_back(i);
        if (c >= 0) ix.push_back(c);
        return ix;
    }
    const AttentionProblem* entered = &p;  // q, k, v as the baseline reads them (see below)

    // Row i of head h in batch b, reading `src` (p, or the inputs rounded to the storage format).
    RowInput row_input(long b, long h, long i, const AttentionProblem& src) const {
        const long kv = b * sh.H_kv + sh.kv_head(h);
        RowInput in;
        in.q = src.q.values.data() + ((b * sh.H + h) * sh.Nq + i) * sh.d;
        in.K = src.k.values.data() + kv * sh.Nk * sh.d;
        in.V = src.v.values.data() + kv * sh.Nk * sh.dv;
        in.n = sh.visible(i, p.mask), in.d = sh.d, in.dv = sh.dv;
        in.scale = r.scale;
        return in;
    }
    void masked_row(const double* got, const std::vector<std::int64_t>& ix0);
    void row(long b, long h, long i, const double* got, const double* got_lse);
    void lse_element(long b, long h, long i, double got);
};

void Checker::masked_row(const double* got, const std::vector<std::int64_t>& ix0) {
    ++r.masked_rows;
    bool zeros = true, nans = true;
    for (long c = 0; c < sh.dv; ++c)
        zeros = zeros && got[c] == 0, nans = nans && std::isnan(got[c]);
    if (zeros || nans) return;
    for (long c = 0; c < sh.dv; ++c) {
        if (got[c] == 0 || std::isnan(got[c])) continue;
        ++r.elements_beyond_bound;
        ElementReport e;
        e.index = ix0, e.index.back() = c;
        e.got = got[c], e.reference = 0, e.error = std::fabs(got[c]);
        e.bound = 0, e.allowed = 0;
        r.worst_bound_ratio = std::numeric_limits<double>::infinity();
        keep_worst(r.worst_by_bound, e, by_bound, opt.worst);
    }
}

void Checker::row(long b, long h, long i, const double* got, const double* got_lse) {
    const RowInput in = row_input(b, h, i, p);
    ++r.rows;
    if (in.n == 0) {
        masked_row(got, index(b, h, i, 0));
        if (got_lse && std::isfinite(*got_lse)) ++r.lse_beyond_bound;  // +-inf or NaN expected
        return;
    }
    analyze_row(in, model, scratch, ref);
    baseline_row(row_input(b, h, i, *entered), opt.storage, opt.accumulate, base, base_lse, t);
    double row_err = 0, row_base = 0, row_ref = 0;
    for (long c = 0; c < sh.dv; ++c) {
        const double err = std::isfinite(got[c]) ? std::fabs(got[c] - ref.o[c])
                                                 : std::numeric_limits<double>::infinity();
        row_err = std::max(row_err, err);
        row_base = std::max(row_base, std::fabs(base[c] - ref.o[c]));
        row_ref = std::max(row_ref, std::fabs(ref.o[c]));
        r.max_reference_error = std::max(r.max_reference_error, ref.ref_error[c]);
        r.baseline_bound_ratio =
            std::max(r.baseline_bound_ratio, ratio(std::fabs(base[c] - ref.o[c]), ref.bound[c]));
    }
    // The floor: the first-order error of a kernel that rounds each intermediate once -- the
    // logits (through the softmax: 2 u_a max|x|), exp, the sum, the division, P, the PV sum,
    // the output (proofs/kernel_tolerance.md, "The baseline rule and its floor").
    const double w = 2 * model.u_a * ref.max_abs_logit + 4 * model.u_a + model.u_p;
    const double floor = opt.floor_units * (w * ref.max_abs_pv + model.u_out * row_ref);
    const double allowed = opt.factor * row_base + floor;
    r.tensor_error = std::max(r.tensor_error, row_err);
    r.tensor_baseline = std::max(r.tensor_baseline, row_base);
    r.tensor_floor = std::max(r.tensor_floor, floor);
    if (row_err > allowed) ++r.rows_beyond_rule;
    r.worst_rule_ratio = std::max(r.worst_rule_ratio, ratio(row_err, allowed));
    for (long c = 0; c < sh.dv; ++c) {
        ElementReport e;
        e.got = got[c], e.reference = ref.o[c];
        e.error = std::isfinite(got[c]) ? std::fabs(got[c] - ref.o[c])
                                        : std::numeric_limits<double>::infinity();
        e.bound = ref.bound[c], e.allowed = allowed, e.baseline = std::fabs(base[c] - ref.o[c]);
        if (!std::isfinite(got[c])) ++r.nonfinite;
        if (e.error > e.bound) ++r.elements_beyond_bound;
        r.worst_bound_ratio = std::max(r.worst_bound_ratio, ratio(e.error, e.bound));
        if (e.error == 0) continue;
        e.index = index(b, h, i, c);
        keep_worst(r.worst_by_bound, e, by_bound, opt.worst);
        keep_worst(r.worst_by_rule, e, by_rule, opt.worst);
    }
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
    keep_worst(r.worst_lse, e, by_bound, opt.worst);
}

void decide(KernelCheckResult& r, const KernelCheckOptions& opt, double max_abs_lse) {
    r.tensor_allowed = opt.factor * r.tensor_baseline + r.tensor_floor;
    if (r.has_lse)
        r.lse_allowed = opt.factor * r.lse_baseline +
                        opt.floor_units * unit_roundoff(opt.accumulate) * max_abs_lse;
    char buf[320];
    if (r.elements_beyond_bound > 0 || r.nonfinite > 0 || r.lse_beyond_bound > 0) {
        r.verdict = KernelVerdict::wrong;
        std::snprintf(buf, sizeof buf,
                      "wrong: %ld elements of o beyond the rounding bound (%ld NaN/Inf), %ld of "
                      "lse; worst error/bound %.3g",
                      r.elements_beyond_bound, r.nonfinite, r.lse_beyond_bound,
                      std::max(r.worst_bound_ratio, r.lse_bound_ratio));
    } else if (r.tensor_error > r.tensor_allowed || r.rows_beyond_rule > 0 ||
               (r.has_lse && r.lse_error > r.lse_allowed)) {
        r.verdict = KernelVerdict::fail;
        std::snprintf(buf, sizeof buf,
                      "fail: max error %.3g against allowed %.3g (%g x baseline %.3g + floor "
                      "%.3g); %ld of %ld rows beyond their rule (worst error/allowed %.3g); "
                      "within the rounding bound (worst error/bound %.3g)",
                      r.tensor_error, r.tensor_allowed, opt.factor, r.tensor_baseline,
                      r.tensor_floor, r.rows_beyond_rule, r.rows, r.worst_rule_ratio,
                      r.worst_bound_ratio);
    } else {
        r.verdict = KernelVerdict::pass;
        std::snprintf(buf, sizeof buf,
                      "pass: max error %.3g <= allowed %.3g (%g x baseline %.3g + floor %.3g), "
                      "every row within its rule; worst error/bound %.3g",
                      r.tensor_error, r.tensor_allowed, opt.factor, r.tensor_baseline,
                      r.tensor_floor, r.worst_bound_ratio);
    }
    r.summary = buf;
}

}  // namespace

const char* verdict_name(KernelVerdict v) { return enum_name(v, kVerdictNames); }

KernelCheckResult check_attention(const AttentionProblem& p, const Array& o, const Array* lse,
                                  const KernelCheckOptions& opt) {
    if (!(opt.factor >= 1) || !std::isfinite(opt.factor))
        fail_data("factor = " + value_text(opt.factor) + " must be finite and >= 1", "factor");
    const ProblemShape sh = problem_shape(p);
    check_shape(o, sh.out_shape(), "o");
    if (lse) check_shape(*lse, sh.lse_shape(), "lse");
    KernelCheckResult r;
    r.q_shape = p.q.shape, r.k_shape = p.k.shape, r.v_shape = p.v.shape;
    r.scale = effective_scale(p, sh);
    r.inputs_exact = all_inputs_exact(p, opt.storage);
    r.has_lse = lse != nullptr;
    Checker ck(p, sh, opt, kernel_model(opt.storage, opt.accumulate, r.inputs_exact), r);
    AttentionProblem rounded;
    if (!r.inputs_exact) rounded = entered_inputs(p, opt.storage), ck.entered = &rounded;
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h)
            for (long i = 0; i < sh.Nq; ++i) {
                const long row = (b * sh.H + h) * sh.Nq + i;
                ck.row(b, h, i, o.values.data() + row * sh.dv,
                       lse ? lse->values.data() + row : nullptr);
            }
    decide(r, opt, ck.max_abs_lse);
    return r;
}

void baseline_attention(const AttentionProblem& p, Format storage, Format accumulate, Array& o,
                        Array& lse) {
    const ProblemShape sh = problem_shape(p);
    AttentionProblem scaled = entered_inputs(p, storage);
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
