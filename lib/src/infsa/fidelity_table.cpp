// fidelity_table: the per-instance fidelity records of `attnspec fidelity` and their per-(family,
// N) summaries (proofs/infsa_fidelity.md).
#include "attnspec/infsa/fidelity_table.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/memory.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/infsa/relu_kernel.hpp"
#include "infsa_internal.hpp"

namespace attnspec {

namespace {

[[noreturn]] void bad(const std::string& parameter, const std::string& value,
                      const std::string& rule) {
    throw Error(ExitCode::DataError, parameter + " = " + value + " " + rule, parameter);
}

void check_spec(const FidelitySpec& s) {
    detail::check_gamma(s.gamma);
    if (!(s.eps >= 0)) bad("eps", detail::num(s.eps), "must be >= 0");
    if (s.d_h <= 0) bad("d_h", std::to_string(s.d_h), "must be positive");
    if (s.heads <= 0) bad("heads", std::to_string(s.heads), "must be positive");
    if (s.draws <= 0) bad("draws", std::to_string(s.draws), "must be positive");
}

// Groups per (family, N) in order of first appearance, with the statistics of each metric.
void summarize(FidelityTable& t) {
    for (std::size_t i = 0; i < t.records.size(); ++i) {
        const FidelityRecord& r = t.records[i];
        auto it = std::find_if(t.groups.begin(), t.groups.end(), [&](const FidelityGroup& g) {
            return g.family == r.family && g.N == r.N;
        });
        if (it == t.groups.end()) {
            t.groups.push_back({r.family, r.N, {}, {}});
            it = t.groups.end() - 1;
        }
        it->records.push_back(i);
    }
    for (FidelityGroup& g : t.groups)
        for (int m = 0; m < 4; ++m) {
            std::vector<double> v;
            for (std::size_t i : g.records) v.push_back(fidelity_metric(t.records[i].f, m));
            g.stats[m] = fidelity_stats(v);
        }
}

Fidelity one(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, const FidelitySpec& s) {
    return s.matrix_free ? fidelity_matrix_free(Q, K, s.gamma, s.eps, s.with_right)
                         : fidelity_dense(Q, K, s.gamma, s.eps);
}

}  // namespace

double fidelity_metric(const Fidelity& f, int m) {
    return m == 0 ? f.cos_left : m == 1 ? f.cos_right : m == 2 ? f.cos_katz_in : f.cos_katz_out;
}

FidelityStats fidelity_stats(std::vector<double> v) {
    v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
    FidelityStats s;
    s.count = long(v.size());
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    s.min = v.front(), s.max = v.back();
    s.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
    double t = 0;
    for (double x : v) t += x;
    s.mean = t / double(v.size());
    return s;
}

FidelityEstimate fidelity_estimate(const FidelitySpec& spec, double iterations) {
    FidelityEstimate e;
    const double dh = double(spec.d_h),
                 per_N = double(spec.draws) * double(spec.heads) * double(spec.families.size());
    e.iterations = spec.matrix_free ? iterations : 0;
    for (long Nl : spec.Ns) {
        const double N = double(Nl);
        const double bytes = spec.matrix_free
                                 ? 8.0 * (4.0 * N * dh + 16.0 * N + 2.0 * 1024.0 * 1024.0)
                                 : 8.0 * (6.0 * N * N + 2.0 * N * dh);
        e.bytes = std::max(e.bytes, bytes);
        const double flops = spec.matrix_free
                                 ? 4.0 * N * N * dh * iterations * (spec.with_right ? 2.0 : 1.0)
                                 : 2.0 * N * N * dh + (2.0 / 3.0) * N * N * N + 4.0 * N * N * N;
        e.flops += per_N * flops;
    }
    return e;
}

void check_fidelity_memory(const FidelitySpec& spec) {
    const double limit = spec.max_bytes > 0 ? spec.max_bytes : memory_limit_bytes();
    long N_max = 0;
    for (long N : spec.Ns) N_max = std::max(N_max, N);
    const double bytes = fidelity_estimate(spec).bytes;
    if (bytes <= limit) return;
    if (spec.matrix_free)
        check_allocation(bytes, limit,
                         "matrix-free fidelity at N = " + std::to_string(N_max) +
                             ", d_h = " + std::to_string(spec.d_h),
                         "max_bytes");
    throw Error(ExitCode::DataError,
                "dense fidelity at N = " + std::to_string(N_max) + " would need " +
                    human_bytes(bytes) + ", above the memory budget max_bytes = " +
                    human_bytes(limit) + " (--max-memory; matrix_free avoids N x N)",
                "matrix_free");
}

double measured_flop_rate() {
    const Eigen::Index n = 512, d = 64;
    Rng rng(1);
    const Eigen::MatrixXd Q = rng.gaussian(n, d), K = rng.gaussian(n, d);
    const ReluKernelOp op(Q, K);
    Eigen::VectorXd x = Eigen::VectorXd::Ones(n), z, lo, hi;
    const auto t0 = std::chrono::steady_clock::now();
    op.apply(x, true, z, lo, hi);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return 4.0 * double(n) * double(n) * double(d) / std::max(s, 1e-9);
}

long fidelity_instance_count(const FidelitySpec& spec) {
    return long(spec.families.size() * spec.Ns.size()) * spec.draws * spec.heads;
}

FidelityTable fidelity_table(const FidelitySpec& spec) {
    check_spec(spec);
    if (spec.Ns.empty() || spec.families.empty())
        fail_data("fidelity: the token counts N and the families must not be empty");
    for (long N : spec.Ns)
        if (N <= 0) bad("N", std::to_string(N), "must be positive");
    for (const auto& f : spec.families)
        if (f != "gaussian" && f != "shared-mean" && f != "independent-means")
            throw Error(
                ExitCode::Usage,
                "unknown family '" + f + "' (expected gaussian, shared-mean or independent-means)",
                "family");
    check_fidelity_memory(spec);
    FidelityTable t;
    std::uint64_t i = 0;
    for (const auto& fam : spec.families)
        for (long N : spec.Ns)
            for (long dr = 0; dr < spec.draws; ++dr)
                for (long h = 0; h < spec.heads; ++h, ++i) {
                    const std::uint64_t s = instance_seed(spec.seed, i);
                    Eigen::MatrixXd Q, K;
                    draw_family(fam, N, spec.d_h, spec.mu, s, Q, K);
                    t.records.push_back({fam, N, h, dr, s, one(Q, K, spec)});
                    if (spec.progress) spec.progress(long(i) + 1);
                }
    summarize(t);
    return t;
}

FidelityTable fidelity_table(const std::vector<Eigen::MatrixXd>& Qs,
                             const std::vector<Eigen::MatrixXd>& Ks, const FidelitySpec& spec) {
    check_spec(spec);
    if (Qs.size() != Ks.size())
        fail_data("fidelity: " + std::to_string(Qs.size()) + " Q blocks but " +
                  std::to_string(Ks.size()) + " K blocks");
    FidelitySpec sized = spec;  // the given blocks' sizes, for the memory estimate
    sized.Ns.clear();
    sized.families = {"input"};
    sized.draws = sized.heads = 1;
    for (const auto& Q : Qs) sized.Ns.push_back(long(Q.rows())), sized.d_h = long(Q.cols());
    check_fidelity_memory(sized);
    FidelityTable t;
    for (std::size_t h = 0; h < Qs.size(); ++h)
        t.records.push_back({"input", long(Qs[h].rows()), long(h), 0, 0, one(Qs[h], Ks[h], spec)});
    summarize(t);
    return t;
}

}  // namespace attnspec
