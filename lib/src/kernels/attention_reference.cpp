// The float64 attention reference and its rounding bounds, one row at a time
// (kernels/attention_reference.hpp; the derivation is proofs/kernel_tolerance.md).
#include "attnspec/kernels/attention_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnspec/base/rounding.hpp"

namespace attnspec::kernels {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The per-row quantities of one rounding model (proofs/kernel_tolerance.md, (B1)-(B5)).
struct ModelRow {
    double E = 0;      // max_j e_j: the largest logit error (B1)
    double eps_l = 0;  // relative error bound of the softmax denominator (B3)
    double k_max = 0;  // max_j kappa_j
    bool finite = true;
};

// kappa_j for every visible key into `kappa`, and E, eps_l (B1)-(B4).
// `phi` bounds the relative error of the reference's p_j, which stand in for the exact ones.
// `perturbed`: the operands may lie within in.dq, dK, dV of q, K, V (RowInput): the dot
// products are charged on A'_j (s.Ap) and each logit carries the extra error s.dx[j] ((Q1)).
ModelRow model_row(const RoundingModel& M, const RowInput& in, const RowScratch& s, double m,
                   double l, double phi, std::vector<double>& kappa, bool perturbed) {
    const long n = in.n;
    ModelRow r;
    const double g_logit = gamma_n(static_cast<double>(in.d + 3), M.u_a);
    const double f_logit = (1 + M.u_in) * (1 + M.u_in) * (1 + g_logit) - 1;
    const double tau_logit = static_cast<double>(in.d + 3) * M.tau_a;
    const std::vector<double>& A = perturbed ? s.Ap : s.A;
    const auto logit_error = [&](long j) {
        return f_logit * A[j] + tau_logit + (perturbed ? s.dx[j] : 0.0);
    };
    double A_max = 0;
    for (long j = 0; j < n; ++j) A_max = std::max(A_max, A[j]), r.E = std::max(r.E, logit_error(j));
    const double shift = M.u_a * A_max;  // the shift m rounded once, relative to |m| (A3)
    const double rescales = M.online ? static_cast<double>(n - 1) : 0.0;
    const double g_w = gamma_n(M.c_exp + (M.c_exp + 1) * rescales, M.u_a);
    const double g_sum = gamma_n(static_cast<double>(n - 1), M.u_a);
    kappa.resize(static_cast<size_t>(n));
    double eps = 0;
    for (long j = 0; j < n; ++j) {
        const double e_j = logit_error(j);
        const double a_j = e_j + r.E + shift + M.u_a * (m - s.x[j] + e_j + r.E);
        kappa[j] = std::exp(a_j) * (1 + g_w) - 1;  // r_j of (B2) until the loop below
        eps += s.t[j] / l * ((1 + kappa[j]) * (1 + M.u_p) * (1 + g_sum) - 1);  // (B3)
    }
    r.eps_l = eps / (1 - phi) + 2.0 * static_cast<double>(n) * M.tau_a;
    eps = r.eps_l;
    if (!(eps < 1)) {
        r.finite = false;
        return r;
    }
    const double g_pv = gamma_n(static_cast<double>(n + 1), M.u_a);
    const double f = (1 + M.u_p) * (1 + M.u_in) * (1 + g_pv) / (1 - eps);
    for (long j = 0; j < n; ++j) {
        kappa[j] = (1 + kappa[j]) * f - 1;  // (B4)
        r.k_max = std::max(r.k_max, kappa[j]);
    }
    return r;
}

// Logits, their absolute sums A_j, the shifted exponentials, o and lse of the float64 reference.
void reference_row(const RowInput& in, RowScratch& s, RowAnalysis& out, double& m, double& l) {
    const long n = in.n, d = in.d, dv = in.dv;
    s.x.resize(static_cast<size_t>(n));
    s.A.resize(static_cast<size_t>(n));
    s.t.resize(static_cast<size_t>(n));
    m = -kInf;
    out.max_abs_logit = 0;
    if (in.dq) s.Ap.resize(static_cast<size_t>(n)), s.dx.resize(static_cast<size_t>(n));
    for (long j = 0; j < n; ++j) {
        const double* k = in.K + j * d;
        double dot = 0, abs_dot = 0;
        for (long c = 0; c < d; ++c) dot += in.q[c] * k[c], abs_dot += std::fabs(in.q[c] * k[c]);
        s.x[j] = in.scale * dot;
        s.A[j] = in.scale * abs_dot;
        m = std::max(m, s.x[j]);
        out.max_abs_logit = std::max(out.max_abs_logit, std::fabs(s.x[j]));
        if (!in.dq) continue;
        // (Q1): |q'.k' - q.k| <= sum_c dq_c |k_c| + |q_c| dk_c + dq_c dk_c, and the kernel's dot
        // product of q', k' is charged on sum_c (|q_c| + dq_c)(|k_c| + dk_c).
        const double* dk = in.dK + j * d;
        double ap = 0, dx = 0;
        for (long c = 0; c < d; ++c) {
            const double aq = std::fabs(in.q[c]), ak = std::fabs(k[c]);
            ap += (aq + in.dq[c]) * (ak + dk[c]);
            dx += in.dq[c] * ak + aq * dk[c] + in.dq[c] * dk[c];
        }
        s.Ap[j] = in.scale * ap, s.dx[j] = in.scale * dx;
    }
    l = 0;
    for (long j = 0; j < n; ++j) l += (s.t[j] = std::exp(s.x[j] - m));
    out.o.assign(static_cast<size_t>(dv), 0.0);
    for (long j = 0; j < n; ++j) {
        const double p = s.t[j] / l;
        const double* v = in.V + j * dv;
        for (long c = 0; c < dv; ++c) out.o[c] += p * v[c];
    }
    out.lse = m + std::log(l);
}

// The log-sum-exp bound of one model: (E + L + (c_exp + 1) u (|log l| + L) + 3 u |lse|) /
// (1 - u), L = -log(1 - eps_l) (proofs/kernel_tolerance.md, (B7)).
double lse_bound(const RoundingModel& M, const ModelRow& r, double log_l, double abs_lse) {
    if (!r.finite) return kInf;
    const double L = -std::log1p(-r.eps_l);
    return (r.E + L + (M.c_exp + 1) * M.u_a * (std::fabs(log_l) + L) + 3 * M.u_a * abs_lse) /
           (1 - M.u_a);
}

}  // namespace

RoundingModel kernel_model(Format storage, Format accumulate, bool inputs_exact) {
    RoundingModel M;
    const Format acc = unit_roundoff(accumulate) < unit_roundoff(storage) ? accumulate : storage;
    M.u_a = unit_roundoff(acc);
    M.tau_a = smallest_normal(acc);  // flush to zero allowed in the accumulation format
    M.u_in = inputs_exact ? 0.0 : unit_roundoff(storage);
    M.u_p = unit_roundoff(storage) > M.u_a ? unit_roundoff(storage) : 0.0;
    M.tau_p = M.u_p > 0 ? underflow_error(storage) : 0.0;
    M.u_out = unit_roundoff(output_format(storage));
    M.tau_out = underflow_error(output_format(storage));
    return M;
}

RoundingModel reference_model() {
    RoundingModel M;
    M.u_a = kUnitRoundoff;
    M.c_exp = 2;
    M.online = false;
    M.tau_a = smallest_normal(Format::fp64);
    return M;
}

void analyze_row(const RowInput& in, const RoundingModel& kernel, RowScratch& s, RowAnalysis& out) {
    const long n = in.n, dv = in.dv;
    out.masked = n == 0;
    if (out.masked) {
        out.o.assign(static_cast<size_t>(dv), std::nan(""));
        out.bound.assign(static_cast<size_t>(dv), kInf);
        out.ref_error.assign(static_cast<size_t>(dv), 0.0);
        out.lse = -kInf, out.lse_bound = kInf, out.denominator_error = 0;
        return;
    }
    double m = 0, l = 0;
    reference_row(in, s, out, m, l);
    const RoundingModel R = reference_model();
    const ModelRow Rr = model_row(R, in, s, m, l, 0.0, s.kappa_ref, false);
    // phi: relative error of the reference's p_j, which stand in for the exact ones (B6).
    const double phi = Rr.k_max;
    const bool ok = Rr.finite && phi < 0.5;
    const ModelRow K = model_row(kernel, in, s, m, l, ok ? phi : 0.0, s.kappa, in.dq != nullptr);
    out.denominator_error = K.eps_l;
    std::vector<double> BK(static_cast<size_t>(dv), 0.0), BR(BK), sum_abs(BK), v_max(BK), pv(BK);
    for (long j = 0; j < n; ++j) {
        const double p = s.t[j] / l;
        const double* v = in.V + j * dv;
        const double kk = K.finite ? s.kappa[j] : 0.0, kr = Rr.finite ? s.kappa_ref[j] : 0.0;
        for (long c = 0; c < dv; ++c) {
            const double av = std::fabs(v[c]), dvc = in.dV ? in.dV[j * dv + c] : 0.0;
            // (Q2): the term p_j v'_jc with |v'_jc - v_jc| <= dV_jc has relative error kappa_j
            // about v'_jc: p_j (kappa_j |v_jc| + (1 + kappa_j) dV_jc) from p_j v_jc.
            BK[c] += p * (av * kk + dvc * (1 + kk)), BR[c] += p * av * kr, pv[c] += p * av;
            sum_abs[c] += av + dvc, v_max[c] = std::max(v_max[c], av + dvc);
        }
    }
    out.max_abs_pv = *std::max_element(pv.begin(), pv.end());
    out.bound.assign(static_cast<size_t>(dv), kInf);
    out.ref_error.assign(static_cast<size_t>(dv), kInf);
    const double nd = static_cast<double>(n);
    for (long c = 0; c < dv && ok && K.finite; ++c) {
        const double abs_K = (kernel.tau_p + 4 * kernel.tau_a) * (1 + gamma_n(nd, kernel.u_a)) /
                             (1 - K.eps_l) * (sum_abs[c] + nd);
        const double abs_R =
            4 * R.tau_a * (1 + gamma_n(nd, R.u_a)) / (1 - Rr.eps_l) * (sum_abs[c] + nd);
        const double flushed = nd * R.tau_a * v_max[c] * (1 + K.k_max);  // p_j the ref flushed
        const double ref = (BR[c] + abs_R) / (1 - phi);
        const double BKc = BK[c] / (1 - phi) + abs_K + flushed;
        const double kern =
            (1 + kernel.u_out) * BKc + kernel.u_out * (std::fabs(out.o[c]) + ref) + kernel.tau_out;
        out.ref_error[c] = ref * kBoundSafety;
        out.bound[c] = (kern + ref) * kBoundSafety;
    }
    const double ref_lse = lse_bound(R, Rr, std::log(l), std::fabs(out.lse));
    out.lse_bound =
        (lse_bound(kernel, K, std::log(l) + ref_lse, std::fabs(out.lse) + ref_lse) + ref_lse) *
        kBoundSafety;
}

}  // namespace attnspec::kernels
