// What the linear-infsa, pure-infsa and neumann checker tests share (tests/cpu/kernels/): the
// options of a declared storage format, and the run of correct kernels over the InfSA stress cases.
#pragma once
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "attnspec/kernels/attention_check.hpp"
#include "attnspec/kernels/linear_infsa_check.hpp"
#include "test_support.hpp"

namespace attnspec::test {

inline kernels::KernelCheckOptions at(kernels::Format f) {
    kernels::KernelCheckOptions opt;
    opt.storage = f;
    return opt;
}

// For fp32, fp16 and bf16 and every case of `cases` (made by gen(name, seed, shape, f)) of
// `shape` and `seed`: the
// outputs of baseline(p, f) and float_kernel(p, f), checked by check(p, out, opt), pass, within
// the rounding bound. With `print`, prints per format the worst error/bound of both and the
// float kernel's worst error/allowed (proofs/kernel_tolerance.md, "Measured tightness").
template <class Gen, class Check, class Kernel, class Baseline>
void correct_kernels_pass_on(const char* op, const std::vector<std::string>& cases, Gen gen,
                             const std::vector<std::int64_t>& shape, std::uint64_t seed,
                             Check check, Kernel float_kernel, Baseline baseline, bool print) {
    using namespace kernels;
    for (Format f : {Format::fp32, Format::fp16, Format::bf16}) {
        double worst = 0, worst_base = 0, worst_rule = 0;
        std::string at_case;
        for (const std::string& name : cases) {
            INFO(op << " " << format_name(f) << " " << name);
            const AttentionProblem p = gen(name, seed, shape, f);
            const KernelCheckResult base = check(p, baseline(p, f), at(f));
            CHECK(base.verdict == KernelVerdict::pass);
            CHECK(base.worst_bound_ratio <= 1);
            const KernelCheckResult flt = check(p, float_kernel(p, f), at(f));
            INFO(flt.summary);
            CHECK(flt.verdict == KernelVerdict::pass);
            if (flt.worst_bound_ratio > worst) worst = flt.worst_bound_ratio, at_case = name;
            worst_base = std::max(worst_base, base.worst_bound_ratio);
            worst_rule = std::max(worst_rule, flt.worst_rule_ratio);
        }
        if (print)
            std::printf(
                "%s %s: worst error/bound float kernel %.3g (%s), baseline %.3g; "
                "worst error/allowed %.3g\n",
                op, format_name(f), worst, at_case.c_str(), worst_base, worst_rule);
    }
}

// A kernel's output on `p` written head by head: fn(Q, K, V, o) gets a head's query rows, its key
// and value rows (the shared head under grouped K/V) and its N_q x d_v block of the result.
template <class F>
kernels::Array for_each_head(const kernels::AttentionProblem& p, F fn) {
    const kernels::ProblemShape sh = kernels::problem_shape(p);
    kernels::Array o;
    o.shape = sh.out_shape();
    o.values.assign(static_cast<size_t>(sh.B * sh.H * sh.Nq * sh.dv), 0.0);
    for (long b = 0; b < sh.B; ++b)
        for (long h = 0; h < sh.H; ++h) {
            const long kv = b * sh.H_kv + sh.kv_head(h);
            fn(p.q.values.data() + (b * sh.H + h) * sh.Nq * sh.d,
               p.k.values.data() + kv * sh.Nk * sh.d, p.v.values.data() + kv * sh.Nk * sh.dv,
               o.values.data() + (b * sh.H + h) * sh.Nq * sh.dv);
        }
    return o;
}

// correct_kernels_pass_on over linear_infsa_cases() (linear-infsa, pure-infsa).
template <class Check, class Kernel, class Baseline>
void correct_kernels_pass(const char* op, const std::vector<std::int64_t>& shape,
                          std::uint64_t seed, Check check, Kernel float_kernel, Baseline baseline,
                          bool print) {
    correct_kernels_pass_on(op, kernels::linear_infsa_cases(), kernels::generate_linear_infsa,
                            shape, seed, check, float_kernel, baseline, print);
}

}  // namespace attnspec::test
