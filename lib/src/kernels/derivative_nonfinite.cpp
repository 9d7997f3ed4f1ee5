// check-kernel attention-vjp and attention-jvp on inputs holding NaN or Inf
// (kernels/derivative_nonfinite.hpp): the expected patterns, and the check of a kernel's
// derivatives against them and, on the elements expected finite, against the reference.
#include "attnspec/kernels/derivative_nonfinite.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "attnspec/base/errors.hpp"
#include "attnspec/kernels/derivative_reference.hpp"
#include "check_compare.hpp"
#include "nonfinite_check.hpp"

namespace attnspec::kernels {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Raises elements [from, from + n) of `x` to `to` (the strongest expectation wins).
void raise(std::vector<Expect>& x, long from, long n, Expect to) {
    for (long c = 0; c < n; ++c) detail::raise_expect(x[static_cast<size_t>(from + c)], to);
}

enum class Row { clean, poisoned, weighted0, degenerate };

bool bad(const Array& a, long row, long w) {
    const double* x = a.values.data() + row * w;
    return !std::all_of(x, x + w, [](double v) { return std::isfinite(v); });
}

// Per row of an array of width w: whether it holds NaN or Inf.
std::vector<char> bad_rows(const Array& a, long w) {
    std::vector<char> out(a.values.size() / static_cast<size_t>(w));
    for (size_t r = 0; r < out.size(); ++r) out[r] = bad(a, static_cast<long>(r), w);
    return out;
}

// Query row `qrow` against the n visible keys starting at key row `krow0`, logits in float64.
Row classify(const ProblemShape& sh, const AttentionProblem& p, double s, long qrow, long krow0,
             long n) {
    const double* q = p.q.values.data() + qrow * sh.d;
    bool poisoned = false, finite = false, minus_inf = false;
    for (long j = 0; j < n; ++j) {
        const double* k = p.k.values.data() + (krow0 + j) * sh.d;
        double dot = 0;
        for (long c = 0; c < sh.d; ++c) dot += q[c] * k[c];
        const double x = s * dot;
        poisoned |= std::isnan(x) || x == kInf;
        minus_inf |= x == -kInf;
        finite |= std::isfinite(x);
    }
    return poisoned    ? Row::poisoned
           : !finite   ? Row::degenerate
           : minus_inf ? Row::weighted0
                       : Row::clean;
}

// What both patterns walk: every query row with its key rows and whether a masked key (or, for a
// row without visible key, any input) is non-finite. `key_bad[j]`: key row j's arrays (k, v, and
// tk, tv for the jvp) hold NaN/Inf; `row_bad`: the query row's own (q, and dO or tq).
template <class Visit>
void walk_rows(const AttentionProblem& p, const std::vector<char>& key_bad,
               const std::vector<char>& row_bad, Visit visit) {
    const ProblemShape sh = problem_shape(p);
    const double s = effective_scale(p, sh);
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h) {
            const long krow0 = (b * sh.H_kv + sh.kv_head(h)) * sh.Nk;
            const auto kb = key_bad.begin() + krow0;
            for (long i = 0; i < sh.Nq; ++i) {
                const long qrow = (b * sh.H + h) * sh.Nq + i, n = sh.visible(i, p.mask);
                bool shadowed = std::any_of(kb + n, kb + sh.Nk, [](char c) { return c != 0; });
                if (n == 0) shadowed = shadowed || row_bad[static_cast<size_t>(qrow)];
                const Row kind = n == 0 ? Row::clean : classify(sh, p, s, qrow, krow0, n);
                visit(sh, qrow, krow0, n, kind, shadowed);
            }
        }
}

std::vector<char> either_of(const std::vector<char>& a, const std::vector<char>& b) {
    std::vector<char> out(a.size());
    for (size_t j = 0; j < a.size(); ++j) out[j] = a[j] || b[j];
    return out;
}

// The patterns are derived for prefix visibility (mask none or causal).
void refuse_mask_array(const AttentionProblem& p, const char* op) {
    if (general_mask(p.mask))
        fail_data(std::string("NaN/Inf in the inputs of ") + op + " under a " + mask_name(p.mask) +
                      " mask: non-finite inputs are checked under mask none or causal only",
                  "mask");
}

}  // namespace

bool any_nonfinite(const std::vector<const Array*>& arrays) {
    for (const Array* a : arrays)
        if (!std::all_of(a->values.begin(), a->values.end(),
                         [](double x) { return std::isfinite(x); }))
            return true;
    return false;
}

VjpExpectation expected_vjp_nonfinite(const AttentionProblem& p, const Array& dout) {
    refuse_mask_array(p, "attention-vjp");
    const ProblemShape sh = problem_shape(p);
    detail::check_shape(dout, sh.out_shape(), "do");
    VjpExpectation x;
    x.dq.assign(p.q.values.size(), Expect::finite);
    x.dk.assign(p.k.values.size(), Expect::finite);
    x.dv.assign(p.v.values.size(), Expect::finite);
    const std::vector<char> kbad = bad_rows(p.k, sh.d), vbad = bad_rows(p.v, sh.dv);
    const std::vector<char> qdo = either_of(bad_rows(p.q, sh.d), bad_rows(dout, sh.dv));
    std::vector<char> all_keys = either_of(kbad, vbad);
    walk_rows(p, all_keys, qdo,
              [&](const ProblemShape& s, long qrow, long krow0, long n, Row kind, bool shadowed) {
                  const Expect N = Expect::nonfinite, E = Expect::either;
                  const long d = s.d, dv = s.dv;
                  const double* dO = dout.values.data() + qrow * dv;
                  bool tainted = kind == Row::poisoned;
                  if (kind == Row::clean && n > 0) {
                      tainted =
                          qdo[static_cast<size_t>(qrow)] != 0;  // q_i is finite in a clean row
                      for (long j = 0; j < n; ++j)
                          tainted = tainted || vbad[static_cast<size_t>(krow0 + j)];
                  }
                  if (n == 0 || (!tainted && (kind != Row::clean || shadowed))) {
                      if (n == 0 && !shadowed) return;
                      raise(x.dq, qrow * d, d, E);
                      const long reach = shadowed ? s.Nk : n;
                      raise(x.dk, krow0 * d, reach * d, E), raise(x.dv, krow0 * dv, reach * dv, E);
                      return;
                  }
                  if (!tainted) return;
                  raise(x.dq, qrow * d, d, N);
                  raise(x.dk, krow0 * d, n * d, N);
                  for (long j = 0; j < n; ++j)
                      for (long c = 0; c < dv; ++c)
                          if (kind == Row::poisoned || !std::isfinite(dO[c]))
                              raise(x.dv, (krow0 + j) * dv + c, 1, N);
                  // masked keys: 0 x NaN in a kernel computing whole blocks, nothing in one
                  // skipping them
                  raise(x.dk, (krow0 + n) * d, (s.Nk - n) * d, E);
                  raise(x.dv, (krow0 + n) * dv, (s.Nk - n) * dv, E);
              });
    return x;
}

std::vector<Expect> expected_jvp_nonfinite(const AttentionProblem& p, const Array& tq,
                                           const Array& tk, const Array& tv) {
    refuse_mask_array(p, "attention-jvp");
    const ProblemShape sh = problem_shape(p);
    detail::check_shape(tq, p.q.shape, "tq");
    detail::check_shape(tk, p.k.shape, "tk");
    detail::check_shape(tv, p.v.shape, "tv");
    std::vector<Expect> x(static_cast<size_t>(sh.B * sh.H * sh.Nq * sh.dv), Expect::finite);
    const std::vector<char> tkbad = bad_rows(tk, sh.d);
    const std::vector<char> keys = either_of(either_of(bad_rows(p.k, sh.d), bad_rows(p.v, sh.dv)),
                                             either_of(tkbad, bad_rows(tv, sh.dv)));
    const std::vector<char> qrows = either_of(bad_rows(p.q, sh.d), bad_rows(tq, sh.d));
    walk_rows(p, keys, qrows,
              [&](const ProblemShape& s, long qrow, long krow0, long n, Row kind, bool shadowed) {
                  const long dv = s.dv;
                  if (kind == Row::poisoned) return raise(x, qrow * dv, dv, Expect::nonfinite);
                  if (n == 0 || kind != Row::clean || shadowed) {
                      if (n > 0 || shadowed) raise(x, qrow * dv, dv, Expect::either);
                      return;
                  }
                  bool all =
                      qrows[static_cast<size_t>(qrow)] != 0;  // tq_i (q_i is finite in a clean row)
                  for (long j = 0; j < n; ++j) all = all || tkbad[static_cast<size_t>(krow0 + j)];
                  if (all) return raise(x, qrow * dv, dv, Expect::nonfinite);
                  for (long j = 0; j < n; ++j)
                      for (long c = 0; c < dv; ++c) {
                          const size_t at = static_cast<size_t>((krow0 + j) * dv + c);
                          if (!std::isfinite(p.v.values[at]) || !std::isfinite(tv.values[at]))
                              raise(x, qrow * dv + c, 1, Expect::nonfinite);
                      }
              });
    return x;
}

namespace detail {

Array sanitized(const Array& a) {
    Array out = a;
    for (double& x : out.values)
        if (!std::isfinite(x)) x = 0;
    return out;
}

Array substituted(const Array& got, const std::vector<Expect>& x, const Array& ref,
                  bool compare_either) {
    Array out = got;
    for (size_t e = 0; e < x.size(); ++e) {
        const bool keep = x[e] == Expect::finite || (x[e] == Expect::either && compare_either &&
                                                     std::isfinite(got.values[e]));
        if (!keep) out.values[e] = ref.values[e];
    }
    return out;
}

namespace {

std::vector<std::int64_t> unravel(const std::vector<std::int64_t>& shape, long flat) {
    std::vector<std::int64_t> ix(shape.size(), 0);
    for (size_t k = shape.size(); k-- > 0;) ix[k] = flat % shape[k], flat /= shape[k];
    return ix;
}

}  // namespace

void account(const Array& got, const std::vector<Expect>& x, const KernelCheckOptions& opt,
             const char* name, KernelCheckResult& r) {
    for (size_t e = 0; e < x.size(); ++e) {
        const double v = got.values[e];
        const bool finite = std::isfinite(v);
        if (x[e] == Expect::finite && !finite) ++r.nonfinite_mismatch;
        if (x[e] == Expect::nonfinite) ++r.nonfinite_expected;
        const bool hidden = (x[e] == Expect::nonfinite && finite) ||
                            (x[e] == Expect::zero_or_nonfinite && finite && v != 0);
        if (!hidden) continue;
        ++r.nonfinite_mismatch, ++r.elements_beyond_bound;
        r.worst_bound_ratio = kInf;
        ElementReport el;
        el.index = unravel(got.shape, static_cast<long>(e));
        el.got = v, el.reference = std::numeric_limits<double>::quiet_NaN();
        el.error = kInf;
        keep_worst(r.worst_by_bound, el, Key::bound, opt.worst);
    }
    decide(r, opt, name, 0);
    r.summary += "; non-finite inputs: " + std::to_string(r.nonfinite_expected) +
                 " elements must be NaN/Inf, " + std::to_string(r.nonfinite_mismatch) +
                 " elements break the stated propagation";
}

VjpCheckResult check_vjp_nonfinite(const AttentionProblem& p, const Array& dout, const Array& dq,
                                   const Array& dk, const Array& dv,
                                   const KernelCheckOptions& opt) {
    check_factor(opt);
    check_shape(dq, p.q.shape, "dq"), check_shape(dk, p.k.shape, "dk");
    check_shape(dv, p.v.shape, "dv");
    const VjpExpectation x = expected_vjp_nonfinite(p, dout);
    AttentionProblem clean = p;
    clean.q = sanitized(p.q), clean.k = sanitized(p.k), clean.v = sanitized(p.v);
    const Array clean_do = sanitized(dout);
    const VjpReference ref =
        reference_vjp(clean, clean_do, kernel_model(opt.storage, opt.accumulate, true));
    VjpCheckResult out =
        check_attention_vjp(clean, clean_do, substituted(dq, x.dq, ref.dq.value, false),
                            substituted(dk, x.dk, ref.dk.value, false),
                            substituted(dv, x.dv, ref.dv.value, false), opt);
    account(dq, x.dq, opt, "dq", out.dq);
    account(dk, x.dk, opt, "dk", out.dk);
    account(dv, x.dv, opt, "dv", out.dv);
    out.verdict = std::max({out.dq.verdict, out.dk.verdict, out.dv.verdict});
    long expected = 0, mismatch = 0;
    for (const KernelCheckResult* r : {&out.dq, &out.dk, &out.dv})
        expected += r->nonfinite_expected, mismatch += r->nonfinite_mismatch;
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "%s: dq %s, dk %s, dv %s; non-finite inputs: %ld elements must be NaN/Inf, %ld "
                  "break the stated propagation",
                  verdict_name(out.verdict), verdict_name(out.dq.verdict),
                  verdict_name(out.dk.verdict), verdict_name(out.dv.verdict), expected, mismatch);
    out.summary = buf;
    return out;
}

KernelCheckResult check_jvp_nonfinite(const AttentionProblem& p, const Array& tq, const Array& tk,
                                      const Array& tv, const Array& dout,
                                      const KernelCheckOptions& opt) {
    check_factor(opt);
    check_shape(dout, problem_shape(p).out_shape(), "do_t");
    const std::vector<Expect> x = expected_jvp_nonfinite(p, tq, tk, tv);
    AttentionProblem clean = p;
    clean.q = sanitized(p.q), clean.k = sanitized(p.k), clean.v = sanitized(p.v);
    const Array ctq = sanitized(tq), ctk = sanitized(tk), ctv = sanitized(tv);
    const ReferenceTensor ref =
        reference_jvp(clean, ctq, ctk, ctv, kernel_model(opt.storage, opt.accumulate, true));
    KernelCheckResult r =
        check_attention_jvp(clean, ctq, ctk, ctv, substituted(dout, x, ref.value, false), opt);
    account(dout, x, opt, "do_t", r);
    return r;
}

}  // namespace detail
}  // namespace attnspec::kernels
