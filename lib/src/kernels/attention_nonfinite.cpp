// check-kernel attention on inputs holding NaN or Inf (kernels/attention_nonfinite.hpp): the
// expected pattern of O and LSE, and the check of a kernel's output against it, row by row.
#include "attnspec/kernels/attention_nonfinite.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnspec/base/enum_names.hpp"
#include "attnspec/kernels/attention_baseline.hpp"
#include "attnspec/kernels/attention_reference.hpp"
#include "check_compare.hpp"
#include "nonfinite_check.hpp"

namespace attnspec::kernels {
namespace {

constexpr EnumName<Expect> kExpectNames[] = {{Expect::finite, "finite"},
                                             {Expect::nonfinite, "nonfinite"},
                                             {Expect::either, "either"},
                                             {Expect::zero_or_nonfinite, "zero-or-nonfinite"}};

constexpr double kInf = std::numeric_limits<double>::infinity();

enum class RowKind {
    finite,     // some key of finite logit, none NaN or +inf: lse finite
    masked_in,  // the same, but a masked key's logit is NaN or +inf: every element `either`
    nonfinite,  // some visible logit NaN or +inf
    degenerate  // every visible logit -inf
};

// Logit of key j for row `in`, in float64.
double logit(const RowInput& in, long j) {
    const double* k = in.K + j * in.d;
    double dot = 0;
    for (long c = 0; c < in.d; ++c) dot += in.q[c] * k[c];
    return in.scale * dot;
}

// Query row `in` (n >= 1 visible keys of `all`): its kind, the keys of finite logit (`kept`,
// ascending) and the expectation of each of its d_v output columns (`cols`), as the header
// states. The masked keys n .. all-1 count as keys of weight 0 (a kernel may read them with a
// -inf logit, or add -inf to theirs: NaN + -inf and +inf + -inf are NaN, or skip them).
RowKind classify_row(const RowInput& in, long all, std::vector<long>& kept,
                     std::vector<char>& is_kept, Expect* cols) {
    kept.clear();
    is_kept.assign(static_cast<size_t>(all), 0);
    bool poisoned = false, masked_poison = false;
    for (long j = 0; j < all; ++j) {
        const double x = logit(in, j);
        const bool bad = std::isnan(x) || x == kInf;
        (j < in.n ? poisoned : masked_poison) |= bad;
        if (j < in.n && std::isfinite(x)) kept.push_back(j), is_kept[static_cast<size_t>(j)] = 1;
    }
    if (poisoned) {
        std::fill(cols, cols + in.dv, Expect::nonfinite);
        return RowKind::nonfinite;
    }
    if (kept.empty()) {
        std::fill(cols, cols + in.dv, Expect::zero_or_nonfinite);
        return RowKind::degenerate;
    }
    std::fill(cols, cols + in.dv, masked_poison ? Expect::either : Expect::finite);
    for (long j = 0; j < all; ++j)
        for (long c = 0; c < in.dv; ++c) {
            if (std::isfinite(in.V[j * in.dv + c])) continue;
            if (is_kept[static_cast<size_t>(j)])
                cols[c] = Expect::nonfinite;
            else if (cols[c] == Expect::finite)
                cols[c] = Expect::either;
        }
    return masked_poison ? RowKind::masked_in : RowKind::finite;
}

// The check's state over rows (one thread: the rows go one at a time, keys of -inf logit left out).
struct NonfiniteChecker {
    NonfiniteChecker(const AttentionProblem& p_, const AttentionProblem& rounded_,
                     const KernelCheckOptions& opt_, const RoundingModel& model_,
                     KernelCheckResult& r_)
        : p(p_), rounded(rounded_), sh(problem_shape(p_)), opt(opt_), model(model_), r(r_) {}
    const AttentionProblem& p;
    const AttentionProblem& rounded;  // the inputs rounded to the storage format (the baseline's)
    const ProblemShape sh;
    const KernelCheckOptions& opt;
    const RoundingModel model;
    KernelCheckResult& r;
    std::vector<long> kept;
    std::vector<char> is_kept;
    std::vector<Expect> cols;
    std::vector<double> K, V, Kr, Vr, got, base, t;
    RowScratch scratch;
    RowAnalysis ref;
    double max_abs_lse = 0;

    void row(long b, long h, long i, const double* o, const double* lse);
    void hidden(double value, std::vector<std::int64_t> index, bool is_lse);
    void finite_row(const RowInput& in, const RowInput& ein, const double* o, const double* lse,
                    const std::vector<std::int64_t>& ix, bool lse_either);
};

// A finite value where a non-finite one is required: beyond any bound (reference NaN).
void NonfiniteChecker::hidden(double value, std::vector<std::int64_t> index, bool is_lse) {
    ++r.nonfinite_mismatch;
    ElementReport e;
    e.index = std::move(index);
    e.got = value, e.reference = std::numeric_limits<double>::quiet_NaN(), e.error = kInf;
    if (is_lse) {
        ++r.lse_beyond_bound;
        r.lse_error = kInf, r.lse_bound_ratio = kInf;
        detail::keep_worst(r.worst_lse, e, detail::Key::bound, opt.worst);
    } else {
        ++r.elements_beyond_bound;
        r.worst_bound_ratio = kInf;
        detail::keep_worst(r.worst_by_bound, e, detail::Key::bound, opt.worst);
    }
}

void NonfiniteChecker::row(long b, long h, long i, const double* o, const double* lse) {
    const RowInput in = detail::row_input(sh, p, p.mask, r.scale, b, h, i);
    const std::vector<std::int64_t> ix = detail::element_index(sh, b, h, i, 0);
    ++r.rows;
    if (in.n == 0) {  // no visible key: the rule of fully masked rows (attention_check.cpp)
        detail::masked_row(o, sh.dv, ix, opt, r);
        if (lse && std::isfinite(*lse)) ++r.lse_beyond_bound;
        return;
    }
    cols.resize(static_cast<size_t>(sh.dv));
    const RowKind kind = classify_row(in, sh.Nk, kept, is_kept, cols.data());
    if (kind == RowKind::finite || kind == RowKind::masked_in) {
        const RowInput ein = detail::row_input(sh, rounded, p.mask, r.scale, b, h, i);
        return finite_row(in, ein, o, lse, ix, kind == RowKind::masked_in);
    }
    for (long c = 0; c < sh.dv; ++c) {
        if (kind == RowKind::nonfinite) ++r.nonfinite_expected;
        if (std::isfinite(o[c]) && !(kind == RowKind::degenerate && o[c] == 0)) {
            std::vector<std::int64_t> e = ix;
            e.back() = c;
            hidden(o[c], std::move(e), false);
        }
    }
    if (!lse) return;
    ++r.nonfinite_expected;
    if (std::isfinite(*lse)) hidden(*lse, detail::element_index(sh, b, h, i, -1), true);
}

// A row with some key of finite logit: the reference, bound and baseline over those keys (a
// non-finite v_jc read as 0: its column is not compared), compared on the columns expected
// finite and on the `either` columns the kernel left finite.
void NonfiniteChecker::finite_row(const RowInput& in, const RowInput& ein, const double* o,
                                  const double* lse, const std::vector<std::int64_t>& ix,
                                  bool lse_either) {
    const long n = static_cast<long>(kept.size()), d = sh.d, dv = sh.dv;
    K.resize(static_cast<size_t>(n * d)), Kr.resize(K.size());
    V.resize(static_cast<size_t>(n * dv)), Vr.resize(V.size());
    for (long a = 0; a < n; ++a) {
        const long j = kept[static_cast<size_t>(a)];
        std::copy(in.K + j * d, in.K + (j + 1) * d, K.begin() + a * d);
        std::copy(ein.K + j * d, ein.K + (j + 1) * d, Kr.begin() + a * d);
        for (long c = 0; c < dv; ++c) {
            const double x = in.V[j * dv + c], xr = ein.V[j * dv + c];
            V[static_cast<size_t>(a * dv + c)] = std::isfinite(x) ? x : 0.0;
            Vr[static_cast<size_t>(a * dv + c)] = std::isfinite(xr) ? xr : 0.0;
        }
    }
    RowInput cin = in, cein = ein;
    cin.K = K.data(), cin.V = V.data(), cin.n = n;
    cein.K = Kr.data(), cein.V = Vr.data(), cein.n = n;
    analyze_row(cin, model, scratch, ref);
    double base_lse = 0;
    baseline_row(cein, opt.storage, opt.accumulate, base, base_lse, t);
    got.assign(o, o + dv);
    for (long c = 0; c < dv; ++c) {
        const Expect e = cols[static_cast<size_t>(c)];
        const bool finite = std::isfinite(got[c]);
        if (e == Expect::nonfinite) {
            ++r.nonfinite_expected;
            if (finite) {
                std::vector<std::int64_t> at = ix;
                at.back() = c;
                hidden(got[c], std::move(at), false);
            }
        }
        if (e == Expect::finite && !finite) ++r.nonfinite_mismatch;  // counted by compare_row too
        if (e == Expect::nonfinite || (e == Expect::either && !finite))
            got[c] = ref.o[c], base[c] = ref.o[c];  // not compared
    }
    detail::RowValues v;
    v.got = got.data(), v.ref = ref.o.data(), v.bound = ref.bound.data();
    v.ref_error = ref.ref_error.data(), v.base = base.data(), v.n = dv;
    v.first_row = (2 * model.u_a * ref.max_abs_logit + 4 * model.u_a + model.u_p) * ref.max_abs_pv;
    v.index = ix;
    detail::compare_row(v, model.u_out, opt, r);
    if (!lse || (lse_either && !std::isfinite(*lse))) return;
    // lse over the keys of finite logit: as attention_check.cpp's lse_element
    ElementReport e;
    e.index = ix, e.index.pop_back();
    e.got = *lse, e.reference = ref.lse, e.bound = ref.lse_bound;
    e.error = std::isfinite(*lse) ? std::fabs(*lse - ref.lse) : kInf;
    if (!std::isfinite(*lse)) ++r.nonfinite_mismatch;
    e.baseline = std::fabs(base_lse - ref.lse);
    r.lse_error = std::max(r.lse_error, e.error);
    r.lse_baseline = std::max(r.lse_baseline, e.baseline);
    max_abs_lse = std::max(max_abs_lse, std::fabs(ref.lse));
    if (e.error > e.bound) ++r.lse_beyond_bound;
    r.lse_bound_ratio = std::max(r.lse_bound_ratio, detail::ratio(e.error, e.bound));
    detail::keep_worst(r.worst_lse, e, detail::Key::bound, opt.worst);
}

bool finite_exact(const Array& a, Format f) {
    return std::all_of(a.values.begin(), a.values.end(),
                       [f](double x) { return !std::isfinite(x) || representable(x, f); });
}

}  // namespace

const char* expect_name(Expect e) { return enum_name(e, kExpectNames); }

bool has_nonfinite_input(const AttentionProblem& p) {
    for (const Array* a : {&p.q, &p.k, &p.v})
        for (double x : a->values)
            if (!std::isfinite(x)) return true;
    return false;
}

NonfiniteExpectation expected_nonfinite(const AttentionProblem& p) {
    const ProblemShape sh = problem_shape(p);
    const double scale = effective_scale(p, sh);
    NonfiniteExpectation x;
    x.o.assign(static_cast<size_t>(sh.B * sh.H * sh.Nq * sh.dv), Expect::finite);
    x.lse.assign(static_cast<size_t>(sh.B * sh.H * sh.Nq), Expect::finite);
    std::vector<long> kept;
    std::vector<char> is_kept;
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h)
            for (long i = 0; i < sh.Nq; ++i) {
                const long row = (b * sh.H + h) * sh.Nq + i;
                Expect* cols = x.o.data() + row * sh.dv;
                const RowInput in = detail::row_input(sh, p, p.mask, scale, b, h, i);
                if (in.n == 0) {
                    std::fill(cols, cols + sh.dv, Expect::zero_or_nonfinite);
                    x.lse[static_cast<size_t>(row)] = Expect::nonfinite;
                    continue;
                }
                const RowKind kind = classify_row(in, sh.Nk, kept, is_kept, cols);
                if (kind == RowKind::nonfinite || kind == RowKind::degenerate)
                    x.lse[static_cast<size_t>(row)] = Expect::nonfinite;
                if (kind == RowKind::masked_in) x.lse[static_cast<size_t>(row)] = Expect::either;
            }
    return x;
}

namespace detail {

KernelCheckResult check_attention_nonfinite(const AttentionProblem& p, const Array& o,
                                            const Array* lse, const KernelCheckOptions& opt) {
    const ProblemShape sh = problem_shape(p);
    KernelCheckResult r;
    r.q_shape = p.q.shape, r.k_shape = p.k.shape, r.v_shape = p.v.shape;
    r.scale = effective_scale(p, sh);
    r.inputs_exact = finite_exact(p.q, opt.storage) && finite_exact(p.k, opt.storage) &&
                     finite_exact(p.v, opt.storage);
    r.has_lse = lse != nullptr;
    AttentionProblem rounded = p;
    round_all({&rounded.q, &rounded.k, &rounded.v}, opt.storage);
    NonfiniteChecker ck(p, rounded, opt, kernel_model(opt.storage, opt.accumulate, r.inputs_exact),
                        r);
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h)
            for (long i = 0; i < sh.Nq; ++i) {
                const long row = (b * sh.H + h) * sh.Nq + i;
                ck.row(b, h, i, o.values.data() + row * sh.dv,
                       lse ? lse->values.data() + row : nullptr);
            }
    decide(r, opt, "o", ck.max_abs_lse);
    r.summary += "; non-finite inputs: " + std::to_string(r.nonfinite_expected) +
                 " elements must be NaN/Inf, " + std::to_string(r.nonfinite_mismatch) +
                 " elements break the stated propagation";
    return r;
}

}  // namespace detail
}  // namespace attnspec::kernels
