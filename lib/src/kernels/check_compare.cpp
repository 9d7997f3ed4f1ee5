// What the checks of check-kernel share (lib/src/kernels/check_compare.hpp).
#include "check_compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "attnspec/base/errors.hpp"
#include "attnspec/kernels/attention_nonfinite.hpp"

namespace attnspec::kernels::detail {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

double key_of(const ElementReport& x, Key key) {
    return ratio(x.error, key == Key::bound ? x.bound : x.allowed);
}

// Whether mask entry x of a boolean or additive mask `m` lets the query see the key.
bool key_visible(MaskKind m, double x) { return m == MaskKind::additive ? x != -kInf : x != 0; }

// Flat index n of an array of shape `shape` as "(i, j, ...)".
std::string index_text(const std::vector<std::int64_t>& shape, std::size_t n) {
    std::vector<std::int64_t> at(shape.size());
    for (std::size_t a = shape.size(); a-- > 0;) {
        const auto e = static_cast<std::size_t>(std::max<std::int64_t>(shape[a], 1));
        at[a] = static_cast<std::int64_t>(n % e), n /= e;
    }
    std::string t = "(";
    for (std::size_t a = 0; a < at.size(); ++a) t += (a ? ", " : "") + std::to_string(at[a]);
    return t + ")";
}
}  // namespace

RowInput row_input(const ProblemShape& sh, const AttentionProblem& src, MaskKind mask, double scale,
                   long b, long h, long i) {
    const long kv = b * sh.H_kv + sh.kv_head(h);
    RowInput in;
    in.q = src.q.values.data() + ((b * sh.H + h) * sh.Nq + i) * sh.d;
    in.K = src.k.values.data() + kv * sh.Nk * sh.d;
    in.V = src.v.values.data() + kv * sh.Nk * sh.dv;
    in.n = sh.visible(i, mask), in.d = sh.d, in.dv = sh.dv;
    in.scale = scale;
    return in;
}

RowInput row_input_masked(const ProblemShape& sh, const AttentionProblem& src, double scale, long b,
                          long h, long i, std::vector<long>& keys) {
    RowInput in = row_input(sh, src, MaskKind::none, scale, b, h, i);
    const double* m = src.mask_array.values.data() + sh.mask_row(b, h, i);
    keys.clear();
    for (long j = 0; j < sh.Nk; ++j)
        if (key_visible(src.mask, m[j])) keys.push_back(j);
    in.keys = keys.data(), in.n = static_cast<long>(keys.size());
    if (src.mask == MaskKind::additive) in.bias = m;
    return in;
}

RowInput row_input_any(const ProblemShape& sh, const AttentionProblem& src, double scale, long b,
                       long h, long i, std::vector<long>& keys) {
    if (general_mask(src.mask)) return row_input_masked(sh, src, scale, b, h, i, keys);
    return row_input(sh, src, src.mask, scale, b, h, i);
}

bool row_fully_masked(const ProblemShape& sh, const AttentionProblem& p, long row) {
    const long i = row % sh.Nq, bh = row / sh.Nq;
    if (!general_mask(p.mask)) return sh.visible(i, p.mask) == 0;
    const double* m = p.mask_array.values.data() + sh.mask_row(bh / sh.H, bh % sh.H, i);
    return std::none_of(m, m + sh.Nk, [&](double x) { return key_visible(p.mask, x); });
}

void refuse_nonfinite_masked(const AttentionProblem& p, const std::vector<const Array*>& extra,
                             const char* op) {
    if (!general_mask(p.mask)) return;
    bool finite = !has_nonfinite_input(p);
    for (const Array* a : extra)
        finite = finite && std::all_of(a->values.begin(), a->values.end(),
                                       [](double x) { return std::isfinite(x); });
    if (!finite)
        fail_data(std::string("NaN/Inf in the inputs of ") + op + " under a " + mask_name(p.mask) +
                      " mask: non-finite inputs are checked under mask none or causal only",
                  "mask");
}

std::vector<std::int64_t> element_index(const ProblemShape& sh, long b, long h, long i, long c) {
    std::vector<std::int64_t> ix;
    if (sh.rank == 4) ix.push_back(b);
    if (sh.rank >= 3) ix.push_back(h);
    ix.push_back(i);
    if (c >= 0) ix.push_back(c);
    return ix;
}

double ratio(double error, double limit) {
    if (error == 0) return 0;
    return limit > 0 ? error / limit : kInf;
}

void keep_worst(std::vector<ElementReport>& list, const ElementReport& e, Key key, int k) {
    if (k <= 0) return;
    const double ek = key_of(e, key);
    if (static_cast<int>(list.size()) == k && ek <= key_of(list.back(), key)) return;
    const auto at = std::find_if(list.begin(), list.end(),
                                 [&](const ElementReport& x) { return ek > key_of(x, key); });
    list.insert(at, e);
    if (static_cast<int>(list.size()) > k) list.pop_back();
}

bool all_exact(const std::vector<const Array*>& arrays, Format f) {
    for (const Array* a : arrays)
        for (double x : a->values)
            if (!representable(x, f)) return false;
    return true;
}

void round_all(const std::vector<Array*>& arrays, Format f) {
    for (Array* a : arrays)
        for (double& x : a->values) x = round_to(x, f);
}

void refuse_beyond_range(const std::vector<std::pair<const Array*, const char*>>& arrays,
                         Format f) {
    for (const auto& [a, name] : arrays)
        for (std::size_t n = 0; n < a->values.size(); ++n) {
            const double x = a->values[n];
            if (std::isfinite(x) && !std::isfinite(round_to(x, f)))
                fail_data(std::string(name) + " holds " + value_text(x) + " at " +
                              index_text(a->shape, n) + ", beyond " + format_name(f) +
                              "'s largest finite value " + value_text(largest_finite(f)) +
                              ": a kernel storing " + format_name(f) + " reads it as " +
                              (x > 0 ? "+inf" : "-inf"),
                          name);
        }
}

const AttentionProblem& problem_as_stored(
    const AttentionProblem& p, Format f, AttentionProblem& holder,
    const std::vector<std::pair<const Array*, const char*>>& extra) {
    std::vector<std::pair<const Array*, const char*>> data = {
        {&p.q, "q"}, {&p.k, "k"}, {&p.v, "v"}};
    data.insert(data.end(), extra.begin(), extra.end());
    refuse_beyond_range(data, f);
    if (p.mask != MaskKind::additive) return p;
    Array mask;
    if (&mask_as_stored(p.mask_array, f, mask) == &p.mask_array) return p;
    holder = p;
    holder.mask_array = std::move(mask);
    return holder;
}

const Array& mask_as_stored(const Array& mask, Format f, Array& holder) {
    bool any = false;
    for (std::size_t n = 0; n < mask.values.size(); ++n) {
        const double x = mask.values[n];
        if (!std::isfinite(x) || std::isfinite(round_to(x, f))) continue;
        if (x > 0)
            fail_data("mask holds " + value_text(x) + " at " + index_text(mask.shape, n) +
                          ", which " + format_name(f) + " stores as +inf (a logit of +inf)",
                      "mask");
        if (!any) holder = mask, any = true;
        holder.values[n] = -std::numeric_limits<double>::infinity();
    }
    return any ? holder : mask;
}

void check_shape(const Array& a, const std::vector<std::int64_t>& want, const char* name) {
    if (a.shape != want)
        fail_data(std::string(name) + " has shape " + shape_text(a.shape) + ", expected " +
                  shape_text(want) + " from the inputs");
    std::size_t n = 1;
    for (std::int64_t e : want) n *= static_cast<std::size_t>(e);
    if (a.values.size() != n)
        fail_data(std::string(name) + " holds " + std::to_string(a.values.size()) +
                  " values, its shape needs " + std::to_string(n));
}

void masked_row(const double* got, long n, const std::vector<std::int64_t>& ix0,
                const KernelCheckOptions& opt, KernelCheckResult& r) {
    ++r.masked_rows;
    bool zeros = true, nans = true;
    for (long c = 0; c < n; ++c) zeros = zeros && got[c] == 0, nans = nans && std::isnan(got[c]);
    if (zeros || nans) return;
    for (long c = 0; c < n; ++c) {
        if (got[c] == 0 || std::isnan(got[c])) continue;
        ++r.elements_beyond_bound;
        ElementReport e;
        e.index = ix0, e.index.back() = c;
        e.got = got[c], e.reference = 0, e.error = std::fabs(got[c]);
        e.bound = 0, e.allowed = 0;
        r.worst_bound_ratio = kInf;
        keep_worst(r.worst_by_bound, e, Key::bound, opt.worst);
    }
}

void check_factor(const KernelCheckOptions& opt) {
    if (!(opt.factor >= 1) || !std::isfinite(opt.factor))
        fail_data("factor = " + value_text(opt.factor) + " must be finite and >= 1", "factor");
}

void compare_row(const RowValues& v, double u_out, const KernelCheckOptions& opt,
                 KernelCheckResult& r) {
    double row_err = 0, row_base = 0, floor = 0;
    for (long c = 0; c < v.n; ++c) {
        const double err = std::isfinite(v.got[c]) ? std::fabs(v.got[c] - v.ref[c]) : kInf;
        const double base = std::fabs(v.base[c] - v.ref[c]);
        row_err = std::max(row_err, err);
        row_base = std::max(row_base, base);
        floor = std::max(floor,
                         v.first_row + (v.first ? v.first[c] : 0.0) + u_out * std::fabs(v.ref[c]));
        r.max_reference_error = std::max(r.max_reference_error, v.ref_error[c]);
        r.baseline_bound_ratio = std::max(r.baseline_bound_ratio, ratio(base, v.bound[c]));
    }
    floor *= opt.floor_units;
    const double allowed = opt.factor * row_base + floor;
    r.tensor_error = std::max(r.tensor_error, row_err);
    r.tensor_baseline = std::max(r.tensor_baseline, row_base);
    r.tensor_floor = std::max(r.tensor_floor, floor);
    if (row_err > allowed) ++r.rows_beyond_rule;
    r.worst_rule_ratio = std::max(r.worst_rule_ratio, ratio(row_err, allowed));
    for (long c = 0; c < v.n; ++c) {
        ElementReport e;
        e.got = v.got[c], e.reference = v.ref[c];
        e.error = std::isfinite(v.got[c]) ? std::fabs(v.got[c] - v.ref[c]) : kInf;
        e.bound = v.bound[c], e.allowed = allowed, e.baseline = std::fabs(v.base[c] - v.ref[c]);
        if (!std::isfinite(v.got[c])) ++r.nonfinite;
        if (e.error > e.bound) ++r.elements_beyond_bound;
        r.worst_bound_ratio = std::max(r.worst_bound_ratio, ratio(e.error, e.bound));
        if (e.error == 0) continue;
        e.index = v.index;
        e.index.back() = c;
        keep_worst(r.worst_by_bound, e, Key::bound, opt.worst);
        keep_worst(r.worst_by_rule, e, Key::rule, opt.worst);
    }
}

void decide(KernelCheckResult& r, const KernelCheckOptions& opt, const char* name,
            double max_abs_lse) {
    r.tensor_allowed = opt.factor * r.tensor_baseline + r.tensor_floor;
    if (r.has_lse)
        r.lse_allowed = opt.factor * r.lse_baseline +
                        opt.floor_units * unit_roundoff(opt.accumulate) * max_abs_lse;
    char lse[64] = "";
    if (std::string(name) == "o")
        std::snprintf(lse, sizeof lse, ", %ld of lse", r.lse_beyond_bound);
    char buf[360];
    if (r.elements_beyond_bound > 0 || r.nonfinite > 0 || r.lse_beyond_bound > 0) {
        r.verdict = KernelVerdict::wrong;
        std::snprintf(buf, sizeof buf,
                      "wrong: %ld elements of %s beyond the rounding bound (%ld NaN/Inf)%s; "
                      "worst error/bound %.3g",
                      r.elements_beyond_bound, name, r.nonfinite, lse,
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

}  // namespace attnspec::kernels::detail
