// check-kernel attention: reference, rounding bound, baseline rule and verdict
// (kernels/attention_check.hpp; the bound is derived in proofs/kernel_tolerance.md).
#include "attnspec/kernels/attention_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attention_block.hpp"
#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/base/enum_names.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/parallel.hpp"
#include "attnspec/kernels/attention_baseline.hpp"
#include "attnspec/kernels/attention_nonfinite.hpp"
#include "attnspec/kernels/attention_reference.hpp"
#include "check_compare.hpp"
#include "nonfinite_check.hpp"

namespace attnspec::kernels {
namespace {

constexpr EnumName<KernelVerdict> kVerdictNames[] = {
    {KernelVerdict::pass, "pass"}, {KernelVerdict::fail, "fail"}, {KernelVerdict::wrong, "wrong"}};

using detail::keep_worst;
using detail::Key;
using detail::ratio;

constexpr long kBlock = 64;  // query rows per block (a block x N_k of scratch per thread)

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
    std::vector<RowAnalysis> refs;  // one head's rows (Checker::head)
    std::vector<double> base, base_lse;
    detail::KvHead kv_ref;
    detail::BaseHead kv_base;
    long kv_done = -1;    // the key/value head kv_ref and kv_base hold
    long block = kBlock;  // query rows per block for that head
    double max_abs_lse = 0;

    std::vector<std::int64_t> index(long b, long h, long i, long c) const {
        return detail::element_index(sh, b, h, i, c);
    }
    const AttentionProblem* entered = &p;  // q, k, v as the baseline reads them (see below)

    // Row i of head h in batch b, reading `src` (p, or the inputs rounded to the storage format).
    RowInput row_input(long b, long h, long i, const AttentionProblem& src) const {
        return detail::row_input(sh, src, p.mask, r.scale, b, h, i);
    }
    void head(long b, long h, int threads, bool reference = true);
    void head_masked(long b, long h, int threads, bool reference);
    void row(long b, long h, long i, const double* got, const double* got_lse);
    void lse_element(long b, long h, long i, double got);
};

void Checker::row(long b, long h, long i, const double* got, const double* got_lse) {
    ++r.rows;
    if (refs[static_cast<size_t>(i)].masked) {
        detail::masked_row(got, sh.dv, index(b, h, i, 0), opt, r);
        if (got_lse && std::isfinite(*got_lse)) ++r.lse_beyond_bound;  // +-inf or NaN expected
        return;
    }
    const RowAnalysis& ref = refs[static_cast<size_t>(i)];
    // The floor: the first-order error of a kernel that rounds each intermediate once -- the
    // logits (through the softmax: 2 u_a max|x|), exp, the sum, the division, P, the PV sum,
    // the output (proofs/kernel_tolerance.md, "The baseline rule and its floor").
    detail::RowValues v;
    v.got = got, v.ref = ref.o.data(), v.bound = ref.bound.data();
    v.ref_error = ref.ref_error.data(), v.base = base.data() + i * sh.dv, v.n = sh.dv;
    v.first_row = (2 * model.u_a * ref.max_abs_logit + 4 * model.u_a + model.u_p) * ref.max_abs_pv;
    v.index = index(b, h, i, 0);
    detail::compare_row(v, model.u_out, opt, r);
    if (got_lse) lse_element(b, h, i, *got_lse);
}

// The reference and bounds (when `reference`) and the baseline of every row of head h in batch b
// (into refs, base, base_lse): blocks of kBlock rows, `threads` blocks at a time, one BLAS thread
// each (every block is the same computation for any thread count: the results do not depend on it).
void Checker::head(long b, long h, int threads, bool reference) {
    const long N = sh.Nq;
    refs.resize(static_cast<size_t>(N)), base.resize(static_cast<size_t>(N * sh.dv));
    base_lse.resize(static_cast<size_t>(N));
    if (general_mask(p.mask)) return head_masked(b, h, threads, reference);
    const long kv = b * sh.H_kv + sh.kv_head(h);
    if (kv != kv_done) {
        const RowInput r0 = row_input(b, h, 0, p), e0 = row_input(b, h, 0, *entered);
        if (reference) kv_ref.set(r0.K, r0.V, sh.Nk, sh.d, sh.dv);
        kv_base.set(e0.K, e0.V, sh.Nk, sh.d, sh.dv, opt.storage, opt.accumulate);
        kv_done = kv;
        // Rows of one block see different key counts under a causal mask; the products run over
        // the block's widest count with zero weights beyond each row's own, and 0 x inf is NaN:
        // with a non-finite K or V the rows go one at a time (no padding).
        auto finite = [](const double* x, long n) {
            return std::all_of(x, x + n, [](double y) { return std::isfinite(y); });
        };
        const long nk = sh.Nk * sh.d, nv = sh.Nk * sh.dv;
        const bool all_finite =
            finite(r0.K, nk) && finite(r0.V, nv) && finite(e0.K, nk) && finite(e0.V, nv);
        block = p.mask == MaskKind::none || all_finite ? kBlock : 1;
    }
    const long blocks = (N + block - 1) / block;
    parallel_for_ordered(static_cast<size_t>(blocks), threads, [&](size_t k) {
        const long i0 = static_cast<long>(k) * block, count = std::min(block, N - i0);
        std::vector<RowInput> in(static_cast<size_t>(count)), ein(in);
        for (long r = 0; r < count; ++r)
            in[r] = row_input(b, h, i0 + r, p), ein[r] = row_input(b, h, i0 + r, *entered);
        thread_local detail::BlockScratch s;  // reused by the calling thread across heads
        if (reference) detail::analyze_block(in.data(), count, kv_ref, model, s, refs.data() + i0);
        detail::baseline_block(ein.data(), count, kv_base, s, base.data() + i0 * sh.dv,
                               base_lse.data() + i0);
    });
}

// head() under a boolean or additive mask: the visible keys differ from row to row (no shared
// prefix for BLAS), so every row goes through analyze_row and baseline_row over its own keys;
// blocks of kBlock rows, `threads` at a time. O(N_q N_k (d + d_v)) per head, O(N_k) scratch.
void Checker::head_masked(long b, long h, int threads, bool reference) {
    const long N = sh.Nq, blocks = (N + kBlock - 1) / kBlock;
    parallel_for_ordered(static_cast<size_t>(blocks), threads, [&](size_t k) {
        const long i0 = static_cast<long>(k) * kBlock, i1 = std::min(N, i0 + kBlock);
        thread_local std::vector<long> keys, ekeys;
        thread_local RowScratch s;
        thread_local std::vector<double> o, t;
        for (long i = i0; i < i1; ++i) {
            if (reference)
                analyze_row(detail::row_input_masked(sh, p, r.scale, b, h, i, keys), model, s,
                            refs[static_cast<size_t>(i)]);
            const RowInput e = detail::row_input_masked(sh, *entered, r.scale, b, h, i, ekeys);
            baseline_row(e, opt.storage, opt.accumulate, o, base_lse[static_cast<size_t>(i)], t);
            std::copy(o.begin(), o.end(), base.begin() + i * sh.dv);
        }
    });
}

void Checker::lse_element(long b, long h, long i, double got) {
    const RowAnalysis& ref = refs[static_cast<size_t>(i)];
    ElementReport e;
    e.index = index(b, h, i, -1);
    e.got = got, e.reference = ref.lse, e.bound = ref.lse_bound;
    e.error =
        std::isfinite(got) ? std::fabs(got - ref.lse) : std::numeric_limits<double>::infinity();
    e.baseline = std::fabs(base_lse[static_cast<size_t>(i)] - ref.lse);
    r.lse_error = std::max(r.lse_error, e.error);
    r.lse_baseline = std::max(r.lse_baseline, e.baseline);
    max_abs_lse = std::max(max_abs_lse, std::fabs(ref.lse));
    if (e.error > e.bound) ++r.lse_beyond_bound;
    r.lse_bound_ratio = std::max(r.lse_bound_ratio, ratio(e.error, e.bound));
    keep_worst(r.worst_lse, e, Key::bound, opt.worst);
}

// check_attention on finite inputs, as the kernel stores them (problem_as_stored).
KernelCheckResult check_finite(const AttentionProblem& p, const Array& o, const Array* lse,
                               const KernelCheckOptions& opt) {
    const ProblemShape sh = problem_shape(p);
    KernelCheckResult r;
    r.q_shape = p.q.shape, r.k_shape = p.k.shape, r.v_shape = p.v.shape;
    r.scale = effective_scale(p, sh);
    r.inputs_exact = detail::all_exact({&p.q, &p.k, &p.v, &p.mask_array}, opt.storage);
    r.has_lse = lse != nullptr;
    Checker ck(p, sh, opt, kernel_model(opt.storage, opt.accumulate, r.inputs_exact), r);
    AttentionProblem rounded;
    if (!r.inputs_exact) {
        rounded = p;
        detail::round_all({&rounded.q, &rounded.k, &rounded.v, &rounded.mask_array}, opt.storage);
        ck.entered = &rounded;
    }
    const BlasThreadsScope one_blas_thread(1);
    const int threads = available_threads();
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h) {
            ck.head(b, h, threads);
            for (long i = 0; i < sh.Nq; ++i) {
                const long row = (b * sh.H + h) * sh.Nq + i;
                ck.row(b, h, i, o.values.data() + row * sh.dv,
                       lse ? lse->values.data() + row : nullptr);
            }
        }
    detail::decide(r, opt, "o", ck.max_abs_lse);
    return r;
}

}  // namespace

const char* verdict_name(KernelVerdict v) { return enum_name(v, kVerdictNames); }

KernelCheckResult check_attention(const AttentionProblem& p, const Array& o, const Array* lse,
                                  const KernelCheckOptions& opt) {
    detail::check_factor(opt);
    const ProblemShape sh = problem_shape(p);
    detail::check_shape(o, sh.out_shape(), "o");
    if (lse) detail::check_shape(*lse, sh.lse_shape(), "lse");
    if (has_nonfinite_input(p)) {
        // The stated propagation (attention_nonfinite.hpp) is derived for prefix visibility.
        if (general_mask(p.mask))
            fail_data(std::string("NaN/Inf in q, k or v under a ") + mask_name(p.mask) +
                          " mask: non-finite inputs are checked under mask none or causal only",
                      "mask");
        return detail::check_attention_nonfinite(p, o, lse, opt);
    }
    AttentionProblem holder;
    return check_finite(detail::problem_as_stored(p, opt.storage, holder), o, lse, opt);
}

void baseline_attention(const AttentionProblem& p, Format storage, Format accumulate, Array& o,
                        Array& lse) {
    const ProblemShape sh = problem_shape(p);
    AttentionProblem scaled = p;
    detail::round_all({&scaled.q, &scaled.k, &scaled.v, &scaled.mask_array}, storage);
    scaled.scale = effective_scale(p, sh);
    o.shape = sh.out_shape(), lse.shape = sh.lse_shape();
    o.values.assign(static_cast<size_t>(sh.B * sh.H * sh.Nq * sh.dv), 0.0);
    lse.values.assign(static_cast<size_t>(sh.B * sh.H * sh.Nq), 0.0);
    KernelCheckResult unused;
    unused.scale = scaled.scale;
    KernelCheckOptions opt;
    opt.storage = storage, opt.accumulate = accumulate;
    Checker ck(scaled, sh, opt, RoundingModel{}, unused);
    const BlasThreadsScope one_blas_thread(1);
    const int threads = available_threads();
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h) {
            ck.head(b, h, threads, false);
            const long at = (b * sh.H + h) * sh.Nq;
            std::copy(ck.base.begin(), ck.base.end(), o.values.begin() + at * sh.dv);
            std::copy(ck.base_lse.begin(), ck.base_lse.end(), lse.values.begin() + at);
        }
}

}  // namespace attnspec::kernels
