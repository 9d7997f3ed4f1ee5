// check-kernel attention-vjp and attention-jvp (kernels/derivative_check.hpp; the bounds are
// derived in proofs/kernel_tolerance.md, (D1)-(D9)).
#include "attnspec/kernels/derivative_check.hpp"

#include <algorithm>
#include <cstdio>

#include "attnspec/kernels/derivative_baseline.hpp"
#include "attnspec/kernels/derivative_nonfinite.hpp"
#include "attnspec/kernels/derivative_reference.hpp"
#include "check_compare.hpp"
#include "nonfinite_check.hpp"

namespace attnspec::kernels {
namespace {

// The index of row `row` of an array of `shape` (its last dimension the row's width), with a
// trailing slot for the column.
std::vector<std::int64_t> row_index(const std::vector<std::int64_t>& shape, long row) {
    std::vector<std::int64_t> ix(shape.size(), 0);
    for (std::size_t k = shape.size() - 1; k-- > 0;) ix[k] = row % shape[k], row /= shape[k];
    return ix;
}

// Compares every row of `got` with the reference tensor and the baseline into `r`; rows for
// which masked(row) holds are fully masked query rows (zeros or NaN expected).
template <class Masked>
void compare_tensor(const Array& got, const ReferenceTensor& ref, const Array& base,
                    const RoundingModel& model, const KernelCheckOptions& opt, const char* name,
                    Masked masked, KernelCheckResult& r) {
    const long width = static_cast<long>(got.shape.back());
    const long rows = static_cast<long>(got.values.size()) / width;
    for (long row = 0; row < rows; ++row) {
        const long at = row * width;
        ++r.rows;
        if (masked(row)) {
            detail::masked_row(got.values.data() + at, width, row_index(got.shape, row), opt, r);
            continue;
        }
        detail::RowValues v;
        v.got = got.values.data() + at, v.ref = ref.value.values.data() + at;
        v.bound = ref.bound.data() + at, v.ref_error = ref.ref_error.data() + at;
        v.base = base.values.data() + at, v.first = ref.first.data() + at, v.n = width;
        v.index = row_index(got.shape, row);
        detail::compare_row(v, model.u_out, opt, r);
    }
    detail::decide(r, opt, name, 0);
}

// What both checks start with: the shapes, the scale, the kernel's model, and the inputs as the
// baseline reads them (rounded to the storage format when some value is not representable).
struct Setup {
    ProblemShape sh;
    double scale = 0;
    bool exact = true;
    RoundingModel model;
};

Setup setup(const AttentionProblem& p, const std::vector<const Array*>& extra,
            const KernelCheckOptions& opt, AttentionProblem& entered,
            std::vector<Array>& entered_extra) {
    detail::check_factor(opt);
    Setup s;
    s.sh = problem_shape(p);
    s.scale = effective_scale(p, s.sh);
    std::vector<const Array*> all = {&p.q, &p.k, &p.v, &p.mask_array};
    all.insert(all.end(), extra.begin(), extra.end());
    s.exact = detail::all_exact(all, opt.storage);
    s.model = kernel_model(opt.storage, opt.accumulate, s.exact);
    entered = p;
    entered_extra.clear();
    for (const Array* a : extra) entered_extra.push_back(*a);
    std::vector<Array*> round = {&entered.q, &entered.k, &entered.v, &entered.mask_array};
    for (Array& a : entered_extra) round.push_back(&a);
    if (!s.exact) detail::round_all(round, opt.storage);
    return s;
}

void describe(KernelCheckResult& r, const AttentionProblem& p, const Setup& s) {
    r.q_shape = p.q.shape, r.k_shape = p.k.shape, r.v_shape = p.v.shape;
    r.scale = s.scale, r.inputs_exact = s.exact;
}

}  // namespace

VjpCheckResult check_attention_vjp(const AttentionProblem& given, const Array& dout,
                                   const Array& dq, const Array& dk, const Array& dv,
                                   const KernelCheckOptions& opt) {
    if (any_nonfinite({&given.q, &given.k, &given.v, &dout}))  // kernels/derivative_nonfinite.hpp
        return detail::check_vjp_nonfinite(given, dout, dq, dk, dv, opt);
    AttentionProblem holder;  // the inputs as a kernel storing opt.storage reads them
    const AttentionProblem& p =
        detail::problem_as_stored(given, opt.storage, holder, {{&dout, "do"}});
    AttentionProblem entered;
    std::vector<Array> extra;
    const Setup s = setup(p, {&dout}, opt, entered, extra);
    detail::check_shape(dq, p.q.shape, "dq");
    detail::check_shape(dk, p.k.shape, "dk");
    detail::check_shape(dv, p.v.shape, "dv");
    const VjpReference ref = reference_vjp(p, dout, s.model);
    Array bq, bk, bv;
    baseline_vjp(entered, extra[0], opt.storage, opt.accumulate, bq, bk, bv);
    VjpCheckResult out;
    for (KernelCheckResult* r : {&out.dq, &out.dk, &out.dv}) describe(*r, p, s);
    const ProblemShape& sh = s.sh;
    const auto query_masked = [&](long row) { return detail::row_fully_masked(sh, p, row); };
    const auto never = [](long) { return false; };
    compare_tensor(dq, ref.dq, bq, s.model, opt, "dq", query_masked, out.dq);
    compare_tensor(dk, ref.dk, bk, s.model, opt, "dk", never, out.dk);
    compare_tensor(dv, ref.dv, bv, s.model, opt, "dv", never, out.dv);
    out.verdict = std::max({out.dq.verdict, out.dk.verdict, out.dv.verdict});
    double bound = 0, rule = 0;
    for (const KernelCheckResult* r : {&out.dq, &out.dk, &out.dv})
        bound = std::max(bound, r->worst_bound_ratio), rule = std::max(rule, r->worst_rule_ratio);
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "%s: dq %s, dk %s, dv %s; worst error/bound %.3g, worst error/allowed %.3g",
                  verdict_name(out.verdict), verdict_name(out.dq.verdict),
                  verdict_name(out.dk.verdict), verdict_name(out.dv.verdict), bound, rule);
    out.summary = buf;
    return out;
}

KernelCheckResult check_attention_jvp(const AttentionProblem& given, const Array& tq,
                                      const Array& tk, const Array& tv, const Array& dout,
                                      const KernelCheckOptions& opt) {
    if (any_nonfinite({&given.q, &given.k, &given.v, &tq, &tk, &tv}))  // derivative_nonfinite.hpp
        return detail::check_jvp_nonfinite(given, tq, tk, tv, dout, opt);
    AttentionProblem holder;  // the inputs as a kernel storing opt.storage reads them
    const AttentionProblem& p = detail::problem_as_stored(given, opt.storage, holder,
                                                          {{&tq, "tq"}, {&tk, "tk"}, {&tv, "tv"}});
    AttentionProblem entered;
    std::vector<Array> extra;
    const Setup s = setup(p, {&tq, &tk, &tv}, opt, entered, extra);
    detail::check_shape(dout, s.sh.out_shape(), "do_t");
    const ReferenceTensor ref = reference_jvp(p, tq, tk, tv, s.model);
    Array base;
    baseline_jvp(entered, extra[0], extra[1], extra[2], opt.storage, opt.accumulate, base);
    KernelCheckResult r;
    describe(r, p, s);
    const ProblemShape& sh = s.sh;
    compare_tensor(
        dout, ref, base, s.model, opt, "do_t",
        [&](long row) { return detail::row_fully_masked(sh, p, row); }, r);
    return r;
}

}  // namespace attnspec::kernels
