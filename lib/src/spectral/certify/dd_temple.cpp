// Temple's bound for the double-double certificate (proofs/spectral_enclosure.md §8 "One
// factorization"): Rayleigh quotients on the double-double Gram, double-double inverse iteration
// with a factor, the residual bound and the enclosure of lambda_min given lambda_2's bound.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "attnspec/base/dd_accumulate.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/interval_ops.hpp"
#include "attnspec/base/rounding.hpp"
#include "dd_internal.hpp"

namespace attnspec::ddcert {

namespace {

// Rayleigh quotient of u on the double-double Gram itself: u^T G~ u = sum_i u_i r_i with
// r_i = G~_ii u_i + 2 sum_{j<i} G~_ij u_j, each r_i accumulated in double-double (an estimate for
// the shift, not part of the proof).
dd::Acc gram_quadratic(const DdGram& g, const Eigen::VectorXd& u) {
    const Eigen::Index n = g.n;
    dd::Acc total;
    std::vector<double> two_u(static_cast<std::size_t>(n));
    for (Eigen::Index j = 0; j < n; ++j) two_u[static_cast<std::size_t>(j)] = 2 * u[j];
    for (Eigen::Index i = 0; i < n; ++i) {
        dd::Acc row;
        dd::sub_dot(g.hi.data() + idx(i, 0, n), g.lo.data() + idx(i, 0, n), two_u.data(), nullptr,
                    static_cast<std::size_t>(i), row);
        dd::sub_prod(g.hi[idx(i, i, n)], g.lo[idx(i, i, n)], u[i], 0, row);
        double h = 0, l = 0;
        dd::two_sum(row.hi, row.lo, h, l);  // row = -r_i, normalised
        dd::sub_prod(h, l, u[i], 0, total);
    }
    return total;  // sum_i u_i r_i
}  // namespace

}  // namespace
double gram_rayleigh(const DdGram& g, const Eigen::VectorXd& u) {
    const dd::Acc t = gram_quadratic(g, u);
    return (t.hi + t.lo) / u.squaredNorm();
}

// An upper bound on u^T G u / u^T u for the exact Gram G that g stands for: the double-double
// Rayleigh quotient of gram_rayleigh plus its rounding (the accumulation lemma per row r_i, then
// over the n products u_i r_i: at most (2 c_row + 2 c_total)|u|^T|G~||u|), over a lower bound of
// u^T u, plus g.rho (|u^T (G~ - G) u| <= |u|^T B |u| <= rho(B) u^T u). Rounded up.
double gram_rayleigh_upper(const DdGram& g, const Eigen::VectorXd& u) {
    const Eigen::Index n = g.n;
    const double c_row = dd::error_constant(dd::tree_height(static_cast<std::size_t>(n), 1, 1)) *
                         (1 + 4 * kUnitRoundoff);
    const double c_tot =
        dd::error_constant(dd::tree_height(0, 0, static_cast<int>(n))) * (1 + 4 * kUnitRoundoff);
    double mag = 0;  // |u|^T |G~| |u| from the high parts (|G~| <= (1 + u)|hi|), rounded up
    for (Eigen::Index i = 0; i < n; ++i) {
        double row = std::abs(g.hi[idx(i, i, n)] * u[i]);
        for (Eigen::Index j = 0; j < i; ++j) row += 2 * std::abs(g.hi[idx(i, j, n)] * u[j]);
        mag += std::abs(u[i]) * row;
    }
    mag *= (1 + gamma_n(static_cast<double>(n) + 4)) * (1 + gamma_n(static_cast<double>(n) + 4)) *
           (1 + 2 * kUnitRoundoff);
    const double err = 2 * (c_row + c_tot) * 1.01 * mag +
                       8.0 * static_cast<double>(n + 4) * static_cast<double>(n + 4) * kEta;
    const double sq = u.squaredNorm(), sq_lo = sq * (1 - gamma_n(static_cast<double>(n) + 4));
    const dd::Acc t = gram_quadratic(g, u);
    const double num =
        iv::up(iv::up(iv::up(t.hi + t.lo) + std::abs(t.hi) * 2 * kUnitRoundoff) + err);
    return iv::up(iv::up(num / sq_lo) * (1 + 2 * kUnitRoundoff) + g.rho) * kBoundSafety;
}

namespace {

// ---- Temple's bound from a factor that failed only at its last pivot (proofs §8 "One
// factorization"). Its vectors are double-double pairs (hi, lo), |lo| <= u |hi|.
struct DdVec {
    std::vector<double> hi, lo;
};

// Column k of a lower triangle stored row-major (hi, lo), rows k + 1 .. n - 1, gathered by tiles
// of kT columns (each row read once per tile) and handed to fn(k, hi, lo, length), k descending
// when `descending`.
template <class Fn>
void for_each_column_below(const double* hi, const double* lo, Eigen::Index n, bool descending,
                           Fn&& fn) {
    constexpr Eigen::Index kT = 64;
    std::vector<double> th(static_cast<std::size_t>(kT * n)), tl(th.size());
    const Eigen::Index tiles = (n + kT - 1) / kT;
    for (Eigen::Index t = 0; t < tiles; ++t) {
        const Eigen::Index k0 = (descending ? tiles - 1 - t : t) * kT, k1 = std::min(n, k0 + kT);
        for (Eigen::Index j = k0 + 1; j < n; ++j)
            for (Eigen::Index k = k0; k < std::min(k1, j); ++k) {
                th[idx(k - k0, j, n)] = hi[idx(j, k, n)];
                tl[idx(k - k0, j, n)] = lo[idx(j, k, n)];
            }
        for (Eigen::Index c = 0; c < k1 - k0; ++c) {
            const Eigen::Index k = descending ? k1 - 1 - c : k0 + c;
            fn(k, th.data() + idx(k - k0, k + 1, n), tl.data() + idx(k - k0, k + 1, n),
               static_cast<std::size_t>(n - 1 - k));
        }
    }
}

// x <- (L L^T)^-1 x (a factor that succeeded) or (L^ diag(1, ..., 1, d) L^^T)^-1 x (one that
// failed only at its last pivot d < 0, L^ with a unit last diagonal entry) in double-double (a
// direction, not part of the proof).
void solve_dd(const Factor& f, Eigen::Index n, DdVec& x) {
    for (Eigen::Index i = 0; i < n; ++i) {  // L^ z = x
        dd::Acc a{x.hi[static_cast<std::size_t>(i)], x.lo[static_cast<std::size_t>(i)]};
        dd::sub_dot_blocked(f.Lh.data() + idx(i, 0, n), f.Ll.data() + idx(i, 0, n), x.hi.data(),
                            x.lo.data(), static_cast<std::size_t>(i), a);
        dd::divide(a, f.Lh[idx(i, i, n)], f.Ll[idx(i, i, n)], x.hi[static_cast<std::size_t>(i)],
                   x.lo[static_cast<std::size_t>(i)]);
    }
    const auto last = static_cast<std::size_t>(n - 1);
    if (!f.ok) dd::divide({x.hi[last], x.lo[last]}, f.last_pivot, 0, x.hi[last], x.lo[last]);
    // L^^T y = z, row i of L^^T being column i of L^ below the diagonal
    for_each_column_below(
        f.Lh.data(), f.Ll.data(), n, true,
        [&](Eigen::Index k, const double* ch, const double* cl, std::size_t len) {
            const auto kk = static_cast<std::size_t>(k);
            dd::Acc a{x.hi[kk], x.lo[kk]};
            dd::sub_dot_blocked(ch, cl, x.hi.data() + kk + 1, x.lo.data() + kk + 1, len, a);
            dd::divide(a, f.Lh[idx(k, k, n)], f.Ll[idx(k, k, n)], x.hi[kk], x.lo[kk]);
        });
}

// x scaled by a power of two to max |x_hi| in [1, 2) (exact) and renormalised; false when x is
// zero or not finite.
bool normalise(DdVec& x) {
    double mx = 0;
    for (const double v : x.hi) mx = std::max(mx, std::abs(v));
    if (!(mx > 0) || !std::isfinite(mx)) return false;
    const int e = std::ilogb(mx);
    for (std::size_t i = 0; i < x.hi.size(); ++i)
        dd::two_sum(std::ldexp(x.hi[i], -e), std::ldexp(x.lo[i], -e), x.hi[i], x.lo[i]);
    return true;
}

// w^T (y_hi + y_lo) as a pair, w double (an estimate).
dd::Acc dot_dd(const Eigen::VectorXd& w, const DdVec& y) {
    dd::Acc a;
    dd::sub_dot_blocked(w.data(), nullptr, y.hi.data(), y.lo.data(), y.hi.size(), a);
    double h = 0, l = 0;
    dd::two_sum(-a.hi, -a.lo, h, l);
    return {h, l};
}

struct ResidualBound {
    double R = std::numeric_limits<double>::infinity();  // >= ||G x - mu x|| / ||x||
    double dq_lo = -std::numeric_limits<double>::infinity(),
           dq_hi = std::numeric_limits<double>::infinity();  // q - mu in [dq_lo, dq_hi]
};

ResidualBound residual_bound(const DdGram& g, const DdVec& x, double mu, double scale) {
    const Eigen::Index n = g.n;
    const auto nn = static_cast<std::size_t>(n);
    std::vector<dd::Acc> acc(nn);
    std::vector<double> P(nn, 0.0);  // sum of |G~_kj,h x_j,h| over the chain's terms
    for (Eigen::Index i = 0; i < n; ++i) {
        const double* row = g.hi.data() + idx(i, 0, n);
        dd::sub_dot_blocked(row, g.lo.data() + idx(i, 0, n), x.hi.data(), x.lo.data(),
                            static_cast<std::size_t>(i) + 1, acc[static_cast<std::size_t>(i)]);
        double p = 0;
        for (Eigen::Index j = 0; j <= i; ++j)
            p += std::abs(row[j] * x.hi[static_cast<std::size_t>(j)]);
        P[static_cast<std::size_t>(i)] = p;
    }
    for_each_column_below(g.hi.data(), g.lo.data(), n, false,
                          [&](Eigen::Index k, const double* ch, const double* cl, std::size_t len) {
                              const auto kk = static_cast<std::size_t>(k);
                              dd::sub_dot_blocked(ch, cl, x.hi.data() + kk + 1,
                                                  x.lo.data() + kk + 1, len, acc[kk]);
                              double p = 0;
                              for (std::size_t j = 0; j < len; ++j)
                                  p += std::abs(ch[j] * x.hi[kk + 1 + j]);
                              P[kk] += p;
                          });
    // per k: s_k = (G~ x - mu x)_k = -(acc_k), |s_k - (-vh_k)| <= |vl_k| + err_k
    double sum = 0, xsq = 0, H = 0, t = 0, dev = 0, mag = 0;
    for (std::size_t k = 0; k < nn; ++k) {
        dd::sub_prod(-mu, 0, x.hi[k], x.lo[k], acc[k]);
        const double pk =
            (P[k] + std::abs(mu * x.hi[k])) * (1 + gamma_n(static_cast<double>(n) + 6));
        // the chain: blocked calls over k + 1 and n - 1 - k terms, then one product
        const std::size_t b1 = dd::block_size(k + 1), b2 = dd::block_size(nn - 1 - k);
        const std::size_t calls =
            (k + b1) / b1 + std::max<std::size_t>(1, (nn - 1 - k + b2 - 1) / b2);
        const double h = dd::tree_height(std::max(b1, b2), static_cast<int>(calls), 1);
        H = std::max(H, h);
        const double err = scale * (dd::error_constant(h) * (1 + 4 * kUnitRoundoff) * pk +
                                    4.0 * (static_cast<double>(n) + 3) * kEta);
        double vh = 0, vl = 0;  // the value, normalised (hi and lo largely cancel)
        dd::two_sum(acc[k].hi, acc[k].lo, vh, vl);
        const double v = std::abs(vh) + std::abs(vl) * (1 + kUnitRoundoff) + err;
        sum += v * v;
        xsq += x.hi[k] * x.hi[k];
        t -= x.hi[k] * vh;  // x^T s from the high parts
        dev +=
            std::abs(x.hi[k]) * (1 + kUnitRoundoff) * (std::abs(vl) * (1 + kUnitRoundoff) + err) +
            kUnitRoundoff * std::abs(x.hi[k] * vh);  // the low parts of s and of x
        mag += std::abs(x.hi[k] * vh);
    }
    ResidualBound b;
    if (!std::isfinite(sum) || !(xsq > 0) || !std::isfinite(H) || !std::isfinite(dev)) return b;
    const double gm = gamma_n(static_cast<double>(n) + 10);  // v_k's, their squares' and the sums'
    const double num = iv::up(std::sqrt(iv::up(sum * (1 + gm))));
    const double xsq_lo = iv::down(xsq * (1 - gm) * (1 - 3 * kUnitRoundoff)),
                 xsq_hi = iv::up(xsq * (1 + gm) * (1 + 3 * kUnitRoundoff));  // ||x||^2 in [lo, hi]
    const double den = iv::down(std::sqrt(xsq_lo));                          // <= ||x||
    const double grho = scale * g.rho;
    b.R = iv::up(iv::up(num / den) * (1 + 2 * kUnitRoundoff) + grho) * kBoundSafety;
    // x^T (G~ - mu) x in [t - D, t + D]; |x^T (G - G~) x| <= g.rho ||x||^2
    const double D = iv::up(iv::up(dev * (1 + gm)) + iv::up(gm * mag * (1 + gm)));
    const double a = iv::down(t - D), c = iv::up(t + D);
    b.dq_lo = iv::down(iv::down(a / (a >= 0 ? xsq_hi : xsq_lo)) - grho * kBoundSafety);
    b.dq_hi = iv::up(iv::up(c / (c >= 0 ? xsq_lo : xsq_hi)) + grho * kBoundSafety);
    return b;
}

// lambda_2(G) >= beta = tau - rho from a factorization f of G~ - tau I (+ c w w^T) with its
// residual bound: rho = rho(B_g + B_f), B_f's P part as the rank-one c_L l l^T with l_i >= the
// high parts' row norm of L (the last row's pivot counting |d| when it failed there; plus
// c w_i^2 with the rank-one term). Two cases (proofs §8 "One factorization"):
//  * f failed only at its last pivot d < 0: G - tau I = L^ D L^^T + E, D = diag(1, ..., 1, d),
//    has exactly one negative eigenvalue up to E (Sylvester), so lambda_2(G) - tau >= -rho (Weyl);
//  * f of G~ - tau I + c w w^T succeeded (c >= 0): lambda_min(G - tau I + c w w^T) >= -rho, and a
//    positive semidefinite rank-one term lifts at most one eigenvalue past another
//    (interlacing), so lambda_2(G - tau I) >= -rho.
double second_eigenvalue_bound(const DdGram& g, const Factor& f, double tau, double cl,
                               double scale, double& rho_factor, double& rho) {
    const Eigen::Index n = g.n;
    Eigen::VectorXd l(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        double sq = 0;
        for (Eigen::Index k = 0; k < i; ++k) sq += f.Lh[idx(i, k, n)] * f.Lh[idx(i, k, n)];
        sq +=
            !f.ok && i == n - 1 ? std::abs(f.last_pivot) : f.Lh[idx(i, i, n)] * f.Lh[idx(i, i, n)];
        if (f.w) sq += f.c * (1 + 2 * kUnitRoundoff) * (*f.w)[i] * (*f.w)[i];
        l[i] = std::sqrt(sq) * (1 + gamma_n(static_cast<double>(n) + 6));
    }
    rho_factor = collatz_wielandt(f.Bs, n, cl, l);
    rho = scale * kBoundSafety * iv::up(g.rho + rho_factor);
    return iv::down(tau - rho);
}

// Temple's bound (temple_enclosure) at the vectors of an inverse iteration, step(x) mapping a
// vector to the next (then normalised), from x0: the narrowest enclosure with a positive lower
// end; stops when the enclosure is within 1e-9 relative, stops narrowing by 10 %, or after
// max_steps.
template <class Step>
TempleResult temple_iterate(const DdGram& g, double beta, DdVec x, int max_steps, double scale,
                            Step&& step) {
    const Eigen::Index n = g.n;
    TempleResult t;
    t.beta = beta;
    double prev_r = kInf, prev_w = kInf;
    for (int k = 1; k <= max_steps; ++k) {
        step(x);
        if (!normalise(x)) break;
        const Eigen::Map<const Eigen::VectorXd> xh(x.hi.data(), n);
        const TempleEnclosure e = temple_enclosure(g, x.hi, x.lo, beta, scale);
        t.steps = k;
        if (!t.ok)
            t.mu = e.mu, t.R = e.residual;  // what the note reports when no step gives a bound
        const double width = e.applies && e.lambda_lo > 0 ? e.lambda_hi - e.lambda_lo : kInf;
        if (width < t.hi - t.lo || (!t.ok && width < kInf)) {
            t.ok = true;
            t.lo = e.lambda_lo, t.hi = e.lambda_hi, t.mu = e.mu, t.R = e.residual;
            t.u = xh;
        }
        if (t.ok && t.hi - t.lo <= 1e-9 * t.hi) break;
        if (width < kInf ? !(width < 0.9 * prev_w) : !(e.residual < 0.9 * prev_r)) break;
        prev_r = e.residual, prev_w = width;
    }
    return t;
}
}  // namespace

// After a failure at the last pivot: inverse iteration with the indefinite factor, from x0.
TempleResult temple_from_last_pivot(const DdGram& g, const Factor& f, double tau, double cl,
                                    const Eigen::VectorXd& x0, double scale) {
    const Eigen::Index n = g.n;
    double rho_factor = 0, rho = 0;
    const double beta = second_eigenvalue_bound(g, f, tau, cl, scale, rho_factor, rho);
    DdVec x{std::vector<double>(x0.data(), x0.data() + n),
            std::vector<double>(static_cast<std::size_t>(n), 0.0)};
    TempleResult t =
        temple_iterate(g, beta, std::move(x), 8, scale, [&](DdVec& v) { solve_dd(f, n, v); });
    t.rho_factor = rho_factor, t.rho = rho;
    return t;
}

// After the factorization of A = G~ - tau I + c w w^T succeeded: inverse iteration with G~ - tau I
// through A's factor by Sherman-Morrison, (A - c w w^T)^-1 x = A^-1 x + c (w^T A^-1 x) / (1 -
// c w^T A^-1 w) A^-1 w, in double-double, from w.
TempleResult temple_from_augmented(const DdGram& g, const Factor& f, double tau, double cl,
                                   double scale) {
    const Eigen::Index n = g.n;
    const auto nn = static_cast<std::size_t>(n);
    const Eigen::VectorXd& w = *f.w;
    double rho_factor = 0, rho = 0;
    const double beta = second_eigenvalue_bound(g, f, tau, cl, scale, rho_factor, rho);
    const DdVec w0{std::vector<double>(w.data(), w.data() + n), std::vector<double>(nn, 0.0)};
    DdVec z = w0;
    solve_dd(f, n, z);  // A^-1 w
    const dd::Acc wz = dot_dd(w, z);
    double ch = f.c * wz.hi, cl2 = std::fma(f.c, wz.hi, -ch) + f.c * wz.lo, dh = 0, dl = 0;
    dd::two_sum(1.0, -ch, dh, dl);
    dl -= cl2;  // 1 - c w^T z as a pair (it cancels when tau is just above lambda_min)
    TempleResult t = temple_iterate(g, beta, w0, 40, scale, [&](DdVec& v) {
        solve_dd(f, n, v);
        const dd::Acc wy = dot_dd(w, v);
        double gh = 0, gl = 0;
        dd::divide({f.c * wy.hi, std::fma(f.c, wy.hi, -f.c * wy.hi) + f.c * wy.lo}, dh, dl, gh, gl);
        for (std::size_t i = 0; i < nn; ++i) {  // v += (gh + gl) z
            const double p = gh * z.hi[i],
                         e = std::fma(gh, z.hi[i], -p) + gh * z.lo[i] + gl * z.hi[i];
            double sh = 0, q = 0;
            dd::two_sum(v.hi[i], p, sh, q);
            dd::two_sum(sh, v.lo[i] + q + e, v.hi[i], v.lo[i]);
        }
    });
    t.rho_factor = rho_factor, t.rho = rho;
    return t;
}

}  // namespace attnspec::ddcert

namespace attnspec {

using ddcert::DdVec;
using ddcert::gram_rayleigh;
using ddcert::residual_bound;
using ddcert::ResidualBound;

TempleEnclosure temple_enclosure(const DdGram& g, const std::vector<double>& x_hi,
                                 const std::vector<double>& x_lo, double beta, double bound_scale) {
    const Eigen::Index n = g.n;
    const auto nn = static_cast<std::size_t>(n);
    if (n <= 0 || g.hi.size() != nn * nn || g.lo.size() != nn * nn || x_hi.size() != nn ||
        x_lo.size() != nn)
        fail_data("temple_enclosure: the Gram and the vector's pairs do not match in size");
    DdVec x{x_hi, x_lo};
    for (std::size_t i = 0; i < nn; ++i) dd::two_sum(x_hi[i], x_lo[i], x.hi[i], x.lo[i]);
    TempleEnclosure e;
    const Eigen::Map<const Eigen::VectorXd> xh(x.hi.data(), n);
    if (!xh.allFinite() ||
        !std::isfinite(Eigen::Map<const Eigen::VectorXd>(x.lo.data(), n).sum()) ||
        !(xh.squaredNorm() > 0))
        return e;
    e.mu = gram_rayleigh(g, xh);
    const ResidualBound b = residual_bound(g, x, e.mu, bound_scale);
    e.residual = b.R;
    // the Rayleigh quotient q in [q_lo, q_hi], by |q - mu| <= R or the sharper x^T s bound
    const double q_hi = iv::up(e.mu + std::min(e.residual, b.dq_hi)),
                 q_lo = iv::down(e.mu - std::min(e.residual, -b.dq_lo));
    if (!std::isfinite(e.residual) || !(q_hi < beta)) return e;
    e.applies = true;
    e.lambda_hi = q_hi;
    e.lambda_lo = iv::down(q_lo - iv::up(iv::up(e.residual * e.residual) / iv::down(beta - q_hi)));
    return e;
}

}  // namespace attnspec
