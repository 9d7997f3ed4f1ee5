// check-kernel neumann: the float64 reference of ((I - gamma Â)^-1 - I) V by LU with partial
// pivoting, its rounding bound (proofs/kernel_tolerance.md, "Neumann", (N1)-(N6)), the plain kernel
// at a declared precision, the verdict and the stress cases (kernels/neumann_check.hpp).
#include "attnspec/kernels/neumann_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/kernels/derivative_nonfinite.hpp"
#include "attnspec/kernels/stress.hpp"
#include "check_compare.hpp"
#include "linear_infsa_reference.hpp"
#include "nonfinite_check.hpp"

namespace attnspec::kernels {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr const char* kRankOne = "rank-one";

// LU with partial pivoting of the n x n row-major `a` in place (the multipliers below the
// diagonal, U on and above it; piv[k] the row swapped into row k), every result rounded by `r`.
template <class R>
void lu_factor(std::vector<double>& a, std::vector<long>& piv, long n, R r) {
    piv.assign(static_cast<size_t>(n), 0);
    for (long k = 0; k < n; ++k) {
        long p = k;
        for (long i = k + 1; i < n; ++i)
            if (std::fabs(a[i * n + k]) > std::fabs(a[p * n + k])) p = i;
        piv[k] = p;
        if (p != k) std::swap_ranges(a.begin() + k * n, a.begin() + (k + 1) * n, a.begin() + p * n);
        const double* top = a.data() + k * n;
        if (top[k] == 0) continue;  // singular: the solve gives Inf/NaN
        for (long i = k + 1; i < n; ++i) {
            double* row = a.data() + i * n;
            const double l = row[k] = r(row[k] / top[k]);
            if (l != 0)
                for (long j = k + 1; j < n; ++j) row[j] = r(row[j] - r(l * top[j]));
        }
    }
}

// Solves (P^T L U) X = B for the n x m row-major B in place, every result rounded by `r`.
template <class R>
void lu_solve(const std::vector<double>& a, const std::vector<long>& piv, long n,
              std::vector<double>& b, long m, R r) {
    auto sub = [&](long i, long j, double f) {
        if (f != 0)
            for (long c = 0; c < m; ++c) b[i * m + c] = r(b[i * m + c] - r(f * b[j * m + c]));
    };
    for (long k = 0; k < n; ++k)
        if (piv[k] != k)
            std::swap_ranges(b.begin() + k * m, b.begin() + (k + 1) * m, b.begin() + piv[k] * m);
    for (long i = 0; i < n; ++i)
        for (long j = 0; j < i; ++j) sub(i, j, a[i * n + j]);
    for (long i = n - 1; i >= 0; --i) {
        for (long j = i + 1; j < n; ++j) sub(i, j, a[i * n + j]);
        for (long c = 0; c < m; ++c) b[i * m + c] = r(b[i * m + c] / a[i * n + i]);
    }
}

// One model's normwise figures (N3)-(N4): E_G >= ||G^ - G||_F, mu >= ||dM||_2 and
// kp >= ||(I - G^ - dM)^-1||_2 (+inf where the analysis gives none).
struct Model {
    double EG = kInf, mu = kInf, kp = kInf, dD = kInf;
    double eps_D = kInf, Dlo = 0, eta = 0;  // (P2)'s eps_D and D's lower bound, (N2)'s eta
};

struct HeadSums {
    long n = 0;
    double F2 = 0, EF2K = 0, EF2R = 0, g = 0, Lambda = 0;
};

Model model(const RoundingModel& M, double EF2, const HeadSums& s, const detail::HeadInput& in,
            double wide, double ref_dD, double F_hi, double g_hi, double solve_factor) {
    const double nn = static_cast<double>(s.n), gamma = in.par.gamma;
    const detail::NormBound nb =
        detail::norm_bound(M, s.F2, EF2, nn * nn, in.par.eps, wide, ref_dD);
    Model r;
    r.dD = nb.dD, r.eps_D = nb.eps_D, r.Dlo = nb.Dlo;
    if (!(nb.eps_D < 1)) return r;
    const double eta = r.eta = (1 + M.u_a) * (1 + M.u_a) * (1 + M.u_a) * (1 + M.u_p) - 1;  // (N2)
    r.EG = gamma * (1 + eta) * (nb.EF + F_hi * nb.eps_D) / (nb.Dlo * (1 - nb.eps_D)) +
           eta * gamma * F_hi / nb.Dlo + nn * (M.tau_p + 3 * M.tau_a);
    r.mu = r.EG + solve_factor * gamma_n(3 * nn, M.u_a) * s.Lambda * wide;  // (N3)
    const double kappa = g_hi < 1 ? 1 / (1 - g_hi) : kInf;
    if (kappa * r.mu < 1) r.kp = kappa / (1 - kappa * r.mu);
    return r;
}

// out = |W| w for the n x n row-major W (part: all of it, its unit lower triangle L or its upper
// triangle U as lu_factor leaves them) and the nonnegative n x m block w.
enum class Part { full, unit_lower, upper };
void abs_times(const std::vector<double>& W, Part part, long n, const std::vector<double>& w,
               long m, std::vector<double>& out) {
    out.assign(static_cast<size_t>(n * m), 0.0);
    for (long i = 0; i < n; ++i) {
        double* o = out.data() + i * m;
        if (part == Part::unit_lower)
            for (long c = 0; c < m; ++c) o[c] = w[i * m + c];
        const long lo = part == Part::upper ? i : 0, hi = part == Part::unit_lower ? i : n;
        for (long j = lo; j < hi; ++j) {
            const double a = std::fabs(W[i * n + j]);
            if (a != 0)
                for (long c = 0; c < m; ++c) o[c] += a * w[j * m + c];
        }
    }
}

// What the componentwise bound (N5) needs of one head: G, |dG| (E), the LU of I - G with its
// pivots, the inverse X of I - G and u_a, the kernel's solve factor 2 gamma_3n(u_a).
struct Perturbation {
    const std::vector<double>*G, *E, *lu, *X;
    const std::vector<long>* piv;
    long n = 0;
    double u = 0, solve = 0;
    // out = Delta w, Delta >= |dM| = |dG| + u_a (I + G) + solve P^T |L||U| entrywise.
    void delta(const std::vector<double>& w, long m, std::vector<double>& out) const {
        std::vector<double> t, t2;
        abs_times(*lu, Part::upper, n, w, m, t);
        abs_times(*lu, Part::unit_lower, n, t, m, t2);
        for (long k = n - 1; k >= 0; --k)  // P^T: the row swaps undone in reverse order
            if ((*piv)[k] != k)
                std::swap_ranges(t2.begin() + k * m, t2.begin() + (k + 1) * m,
                                 t2.begin() + (*piv)[k] * m);
        abs_times(*E, Part::full, n, w, m, out);
        abs_times(*G, Part::full, n, w, m, t);
        for (size_t e = 0; e < out.size(); ++e) out[e] += u * (w[e] + t[e]) + solve * t2[e];
    }
};

struct HeadOut {
    std::vector<double> o, bound, ref_error, first;
};

// The reference of one head (N1), its bounds (N2)-(N5) and the floor's terms (N6).
void analyze(const detail::HeadInput& in, const RoundingModel& K, HeadOut& out) {
    const RoundingModel R = reference_model();
    const long n = in.nq, d = in.d, dv = in.dv;
    const auto nn = static_cast<size_t>(n * n), size = static_cast<size_t>(n * dv);
    HeadSums s;
    s.n = n;
    std::vector<double> G(nn), E(nn);  // a_ij, then g_ij; the kernel's entry errors, then |dG|
    const double inv_d = 1.0 / static_cast<double>(d);
    for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j) {
            double x = 0, A = 0;
            for (long l = 0; l < d; ++l)
                x += in.Q[i * d + l] * in.K[j * d + l],
                    A += std::fabs(in.Q[i * d + l] * in.K[j * d + l]);
            const double a = std::max(0.0, x * inv_d), eK = detail::entry_error(K, A * inv_d, a, d),
                         eR = detail::entry_error(R, A * inv_d, a, d);
            G[i * n + j] = a, E[i * n + j] = eK;
            s.F2 += a * a, s.EF2K += eK * eK, s.EF2R += eR * eR;
        }
    const double D = std::sqrt(s.F2) + in.par.eps, f = in.par.gamma / D;
    std::vector<double> rows(static_cast<size_t>(n), 0.0), cols(rows);
    for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j)
            G[i * n + j] *= f, rows[i] += G[i * n + j], cols[j] += G[i * n + j];
    s.g = std::min(f * std::sqrt(s.F2), std::sqrt(*std::max_element(rows.begin(), rows.end()) *
                                                  *std::max_element(cols.begin(), cols.end())));
    std::vector<double> absV(size), GV;
    for (size_t e = 0; e < size; ++e) absV[e] = std::fabs(in.V[e]);
    abs_times(G, Part::full, n, absV, dv, GV);  // G |V|
    out.o.assign(size, 0.0);
    for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j)
            for (long c = 0; c < dv; ++c) out.o[i * dv + c] += G[i * n + j] * in.V[j * dv + c];
    std::vector<double> lu(nn), X(nn, 0.0);  // M = I - G and its LU; X = M^-1
    for (size_t e = 0; e < nn; ++e) lu[e] = -G[e];
    for (long i = 0; i < n; ++i) lu[i * n + i] += 1, X[i * n + i] = 1;
    std::vector<long> piv;
    const auto exact = [](double x) { return x; };
    lu_factor(lu, piv, n, exact);
    lu_solve(lu, piv, n, out.o, dv, exact);
    lu_solve(lu, piv, n, X, n, exact);
    // Lambda >= || |L||U| ||_2 <= sqrt(||.||_1 ||.||_inf) of the nonnegative |L||U| (N3)
    std::vector<double> colL(static_cast<size_t>(n), 1.0), rowU(colL.size(), 0.0);
    for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j) (j < i ? colL[j] : rowU[i]) += std::fabs(lu[i * n + j]);
    double P1 = 0, Pinf = 0;
    for (long i = 0; i < n; ++i) {
        double r = rowU[i], c = 0;  // row i of |L||U|: sum_k |l_ik| rowU_k; column i alike
        for (long k = 0; k < i; ++k) r += std::fabs(lu[i * n + k]) * rowU[k];
        for (long k = 0; k <= i; ++k) c += colL[k] * std::fabs(lu[k * n + i]);
        Pinf = std::max(Pinf, r), P1 = std::max(P1, c);
    }
    s.Lambda = std::sqrt(P1 * Pinf);
    // (N4) per column: ||v_c||_2, ||o_c||_2, max |v_jc|
    std::vector<double> vn(static_cast<size_t>(dv), 0.0), on(vn), vmax(vn), beta(vn), betaR(vn),
        tau(vn);
    for (long i = 0; i < n; ++i)
        for (long c = 0; c < dv; ++c) {
            const double v = in.V[i * dv + c], o = out.o[i * dv + c];
            vn[c] += v * v, on[c] += o * o, vmax[c] = std::max(vmax[c], std::fabs(v));
        }
    const double wide = 1 + gamma_n(static_cast<double>(n + d + 8)), F = std::sqrt(s.F2) * wide;
    const Model mr0 = model(R, s.EF2R, s, in, 1, -1, F, 0, 1);
    const double g_hi = s.g * wide + mr0.EG;
    const Model mr = model(R, s.EF2R, s, in, 1, -1, F, g_hi, 1);
    const double F_hi = F + std::sqrt(s.EF2R) * wide;
    const Model mk = model(K, s.EF2K, s, in, wide, mr.dD, F_hi, g_hi, 2);
    const double kappa = g_hi < 1 ? 1 / (1 - g_hi) : kInf, nd = static_cast<double>(n);
    const double u_in = K.u_in, u = K.u_a, gn = gamma_n(nd, u);
    for (long c = 0; c < dv; ++c) {  // (N4): normwise, per column
        const double v2 = std::sqrt(vn[c]) * wide, o2 = std::sqrt(on[c]) * wide;
        const double rR = (mr.EG + gamma_n(nd, R.u_a) * (g_hi + mr.EG)) * v2;
        betaR[c] = mr.kp * mr.mu < 1 ? mr.kp * (rR + mr.mu * o2) / (1 - mr.kp * mr.mu) : kInf;
        const double o_hi = o2 + betaR[c];
        const double rK = ((1 + u_in) * (mk.EG + gn * (g_hi + mk.EG)) + g_hi * u_in) * v2;
        const double beta_O = mk.kp * (rK + mk.mu * o_hi);
        const double beta_X = mk.kp * (u_in * v2 + mk.mu * (o_hi + v2)) + u_in * v2;
        tau[c] = mk.kp * (2 * nd + 2) * std::sqrt(nd) * K.tau_a * (1 + vmax[c] + o_hi);
        beta[c] = std::max(beta_O, beta_X) + tau[c];
    }
    // (N5): componentwise through |M^-1|, X's own error eps_X per entry
    for (size_t e = 0; e < nn; ++e)  // (N2): |dG_ij|
        E[e] = mk.eps_D < 1 ? in.par.gamma * (1 + mk.eta) * (E[e] + G[e] / f * mk.eps_D) /
                                      (mk.Dlo * (1 - mk.eps_D)) +
                                  mk.eta * G[e] * wide + K.tau_p + 3 * K.tau_a
                            : kInf;
    const double eps_X =
        mr.kp * mr.mu < 1 ? wide * mr.kp * mr.mu * kappa / (1 - mr.kp * mr.mu) : kInf;
    const Perturbation P{&G, &E, &lu, &X, &piv, n, u, 2 * gamma_n(3 * nd, u)};
    std::vector<double> EV, w1(size), w2(size), tO, tX, bO, bX;
    abs_times(E, Part::full, n, absV, dv, EV);
    for (size_t e = 0; e < size; ++e) {
        const double b = beta[e % static_cast<size_t>(dv)] + betaR[e % static_cast<size_t>(dv)];
        w1[e] = std::fabs(out.o[e]) + b, w2[e] = w1[e] + absV[e];
    }
    P.delta(w1, dv, tO), P.delta(w2, dv, tX);
    std::vector<double> sumO(static_cast<size_t>(dv), 0.0), sumX(sumO);
    for (size_t e = 0; e < size; ++e) {
        const size_t c = e % static_cast<size_t>(dv);
        tO[e] += (1 + u_in) * (1 + gn * (1 + u_in)) * EV[e] +
                 ((1 + u_in) * (1 + u_in) * gn + u_in) * GV[e] * wide;
        tX[e] += u_in * absV[e];
        sumO[c] += tO[e], sumX[c] += tX[e];
    }
    abs_times(X, Part::full, n, tO, dv, bO);
    abs_times(X, Part::full, n, tX, dv, bX);
    // (N6) the floor's terms: |X| [2u_a G(|o| + |v|) + u_a (|o| + |v|)] + u_p G|V|
    for (size_t e = 0; e < size; ++e) w2[e] = std::fabs(out.o[e]) + absV[e];
    abs_times(G, Part::full, n, w2, dv, tX);
    for (size_t e = 0; e < size; ++e) tX[e] = 2 * u * tX[e] + u * w2[e];
    abs_times(X, Part::full, n, tX, dv, out.first);
    for (size_t e = 0; e < size; ++e) out.first[e] += K.u_p * GV[e];
    out.bound.assign(size, kInf), out.ref_error.assign(size, kInf);
    for (size_t e = 0; e < size; ++e) {  // (N6)
        const size_t c = e % static_cast<size_t>(dv);
        const double comp = std::max((bO[e] + eps_X * sumO[c]) * wide,
                                     (bX[e] + eps_X * sumX[c]) * wide + u_in * absV[e]);
        const double o = std::fabs(out.o[e]), Ri = betaR[c] * kBoundSafety;
        const double Bn = std::min(beta[c], comp + tau[c]);
        const double B = Bn + u * (o + Bn);
        out.ref_error[e] = Ri;
        out.bound[e] = ((1 + K.u_out) * B + K.u_out * (o + Ri) + K.tau_out + Ri) * kBoundSafety;
        if (std::isnan(out.bound[e])) out.bound[e] = kInf;
        out.first[e] += u * o;
    }
}

// The plain kernel of one head; x_minus_v: the literal formula X - V with X = (I - G)^-1 V, else
// (I - G)^-1 (G V).
void baseline(const detail::HeadInput& in, Format storage, Format accumulate, bool x_minus_v,
              std::vector<double>& o) {
    const Format A = unit_roundoff(accumulate) < unit_roundoff(storage) ? accumulate : storage;
    auto ra = [A](double x) { return round_to(x, A); };
    const long n = in.nq, d = in.d, dv = in.dv;
    const double inv_d = ra(1.0 / static_cast<double>(d));
    std::vector<double> G(static_cast<size_t>(n * n));
    double F2 = 0;
    for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j) {
            const double a = G[i * n + j] = detail::baseline_entry(in, i, j, inv_d, storage, ra);
            F2 = ra(F2 + ra(a * a));
        }
    const double D = ra(ra(std::sqrt(F2)) + ra(in.par.eps)), g = ra(in.par.gamma);
    for (double& x : G) x = ra(g * ra(x / D));
    o.assign(in.V, in.V + n * dv);
    if (!x_minus_v) {
        std::fill(o.begin(), o.end(), 0.0);
        for (long i = 0; i < n; ++i)
            for (long j = 0; j < n; ++j)
                for (long c = 0; c < dv; ++c)
                    o[i * dv + c] = ra(o[i * dv + c] + ra(G[i * n + j] * in.V[j * dv + c]));
    }
    for (long i = 0; i < n; ++i)
        for (long j = 0; j < n; ++j) G[i * n + j] = ra((i == j ? 1.0 : 0.0) - G[i * n + j]);
    std::vector<long> piv;
    lu_factor(G, piv, n, ra);
    lu_solve(G, piv, n, o, dv, ra);
    for (long e = 0; e < n * dv; ++e)
        o[e] = round_to(x_minus_v ? ra(o[e] - in.V[e]) : o[e], output_format(storage));
}

}  // namespace

void check_neumann_params(const AttentionProblem& p, const LinearInfsaParams& par) {
    if (p.mask != MaskKind::none)
        fail_data("neumann takes no mask (got " + std::string(mask_name(p.mask)) + ")", "mask");
    if (!(par.gamma > 0 && par.gamma < 1))
        fail_data("gamma = " + value_text(par.gamma) + " must be in (0, 1) for neumann", "gamma");
    if (!(par.eps > 0) || !std::isfinite(par.eps))
        fail_data("eps = " + value_text(par.eps) + " must be finite and > 0", "eps");
    const ProblemShape sh = problem_shape(p);
    if (sh.Nq != sh.Nk)
        fail_data("neumann needs as many keys as queries (N_q = " + std::to_string(sh.Nq) +
                      ", N_k = " + std::to_string(sh.Nk) + ")",
                  "N");
    if (sh.Nq > kNeumannMaxN)
        fail_data("N = " + std::to_string(sh.Nq) + " exceeds neumann's limit of " +
                      std::to_string(kNeumannMaxN) + " (its reference holds N x N per head)",
                  "N");
}

KernelCheckResult check_neumann(const AttentionProblem& p, const LinearInfsaParams& par,
                                const Array& o, const KernelCheckOptions& opt) {
    check_neumann_params(p, par);
    if (any_nonfinite({&p.q, &p.k, &p.v}))  // kernels/infsa_nonfinite.hpp
        return detail::check_neumann_nonfinite(p, par, o, opt);
    HeadOut ref;
    std::vector<double> base, other;
    const double d = static_cast<double>(p.q.shape.back());
    return detail::check_infsa(
        p, par, o, opt, 1.0 / d,
        [&](const detail::HeadInput& exact, const detail::HeadInput& rounded,
            const RoundingModel& model) {
            analyze(exact, model, ref);
            // (N6): per element the worse of the two forms
            baseline(rounded, opt.storage, opt.accumulate, true, base);
            baseline(rounded, opt.storage, opt.accumulate, false, other);
            for (size_t e = 0; e < base.size(); ++e)
                if (std::fabs(other[e] - ref.o[e]) > std::fabs(base[e] - ref.o[e]))
                    base[e] = other[e];
            return detail::HeadRows{ref.o.data(), ref.bound.data(), ref.ref_error.data(),
                                    base.data(),  ref.first.data(), exact.dv};
        });
}

Array reference_neumann(const AttentionProblem& p, const LinearInfsaParams& par) {
    check_neumann_params(p, par);
    HeadOut ref;
    return detail::per_head(p, par, [&](const detail::HeadInput& in, std::vector<double>& rows) {
        analyze(in, RoundingModel{}, ref);
        rows = ref.o;
    });
}

Array baseline_neumann(const AttentionProblem& p, const LinearInfsaParams& par, Format storage,
                       Format accumulate) {
    check_neumann_params(p, par);
    AttentionProblem rounded = p;
    detail::round_all({&rounded.q, &rounded.k, &rounded.v}, storage);
    return detail::per_head(rounded, par,
                            [&](const detail::HeadInput& in, std::vector<double>& rows) {
                                baseline(in, storage, accumulate, true, rows);
                            });
}

std::vector<std::string> neumann_cases() {
    std::vector<std::string> all = linear_infsa_cases();
    all.emplace_back(kRankOne);
    return all;
}

AttentionProblem generate_neumann(const std::string& name, std::uint64_t seed,
                                  const std::vector<std::int64_t>& shape, Format storage) {
    if (name != kRankOne) return generate_linear_infsa(name, seed, shape, storage);
    AttentionProblem p = generate_stress(StressCase::gaussian, seed, shape, Format::fp64);
    const long d = static_cast<long>(shape.back()), N = static_cast<long>(shape[shape.size() - 2]);
    const long heads = static_cast<long>(p.q.values.size()) / (N * d);
    Rng rng(seed ^ 0xA24BAED4963EE407ULL);
    std::vector<double> u(static_cast<size_t>(d));
    for (long h = 0; h < heads; ++h) {  // q_i = k_i = |g_i| u: A+ = a a^T / d, rank one
        double nu = 0;
        for (double& x : u) x = rng.normal(), nu += x * x;
        nu = std::sqrt(nu);
        for (long i = 0; i < N; ++i) {
            const double a = std::fabs(rng.normal()) + 0.1;
            for (long l = 0; l < d; ++l)
                p.q.values[(h * N + i) * d + l] = p.k.values[(h * N + i) * d + l] = a * u[l] / nu;
        }
    }
    for (Array* a : {&p.q, &p.k, &p.v})
        for (double& x : a->values) x = round_to(x, storage);
    return p;
}

}  // namespace attnspec::kernels
