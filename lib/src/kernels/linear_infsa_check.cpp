// check-kernel linear-infsa: verdict, reference and baseline over the heads, and the stress cases
// (kernels/linear_infsa_check.hpp; the bound is proofs/kernel_tolerance.md, "Linear-InfSA").
#include "attnspec/kernels/linear_infsa_check.hpp"

#include <cmath>
#include <cstdint>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/kernels/derivative_nonfinite.hpp"
#include "attnspec/kernels/stress.hpp"
#include "check_compare.hpp"
#include "linear_infsa_reference.hpp"
#include "nonfinite_check.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace attnspec::kernels {
namespace detail {

void check_infsa_params(const AttentionProblem& p, const LinearInfsaParams& par) {
    if (p.mask != MaskKind::none)
        fail_data(
            "linear-infsa and pure-infsa take no mask (got " + std::string(mask_name(p.mask)) + ")",
            "mask");
    if (!std::isfinite(par.gamma))
        fail_data("gamma = " + value_text(par.gamma) + " must be finite", "gamma");
    if (!(par.eps >= 0) || !std::isfinite(par.eps))
        fail_data("eps = " + value_text(par.eps) + " must be finite and >= 0", "eps");
}

HeadInput head_input(const ProblemShape& sh, const AttentionProblem& src,
                     const LinearInfsaParams& par, long b, long h) {
    const long kv = b * sh.H_kv + sh.kv_head(h);
    HeadInput in;
    in.Q = src.q.values.data() + (b * sh.H + h) * sh.Nq * sh.d;
    in.K = src.k.values.data() + kv * sh.Nk * sh.d;
    in.V = src.v.values.data() + kv * sh.Nk * sh.dv;
    in.nq = sh.Nq, in.nk = sh.Nk, in.d = sh.d, in.dv = sh.dv, in.par = par;
    return in;
}

KernelCheckResult check_infsa(const AttentionProblem& p, const LinearInfsaParams& par,
                              const Array& o, const KernelCheckOptions& opt, double scale,
                              const HeadFn& head) {
    check_factor(opt);
    check_infsa_params(p, par);
    const ProblemShape sh = problem_shape(p);
    check_shape(o, sh.out_shape(), "o");
    KernelCheckResult r;
    r.q_shape = p.q.shape, r.k_shape = p.k.shape, r.v_shape = p.v.shape, r.scale = scale;
    r.inputs_exact = all_exact({&p.q, &p.k, &p.v}, opt.storage);
    const RoundingModel model = kernel_model(opt.storage, opt.accumulate, r.inputs_exact);
    AttentionProblem rounded = p;
    round_all({&rounded.q, &rounded.k, &rounded.v}, opt.storage);
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h) {
            const HeadRows rows =
                head(head_input(sh, p, par, b, h), head_input(sh, rounded, par, b, h), model);
            for (long i = 0; i < sh.Nq; ++i) {
                ++r.rows;
                const long at = i * rows.stride;
                RowValues v;
                v.got = o.values.data() + ((b * sh.H + h) * sh.Nq + i) * sh.dv;
                v.ref = rows.ref + at, v.bound = rows.bound + at;
                v.ref_error = rows.ref_error + at, v.base = rows.base + at;
                v.first = rows.first + at, v.n = sh.dv;
                v.index = element_index(sh, b, h, i, 0);
                compare_row(v, model.u_out, opt, r);
            }
        }
    decide(r, opt, "o", 0);
    return r;
}

}  // namespace detail

namespace {

constexpr const char* kExtraCases[] = {"relu-zero", "dominant-key"};
constexpr double kDominant = 30;  // dominant-key: |k| = 30 sqrt(d) along q_bar

// Asks the kernel for transparent huge pages on [p, p + bytes) (Linux, THP in "madvise" mode;
// a no-op elsewhere): a broadcast output is as large as an input and freshly allocated, and with
// 4 KiB pages faulting it in costs more than the reference's arithmetic (bench_check_kernel_infsa).
void advise_huge_pages(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr std::size_t kHuge = std::size_t(2) << 20;
    const std::size_t skip = (kHuge - reinterpret_cast<std::uintptr_t>(p) % kHuge) % kHuge;
    if (bytes <= skip) return;
    const std::size_t len =
        (bytes - skip) / kHuge * kHuge;  // whole huge pages inside [p, p + bytes)
    if (len > 0) madvise(static_cast<char*>(p) + skip, len, MADV_HUGEPAGE);  // advice only
#else
    (void)p, (void)bytes;
#endif
}

// Runs `fn(head, row)` for every head, then appends `row` (the d_v values it filled) to `out`:
// N_q times (the head's rows of the output, shape (.., N_q, d_v)) when `broadcast`, else once
// (shape (.., d_v)).
template <class F>
Array per_head(const AttentionProblem& p, const LinearInfsaParams& par, bool broadcast, F&& fn) {
    detail::check_infsa_params(p, par);
    const ProblemShape sh = problem_shape(p);
    const long copies = broadcast ? sh.Nq : 1;
    Array out;
    out.shape = sh.out_shape();
    if (!broadcast) out.shape.erase(out.shape.end() - 2);  // no N_q
    // Appended in memory order without a zero fill first: the output is as large as an input,
    // and writing it twice would cost as much as reading one more input.
    out.values.reserve(static_cast<size_t>(sh.B * sh.H * copies * sh.dv));
    if (broadcast) advise_huge_pages(out.values.data(), out.values.capacity() * sizeof(double));
    std::vector<double> row;
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h) {
            fn(detail::head_input(sh, p, par, b, h), row);
            for (long i = 0; i < copies; ++i)
                out.values.insert(out.values.end(), row.begin(), row.end());
        }
    return out;
}

}  // namespace

KernelCheckResult check_linear_infsa(const AttentionProblem& p, const LinearInfsaParams& par,
                                     const Array& o, const KernelCheckOptions& opt) {
    if (any_nonfinite({&p.q, &p.k, &p.v}))  // kernels/infsa_nonfinite.hpp
        return detail::check_linear_infsa_nonfinite(p, par, o, opt);
    detail::HeadAnalysis ref;
    std::vector<double> base;
    const double d = static_cast<double>(p.q.shape.empty() ? 1 : p.q.shape.back());
    return detail::check_infsa(
        p, par, o, opt, 1.0 / std::sqrt(d),
        [&](const detail::HeadInput& exact, const detail::HeadInput& rounded,
            const RoundingModel& model) {
            detail::analyze_head(exact, model, ref);
            detail::baseline_head(rounded, opt.storage, opt.accumulate, base);
            return detail::HeadRows{ref.o.data(), ref.bound.data(), ref.ref_error.data(),
                                    base.data(),  ref.first.data(), 0};
        });
}

Array reference_linear_infsa(const AttentionProblem& p, const LinearInfsaParams& par) {
    return per_head(p, par, true, [&](const detail::HeadInput& in, std::vector<double>& row) {
        detail::reference_head(in, row);
    });
}

Array reference_linear_infsa_pooled(const AttentionProblem& p, const LinearInfsaParams& par) {
    return per_head(p, par, false, [&](const detail::HeadInput& in, std::vector<double>& row) {
        detail::reference_head(in, row);
    });
}

Array baseline_linear_infsa(const AttentionProblem& p, const LinearInfsaParams& par, Format storage,
                            Format accumulate) {
    AttentionProblem rounded = p;
    detail::round_all({&rounded.q, &rounded.k, &rounded.v}, storage);
    return per_head(rounded, par, true, [&](const detail::HeadInput& in, std::vector<double>& row) {
        detail::baseline_head(in, storage, accumulate, row);
    });
}

std::vector<std::string> linear_infsa_cases() {
    std::vector<std::string> all;
    for (StressCase c : stress_cases()) all.emplace_back(stress_name(c));
    for (const char* c : kExtraCases) all.emplace_back(c);
    return all;
}

AttentionProblem generate_linear_infsa(const std::string& name, std::uint64_t seed,
                                       const std::vector<std::int64_t>& shape, Format storage) {
    const bool relu_zero = name == kExtraCases[0], dominant = name == kExtraCases[1];
    if (name == "denormal") {  // v of the attention case, q and k N(0, 1) (the header)
        AttentionProblem p = generate_stress(StressCase::gaussian, seed, shape, storage);
        p.v = generate_stress(StressCase::denormal, seed, shape, storage).v;
        return p;
    }
    if (!relu_zero && !dominant)
        return generate_stress(parse_stress(name, "stress_case"), seed, shape, storage);
    AttentionProblem p = generate_stress(StressCase::gaussian, seed, shape, Format::fp64);
    const long d = static_cast<long>(shape.back()), N = static_cast<long>(shape[shape.size() - 2]);
    const long heads = static_cast<long>(p.q.values.size()) / (N * d);
    Rng rng(seed ^ 0x9E3779B97F4A7C15ULL);
    for (long h = 0; h < heads; ++h) {
        double* Q = p.q.values.data() + h * N * d;
        double* K = p.k.values.data() + h * N * d;
        std::vector<double> u(static_cast<size_t>(d));
        if (relu_zero) {  // q_i = |g_i| u, k_j = -|h_j| u: every score q_bar . k_j < 0
            double nu = 0;
            for (double& x : u) x = rng.normal(), nu += x * x;
            nu = std::sqrt(nu);
            for (long i = 0; i < N; ++i) {
                const double a = std::fabs(rng.normal()) + 0.1, b = std::fabs(rng.normal()) + 0.1;
                for (long l = 0; l < d; ++l)
                    Q[i * d + l] = a * u[l] / nu, K[i * d + l] = -b * u[l] / nu;
            }
            continue;
        }
        // dominant key along this head's float64 q_bar (energy-weighted mean of the queries)
        double se = 0, nq = 0;
        for (long i = 0; i < N; ++i) {
            double ss = 0;
            for (long l = 0; l < d; ++l) ss += Q[i * d + l] * Q[i * d + l];
            const double e = std::sqrt(ss);
            se += e;
            for (long l = 0; l < d; ++l) u[l] += e * Q[i * d + l];
        }
        for (long l = 0; l < d; ++l) u[l] /= se, nq += u[l] * u[l];
        nq = std::sqrt(nq);
        for (long l = 0; l < d && nq > 0; ++l)
            K[(N / 2) * d + l] = kDominant * std::sqrt(static_cast<double>(d)) * u[l] / nq;
    }
    for (Array* a : {&p.q, &p.k, &p.v})
        for (double& x : a->values) x = round_to(x, storage);
    return p;
}

}  // namespace attnspec::kernels
