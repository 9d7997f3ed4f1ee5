// Certified lower bound on sigma_min(J) in double-double (proofs/spectral_enclosure.md §8): the
// Gram of the computed rows and a left-looking Cholesky of G - tau I, both accumulated by
// dd_accumulate.hpp with its proved bound; lambda_min(R R^T) >= tau - rho(B), B an entrywise bound
// of the Gram error and of the factor's residual, rho by Collatz-Wielandt.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/base/dd_accumulate.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/interval_ops.hpp"
#include "attnspec/base/parallel.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/spectral/certified.hpp"

namespace attnspec {

namespace {
constexpr double kEta = std::numeric_limits<double>::denorm_min();
constexpr double kInf = std::numeric_limits<double>::infinity();
std::atomic<int> g_row_group{dd::kMaxRows};  // set_factor_row_group

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::size_t idx(Eigen::Index i, Eigen::Index j, Eigen::Index n) {
    return static_cast<std::size_t>(i) * static_cast<std::size_t>(n) + static_cast<std::size_t>(j);
}

// G = R R^T in double-double, lower triangle row-major: |G_ij - (R R^T)_ij| <= c_entry w_i w_j +
// abs_entry (the accumulation lemma with P_ij <= ||R_i|| ||R_j|| <= w_i w_j), so rho(B) <=
// c_entry ||w||^2 + n abs_entry (rank one plus a constant), rounded up.
DdGram dd_gram(const Eigen::MatrixXd& Rt, int threads) {
    DdGram g;
    g.source = "the computed rows of J";
    const Eigen::Index n = Rt.cols();
    const std::size_t m = static_cast<std::size_t>(Rt.rows());
    g.n = n;
    g.hi.assign(static_cast<std::size_t>(n * n), 0.0);
    g.lo.assign(static_cast<std::size_t>(n * n), 0.0);
    // Every entry gets exactly dd::sub_dot_blocked's calls (k-blocks of block_size(m), in
    // order), but tiled so that two tiles of kTile rows x one k-block stay in cache: the same
    // bits as entry-by-entry, ~kTile times less memory traffic.
    constexpr Eigen::Index kTile = 32;
    const std::size_t B = dd::block_size(m);
    const Eigen::Index tiles = (n + kTile - 1) / kTile;
    parallel_for_ordered(static_cast<std::size_t>(tiles), threads, [&](std::size_t ti) {
        const Eigen::Index i0 = static_cast<Eigen::Index>(ti) * kTile;
        const Eigen::Index i1 = std::min(n, i0 + kTile);
        for (std::size_t k0 = 0; k0 < m || k0 == 0; k0 += B) {
            const std::size_t len = m == 0 ? 0 : std::min(B, m - k0);
            for (Eigen::Index j0 = 0; j0 <= i0; j0 += kTile)
                for (Eigen::Index i = i0; i < i1; ++i) {
                    const double* ri = Rt.col(i).data() + k0;
                    const Eigen::Index j1 = std::min(i + 1, j0 + kTile);
                    for (Eigen::Index j = j0; j < j1; ++j) {
                        dd::Acc a{g.hi[idx(i, j, n)], g.lo[idx(i, j, n)]};
                        dd::sub_dot(ri, nullptr, Rt.col(j).data() + k0, nullptr, len, a);
                        g.hi[idx(i, j, n)] = a.hi, g.lo[idx(i, j, n)] = a.lo;
                    }
                }
            if (m == 0) break;
        }
        for (Eigen::Index i = i0; i < i1; ++i)
            for (Eigen::Index j = 0; j <= i; ++j) {
                double h = 0, l = 0;
                dd::two_sum(-g.hi[idx(i, j, n)], -g.lo[idx(i, j, n)], h, l);  // |l| <= u |h|
                g.hi[idx(i, j, n)] = h, g.lo[idx(i, j, n)] = l;
            }
    });
    const Eigen::VectorXd w =
        Rt.colwise().norm().transpose() * (1 + gamma_n(static_cast<double>(m) + 2));
    const double c_entry = dd::error_constant(dd::blocked_height(m, 0)) * (1 + 4 * kUnitRoundoff);
    const double abs_entry = 4.0 * (static_cast<double>(m) + 2) * kEta;
    g.rho = (c_entry * w.squaredNorm() + static_cast<double>(n) * abs_entry) *
            (1 + gamma_n(static_cast<double>(n) + 4));
    return g;
}

struct Factor {
    bool ok = false;
    Eigen::Index failed_column = -1;
    double last_pivot = 0;  // the last column's non-positive pivot, when that is where it failed
    std::vector<double> Lh, Ll, Bs;  // factor (hi, lo) and the entrywise bound, lower, row-major
    // optional rank-one term: the factorization is of G~ - tau I + c w w^T (c >= 0)
    const Eigen::VectorXd* w = nullptr;
    double c = 0;
    // per column j, the lemma's constants of every entry's chain in it (they depend on j only):
    // C(H_j) and gamma_{H_j}, H_j = blocked_height(j, 1 or 2 single terms)
    std::vector<double> colC, colGamma;
};

// The accumulator's start for L_ij: g_ij, minus tau on the diagonal (s0 + t0 = g_jj - tau up to
// init_err).
struct EntryStart {
    double s0 = 0, t0 = 0, init_err = 0;
};

EntryStart entry_start(const DdGram& g, double tau, Eigen::Index i, Eigen::Index j) {
    const std::size_t ij = idx(i, j, g.n);
    EntryStart st{g.hi[ij], g.lo[ij], 0};
    if (i == j) {
        double s = 0, q = 0;
        dd::two_sum(st.s0, -tau, s, q);
        const double t = st.t0 + q;
        st.init_err = kUnitRoundoff * std::abs(t) + kEta;
        st.s0 = s, st.t0 = t;
    }
    return st;
}

// L_ij and its residual bound from a = start - sum_{k < j} L_ik L_jk; false when a diagonal pivot
// is not positive (or not finite).
bool finish_entry(Eigen::Index i, Eigen::Index j, const EntryStart& st, dd::Acc a, Factor& f,
                  Eigen::Index n) {
    const std::size_t ij = idx(i, j, n);
    const double s0 = st.s0, t0 = st.t0, init_err = st.init_err;
    if (f.w) {  // + c w_i w_j on the same chain: (c w_i) exactly as a pair, times w_j
        const double ph = f.c * (*f.w)[i], pl = std::fma(f.c, (*f.w)[i], -ph);
        dd::sub_prod(-ph, -pl, (*f.w)[j], 0, a);
    }
    // the residual A_ij - sum_{k <= j} L_ik L_jk left in a: its value plus the lemma's bound (its
    // P part, sum |L_ik,h L_jk,h| (+ |c w_i w_j|) <= l_i l_j, is added as a rank-one term by the
    // caller)
    const auto record_bound = [&] {
        const auto jj = static_cast<std::size_t>(j);
        double vh = 0, vl = 0;  // the residual's value, normalised (hi and lo largely cancel)
        dd::two_sum(a.hi, a.lo, vh, vl);
        f.Bs[ij] = (std::abs(vh) + std::abs(vl)) * (1 + 2 * kUnitRoundoff) +
                   f.colC[jj] * std::abs(s0) + f.colGamma[jj] * std::abs(t0) +
                   4.0 * (static_cast<double>(j) + 3) * kEta + init_err;
    };
    double lh = 0, ll = 0;
    if (i == j) {
        const double d = a.hi + a.lo;
        if (!(d > 0) || !std::isfinite(d)) {
            if (i == n - 1 && std::isfinite(d)) {
                f.last_pivot = d;
                // G - tau I = L^ diag(1, ..., 1, d) L^^T + residual, L^ with a unit last diagonal
                // entry: the last pivot's residual goes on the same chain (P gains |d|)
                if (d < 0) {
                    f.Lh[ij] = 1, f.Ll[ij] = 0;
                    dd::sub_prod(d, 0, 1, 0, a);
                    record_bound();
                }
            }
            return false;
        }
        const double h = std::sqrt(d);
        const double p = h * h, e = std::fma(h, h, -p);
        const double r = ((a.hi - p) - e) + a.lo;
        dd::two_sum(h, r / (2 * h), lh, ll);
        f.Lh[ij] = lh, f.Ll[ij] = ll;
        dd::sub_prod(lh, ll, lh, ll, a);
    } else {
        const double dh = f.Lh[idx(j, j, n)], dl = f.Ll[idx(j, j, n)];
        const double q1 = (a.hi + a.lo) / dh;
        const double p = q1 * dh, e = std::fma(q1, dh, -p);
        const double r = ((a.hi - p) - e) + (a.lo - q1 * dl);
        dd::two_sum(q1, r / dh, lh, ll);
        f.Lh[ij] = lh, f.Ll[ij] = ll;
        dd::sub_prod(lh, ll, dh, dl, a);
    }
    if (!std::isfinite(lh) || !std::isfinite(ll)) return false;
    record_bound();
    return true;
}

// L_ij and its residual bound; false when a diagonal pivot is not positive (or not finite).
bool factor_entry(const DdGram& g, double tau, Eigen::Index i, Eigen::Index j, Factor& f) {
    const Eigen::Index n = g.n;
    const EntryStart st = entry_start(g, tau, i, j);
    dd::Acc a{st.s0, st.t0};
    dd::sub_dot_blocked(f.Lh.data() + idx(i, 0, n), f.Ll.data() + idx(i, 0, n),
                        f.Lh.data() + idx(j, 0, n), f.Ll.data() + idx(j, 0, n),
                        static_cast<std::size_t>(j), a);
    return finish_entry(i, j, st, a, f, n);
}

// L_ij for up to dd::kMaxRows rows i0 .. i0 + rows - 1 below the diagonal (i > j), their dots in
// one pass over row j: the same bits as factor_entry on each; false if any entry is not finite.
bool factor_rows(const DdGram& g, Eigen::Index i0, int rows, Eigen::Index j, Factor& f) {
    const Eigen::Index n = g.n;
    EntryStart st[dd::kMaxRows];
    dd::Acc a[dd::kMaxRows];
    const double* xh[dd::kMaxRows] = {};
    const double* xl[dd::kMaxRows] = {};
    for (int r = 0; r < rows; ++r) {
        st[r] = entry_start(g, 0, i0 + r, j);
        a[r] = dd::Acc{st[r].s0, st[r].t0};
        xh[r] = f.Lh.data() + idx(i0 + r, 0, n), xl[r] = f.Ll.data() + idx(i0 + r, 0, n);
    }
    dd::sub_dot_blocked_rows(xh, xl, rows, f.Lh.data() + idx(j, 0, n), f.Ll.data() + idx(j, 0, n),
                             static_cast<std::size_t>(j), a);
    bool ok = true;
    for (int r = 0; r < rows; ++r) ok = finish_entry(i0 + r, j, st[r], a[r], f, n) && ok;
    return ok;
}

Factor factor(const DdGram& g, double tau, int threads, const Eigen::VectorXd* w = nullptr,
              double c = 0) {
    const Eigen::Index n = g.n;
    Factor f;
    f.w = w, f.c = c;
    const auto nn = static_cast<std::size_t>(n * n);
    f.Lh.assign(nn, 0.0), f.Ll.assign(nn, 0.0), f.Bs.assign(nn, 0.0);
    f.colC.resize(static_cast<std::size_t>(n)), f.colGamma.resize(static_cast<std::size_t>(n));
    for (Eigen::Index j = 0; j < n; ++j) {
        const double H = dd::blocked_height(static_cast<std::size_t>(j), w ? 2 : 1);
        f.colC[static_cast<std::size_t>(j)] = dd::error_constant(H);
        f.colGamma[static_cast<std::size_t>(j)] = gamma_n(H);
    }
    // Left-looking by blocks of kCols columns: the block's own rows first (column by column),
    // then every row below computes its kCols entries in a row, so its factor row stays in cache
    // across them. Each entry is computed exactly as column by column (same bits).
    constexpr Eigen::Index kCols = 32, kChunk = 16;
    for (Eigen::Index j0 = 0; j0 < n; j0 += kCols) {
        const Eigen::Index j1 = std::min(n, j0 + kCols);
        for (Eigen::Index j = j0; j < j1; ++j)
            for (Eigen::Index i = j; i < j1; ++i)
                if (!factor_entry(g, tau, i, j, f)) {
                    f.failed_column = j;
                    return f;
                }
        const Eigen::Index rows = n - j1;
        if (rows <= 0) break;
        const auto items = static_cast<std::size_t>((rows + kChunk - 1) / kChunk);
        // small blocks on the caller's thread: a thread start costs more than their work
        const int t = static_cast<double>(rows) * static_cast<double>(j1) < 2e5 ? 1 : threads;
        std::vector<char> bad(items, 0);
        parallel_for_ordered(items, t, [&](std::size_t c) {
            const Eigen::Index i0 = j1 + static_cast<Eigen::Index>(c) * kChunk;
            const Eigen::Index i1 = std::min(n, i0 + kChunk);
            // kMaxRows rows at a time share each pass over row j; row by row as before when
            // row_group is 1 (same bits either way)
            const int group =
                std::clamp(g_row_group.load(std::memory_order_relaxed), 1, dd::kMaxRows);
            for (Eigen::Index r0 = i0; r0 < i1; r0 += group) {
                const int nr = static_cast<int>(std::min<Eigen::Index>(group, i1 - r0));
                for (Eigen::Index j = j0; j < j1; ++j)
                    if (!factor_rows(g, r0, nr, j, f)) bad[c] = 1;
            }
        });
        if (std::find(bad.begin(), bad.end(), 1) != bad.end()) {  // non-finite entry
            f.failed_column = j0;
            return f;
        }
    }
    f.ok = true;
    return f;
}

// rho(S + c l l^T) for S = sym(lower Bs) >= 0, by Collatz-Wielandt at x from power steps: for any
// x > 0, rho <= max_i (B x)_i / x_i; the sums are of nonnegative terms (rounding <= gamma_{n+4}).
double collatz_wielandt(const std::vector<double>& Bs, Eigen::Index n, double c,
                        const Eigen::VectorXd& l) {
    Eigen::VectorXd x = Eigen::VectorXd::Ones(n), y(n);
    auto apply = [&](const Eigen::VectorXd& v, Eigen::VectorXd& out) {
        out = (c * l.dot(v)) * l;
        for (Eigen::Index i = 0; i < n; ++i) {
            const double* row = Bs.data() + idx(i, 0, n);
            double acc = 0;
            for (Eigen::Index j = 0; j < i; ++j) {
                acc += row[j] * v[j];
                out[j] += row[j] * v[i];
            }
            out[i] += acc + row[i] * v[i];
        }
    };
    for (int k = 0; k < 24; ++k) {
        apply(x, y);
        const double mx = y.maxCoeff();
        if (!(mx > 0) || !std::isfinite(mx)) break;
        x = (y / mx).cwiseMax(1e-200);
    }
    apply(x, y);
    double r = 0;
    for (Eigen::Index i = 0; i < n; ++i) r = std::max(r, y[i] / x[i]);
    return r * (1 + 2 * gamma_n(2.0 * static_cast<double>(n) + 8));
}

// Rayleigh quotient of u on R R^T with R^T u and its squared norm in double-double (an estimate
// for the shift, not part of the proof).
double dd_rayleigh(const Eigen::MatrixXd& Rt, const Eigen::VectorXd& u) {
    const Eigen::Index m = Rt.rows(), n = Rt.cols();
    std::vector<double> zh(static_cast<std::size_t>(m), 0.0), zl(static_cast<std::size_t>(m), 0.0);
    for (Eigen::Index i = 0; i < n; ++i) {
        const double ui = u[i];
        const double* r = Rt.col(i).data();
        for (Eigen::Index k = 0; k < m; ++k) {
            const double p = ui * r[k], e = std::fma(ui, r[k], -p);
            double s = 0, q = 0;
            dd::two_sum(zh[static_cast<std::size_t>(k)], p, s, q);
            zh[static_cast<std::size_t>(k)] = s;
            zl[static_cast<std::size_t>(k)] += q + e;
        }
    }
    for (std::size_t k = 0; k < zh.size(); ++k) dd::two_sum(zh[k], zl[k], zh[k], zl[k]);
    dd::Acc a;
    dd::sub_dot(zh.data(), zl.data(), zh.data(), zl.data(), zh.size(), a);
    return -(a.hi + a.lo) / u.squaredNorm();
}

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
}
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

// x <- (L L^T)^-1 x with the factor's high parts, in double (a direction for inverse iteration,
// not part of the proof). A factor that failed at its last pivot d < 0 stands for L^ D L^^T with
// L^ unit in its last diagonal entry and D = diag(1, ..., 1, d): G - tau I with one negative
// eigenvalue, which inverse iteration with it finds.
void solve_factor(const Factor& f, Eigen::Index n, Eigen::VectorXd& x) {
    const bool indefinite = !f.ok && f.failed_column == n - 1 && f.last_pivot < 0;
    auto diag = [&](Eigen::Index i) { return indefinite && i == n - 1 ? 1.0 : f.Lh[idx(i, i, n)]; };
    for (Eigen::Index i = 0; i < n; ++i) {  // L y = x
        const double* row = f.Lh.data() + idx(i, 0, n);
        double acc = x[i];
        for (Eigen::Index k = 0; k < i; ++k) acc -= row[k] * x[k];
        x[i] = acc / diag(i);
    }
    if (indefinite) x[n - 1] /= f.last_pivot;
    for (Eigen::Index i = n - 1; i >= 0; --i) {  // L^T z = y
        x[i] /= diag(i);
        const double* row = f.Lh.data() + idx(i, 0, n);
        for (Eigen::Index k = 0; k < i; ++k) x[k] -= row[k] * x[i];
    }
}

// Inverse iteration x <- (G - tau I)^-1 x with a factor until 1/||(G - tau I)^-1 x|| (~ |lambda -
// tau| for the eigenvalue nearest tau) settles to 1e-9: at most 200 steps of n^2 each.
Eigen::VectorXd inverse_iterate(const Factor& f, Eigen::Index n, const Eigen::VectorXd& u_est) {
    Eigen::VectorXd x = u_est.size() == n ? u_est : Eigen::VectorXd::Ones(n);
    x /= x.norm();
    // plus 1e-3 of a fixed pseudo-random direction (Weyl sequence): a start exactly orthogonal
    // to lambda_min's vector (u_est another eigenvector) would never turn towards it
    for (Eigen::Index i = 0; i < n; ++i) {
        const double h = static_cast<double>(i + 1) * 0.6180339887498949;
        x[i] += 1e-3 * (2 * (h - std::floor(h)) - 1) / std::sqrt(static_cast<double>(n));
    }
    x /= x.norm();
    double prev = 0;
    for (int k = 0; k < 200; ++k) {
        solve_factor(f, n, x);
        const double nx = x.norm();
        if (!(nx > 0) || !std::isfinite(nx)) break;
        x /= nx;
        if (k > 2 && std::abs(1 / nx - prev) <= 1e-9 * (1 / nx)) break;
        prev = 1 / nx;
    }
    return x;
}

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

// (zh, zl) ~ (a.hi + a.lo) / (dh + dl) in double-double (not part of the proof).
void dd_divide(const dd::Acc& a, double dh, double dl, double& zh, double& zl) {
    const double q1 = (a.hi + a.lo) / dh;
    const double p = q1 * dh, e = std::fma(q1, dh, -p);
    const double r = ((a.hi - p) - e) + (a.lo - q1 * dl);
    dd::two_sum(q1, r / dh, zh, zl);
}

// x <- (L L^T)^-1 x (a factor that succeeded) or (L^ diag(1, ..., 1, d) L^^T)^-1 x (one that
// failed only at its last pivot d < 0, L^ with a unit last diagonal entry) in double-double (a
// direction, not part of the proof).
void solve_dd(const Factor& f, Eigen::Index n, DdVec& x) {
    for (Eigen::Index i = 0; i < n; ++i) {  // L^ z = x
        dd::Acc a{x.hi[static_cast<std::size_t>(i)], x.lo[static_cast<std::size_t>(i)]};
        dd::sub_dot_blocked(f.Lh.data() + idx(i, 0, n), f.Ll.data() + idx(i, 0, n), x.hi.data(),
                            x.lo.data(), static_cast<std::size_t>(i), a);
        dd_divide(a, f.Lh[idx(i, i, n)], f.Ll[idx(i, i, n)], x.hi[static_cast<std::size_t>(i)],
                  x.lo[static_cast<std::size_t>(i)]);
    }
    const auto last = static_cast<std::size_t>(n - 1);
    if (!f.ok) dd_divide({x.hi[last], x.lo[last]}, f.last_pivot, 0, x.hi[last], x.lo[last]);
    // L^^T y = z, row i of L^^T being column i of L^ below the diagonal
    for_each_column_below(
        f.Lh.data(), f.Ll.data(), n, true,
        [&](Eigen::Index k, const double* ch, const double* cl, std::size_t len) {
            const auto kk = static_cast<std::size_t>(k);
            dd::Acc a{x.hi[kk], x.lo[kk]};
            dd::sub_dot_blocked(ch, cl, x.hi.data() + kk + 1, x.lo.data() + kk + 1, len, a);
            dd_divide(a, f.Lh[idx(k, k, n)], f.Ll[idx(k, k, n)], x.hi[kk], x.lo[kk]);
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

}  // namespace

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

namespace {
struct TempleResult {
    bool ok = false;
    double lo = 0, hi = 0;  // lambda_min(G) in [lo, hi]
    double beta = 0;        // lambda_2(G) >= beta = tau - rho (inertia or interlacing, Weyl)
    double mu = 0, R = 0;   // the vector's Rayleigh quotient on G~ and its residual bound
    double rho = 0;         // rho(B_g + B_f), scaled and with the safety factor
    double rho_factor = 0;  // Collatz-Wielandt of the factor's residual bound
    int steps = 0;          // double-double inverse-iteration steps
    Eigen::VectorXd u;      // the vector's high parts
};

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
        dd_divide({f.c * wy.hi, std::fma(f.c, wy.hi, -f.c * wy.hi) + f.c * wy.lo}, dh, dl, gh, gl);
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

std::string fmt(const char* f, double a, double b = 0, double c = 0, double d = 0) {
    char buf[600];
    std::snprintf(buf, sizeof buf, f, a, b, c, d);
    return buf;
}
}  // namespace

void set_factor_row_group(int rows) {
    g_row_group.store(std::clamp(rows, 1, dd::kMaxRows), std::memory_order_relaxed);
}

double dd_certify_bytes(Eigen::Index n, Eigen::Index m) {
    const double nd = static_cast<double>(n), md = static_cast<double>(m);
    return 8.0 * (nd * md + 5 * nd * nd + 2 * md);
}

double dd_certify_updates(Eigen::Index n, Eigen::Index m) {
    const double nd = static_cast<double>(n), md = static_cast<double>(m);
    return nd * nd * md / 2 + nd * nd * nd / 6;
}

namespace {
const char* const kMethod =
    "double-double Gram and Cholesky of G - tau I (left-looking, residual of every entry on its "
    "accumulation chain), lambda_min >= tau - rho(B) (Collatz-Wielandt); kernel ";

// The factorizations and their bound on a double-double Gram (both entry points). `rayleigh` gives
// the shift's reference for a vector; r carries the method, kernel and Gram time already.
DdCertifiedMin certify_core(const DdGram& g, double lambda_est, const Eigen::VectorXd& u_est,
                            const DdCertifyOptions& opt, int threads,
                            const std::function<double(const Eigen::VectorXd&)>& rayleigh,
                            DdCertifiedMin r, std::chrono::steady_clock::time_point t0,
                            bool gram_by_caller) {
    const Eigen::Index n = g.n;
    r.lambda_est = lambda_est;
    if (u_est.size() == n && u_est.squaredNorm() > 0) {
        const double rq = rayleigh(u_est);
        if (rq > 0 && std::isfinite(rq)) r.lambda_est = rq;
    }
    if (gram_by_caller) r.seconds_gram = seconds_since(t0);  // the Rayleigh quotient's time
    if (!(r.lambda_est > 0)) {
        r.notes.emplace_back("certify (double-double): the Rayleigh quotient is not positive");
        return r;
    }
    const double rho_gram = g.rho;
    double hmax = 0;  // the largest tree height over the factor's columns (not monotone in j)
    for (Eigen::Index j = 0; j < n; ++j)
        hmax = std::max(hmax, dd::blocked_height(static_cast<std::size_t>(j), 1));
    const double cl =
        dd::error_constant(hmax) * (1 + 4 * kUnitRoundoff);  // its P part: c_L l_i l_j
    double margin = opt.first_margin;
    const auto tc = std::chrono::steady_clock::now();
    const auto set_temple = [&](const TempleResult& tr, double tau) {
        r.certified = true;
        r.bound = "temple";
        r.tau = tau, r.rho = tr.rho, r.rho_gram = rho_gram, r.rho_factor = tr.rho_factor;
        r.lambda_lo = tr.lo;
        r.sigma_lo = std::max(0.0, iv::down(iv::down(std::sqrt(tr.lo)) - opt.product_abs_error));
        r.lambda_hi = tr.hi;
        r.sigma_hi = iv::up(iv::up(std::sqrt(tr.hi)) + opt.product_abs_error);
        r.lambda_est = tr.mu;
        r.u = tr.u;
        r.failed_column = -1;
        r.notes.push_back(
            fmt("certify (double-double): Temple: lambda_min in [%.12g, %.12g], sigma_min in "
                "[%.12g, %.12g]",
                r.lambda_lo, r.lambda_hi, r.sigma_lo, r.sigma_hi));
    };
    // First, with the estimate's vector w: G~ - tau I + c w w^T at tau = lambda_est (1 +
    // opt.augmented_margin), just above lambda_min, and c = lambda_est. Its success proves
    // lambda_2 >= tau - rho, and Temple's bound at the inverse-iteration vector encloses lambda_min
    // with one factorization, however far down the factor the plain one would have failed.
    bool done = false;
    if (opt.temple && opt.augmented_margin > 0 && u_est.size() == n && u_est.allFinite() &&
        u_est.squaredNorm() > 0 && r.attempts < opt.max_attempts) {
        ++r.attempts;
        const Eigen::VectorXd w = u_est / u_est.norm();
        const double tau = r.lambda_est * (1 + opt.augmented_margin), c = r.lambda_est;
        double hmax2 = 0;  // the chains carry one more product (c w_i w_j)
        for (Eigen::Index j = 0; j < n; ++j)
            hmax2 = std::max(hmax2, dd::blocked_height(static_cast<std::size_t>(j), 2));
        const auto tf = std::chrono::steady_clock::now();
        const Factor f = factor(g, tau, threads, &w, c);
        const double factor_seconds = seconds_since(tf);
        if (f.ok) {
            const auto tt = std::chrono::steady_clock::now();
            const TempleResult tr = temple_from_augmented(
                g, f, tau, dd::error_constant(hmax2) * (1 + 4 * kUnitRoundoff), opt.bound_scale);
            char buf[700];
            std::snprintf(
                buf, sizeof buf,
                "certify (double-double): G - tau I + c w w^T factored at tau = lambda_est (1 + "
                "%.3g), c = lambda_est, w the estimate's vector (%.2f s): lambda_2 >= tau - rho = "
                "%.12g (rho = %.3g: Gram %.3g, factor %.3g); Temple at %d double-double "
                "inverse-iteration step(s) (Sherman-Morrison): Rayleigh quotient %.12g, residual "
                "<= %.3g%s (%.2f s)",
                opt.augmented_margin, factor_seconds, tr.beta, tr.rho, rho_gram, tr.rho_factor,
                tr.steps, tr.mu, tr.R,
                tr.ok ? "" : ": no bound (the Rayleigh quotient is not below lambda_2's bound)",
                seconds_since(tt));
            r.notes.emplace_back(buf);
            if (tr.ok) {
                set_temple(tr, tau);
                done = true;
            }
        } else {
            // before its last pivot: at least two eigenvalues of G - tau I + c w w^T are below
            // ~0, so lambda_2 < tau or w is far from lambda_min's vector; either way lambda_est is
            // well above lambda_min and the plain shifts start at the coarse margin 0.5
            if (f.failed_column < n - 1) margin = std::max(margin, 0.5);
            r.notes.push_back(
                fmt("certify (double-double): G - tau I + c w w^T at tau = lambda_est (1 + %.3g) "
                    "not positive definite (pivot %.0f; the estimate's vector is not close to "
                    "lambda_min's, or lambda_2 is within the margin): the plain factorizations "
                    "follow, from the margin %.3g",
                    opt.augmented_margin, static_cast<double>(f.failed_column), margin));
        }
        if (!done && opt.notice && r.attempts < opt.max_attempts)
            opt.notice(
                fmt("certify (double-double): factorization 1 (with the estimate's vector) "
                    "gave no bound; one more, about %.0f s",
                    factor_seconds));
    }
    // one inverse-iteration refinement of the estimate: after a failure at the last pivot, or
    // after a success at a coarse shift
    bool refined = false;
    while (!done && r.attempts < opt.max_attempts) {
        ++r.attempts;
        const double tau = r.lambda_est * (1 - margin);
        const auto tf = std::chrono::steady_clock::now();
        const Factor f = factor(g, tau, threads);
        const double factor_seconds = seconds_since(tf);
        // one line per further factorization: why, and how long it should take
        const auto announce = [&](const std::string& why) {
            if (!opt.notice || r.attempts >= opt.max_attempts) return;
            char buf[300];
            std::snprintf(buf, sizeof buf,
                          "certify (double-double): factorization %d %s; one more, about %.0f s",
                          r.attempts, why.c_str(), factor_seconds);
            opt.notice(buf);
        };
        if (!f.ok) {
            r.failed_column = f.failed_column;
            const bool last_pivot = f.failed_column == n - 1 && f.last_pivot < 0;
            // failed at the last pivot (G - tau I has one negative eigenvalue, tau just above
            // lambda_min): inverse iteration with this indefinite factor finds lambda_min's vector
            Eigen::VectorXd x;
            if (last_pivot) x = inverse_iterate(f, n, r.u.size() == n ? r.u : u_est);
            if (last_pivot && opt.temple && x.allFinite()) {
                // ... and with the inertia it proves, Temple's bound certifies lambda_min at once
                const auto tt = std::chrono::steady_clock::now();
                const TempleResult tr = temple_from_last_pivot(g, f, tau, cl, x, opt.bound_scale);
                char buf[700];
                std::snprintf(
                    buf, sizeof buf,
                    "certify (double-double): only the last pivot failed (%.3g) at tau = "
                    "lambda_est (1 - %.3g): lambda_2 >= tau - rho = %.12g (one negative "
                    "eigenvalue; rho = %.3g: Gram %.3g, factor %.3g); Temple at %d double-double "
                    "inverse-iteration step(s): Rayleigh quotient %.12g, residual <= %.3g%s "
                    "(%.2f s)",
                    f.last_pivot, margin, tr.beta, tr.rho, rho_gram, tr.rho_factor, tr.steps, tr.mu,
                    tr.R,
                    tr.ok ? ""
                          : ": no bound (the Rayleigh quotient is not below lambda_2's bound "
                            "by enough)",
                    seconds_since(tt));
                r.notes.emplace_back(buf);
                if (tr.ok && (!r.certified || tr.lo > r.lambda_lo)) {
                    set_temple(tr, tau);
                    break;
                }
            }
            r.notes.push_back(
                fmt("certify (double-double): pivot %.0f of the factor of G - tau I "
                    "not positive at tau = lambda_est (1 - %.3g): lowering tau",
                    static_cast<double>(f.failed_column), margin));
            if (r.certified) break;  // the refined shift failed: keep the coarse certificate
            r.tau = tau;
            // ... and the next shift goes just below its Rayleigh quotient instead of down the
            // ladder
            if (!refined && last_pivot) {
                const double rq = x.allFinite() ? rayleigh(x) : -1;
                refined = rq > 0 && rq < r.lambda_est;  // spent only when it refined
                r.notes.push_back(
                    fmt("certify (double-double): only the last pivot failed (%.3g); inverse "
                        "iteration with that factor: Rayleigh quotient %.12g (was %.12g)",
                        f.last_pivot, rq, r.lambda_est));
                if (rq > 0 && rq < r.lambda_est) {
                    r.u = x;
                    r.lambda_est = rq;
                    margin = opt.first_margin;
                    announce("failed at its last pivot (the shift was just above lambda_min)");
                    continue;
                }
            }
            if (!(margin > 0) || margin > 0.97) break;
            margin = margin < 1e-6  ? margin * 25
                     : margin < 0.5 ? std::min(0.5, margin * 100)
                                    : 1 - (1 - margin) / 5;  // 0.5, 0.9, 0.98
            announce("failed at pivot " + std::to_string(f.failed_column) +
                     " (the shift was above lambda_min): lowering it");
            continue;
        }
        r.failed_column = -1;
        Eigen::VectorXd l(n);
        for (Eigen::Index i = 0; i < n; ++i) {
            double sq = 0;
            for (Eigen::Index k = 0; k <= i; ++k) sq += f.Lh[idx(i, k, n)] * f.Lh[idx(i, k, n)];
            l[i] = std::sqrt(sq) * (1 + gamma_n(static_cast<double>(n) + 4));
        }
        const double rho_factor = collatz_wielandt(f.Bs, n, cl, l);
        const double rho = opt.bound_scale * kBoundSafety * iv::up(rho_gram + rho_factor);
        const double lo = iv::down(tau - rho);
        if (!(lo > 0)) {
            r.notes.push_back(
                fmt("certify (double-double): rounding bound rho = %.3g exceeds "
                    "tau = %.3g: out of reach",
                    rho, tau));
            if (!r.certified) r.tau = tau, r.rho = rho, r.rho_gram = rho_gram;
            break;
        }
        if (!r.certified || lo > r.lambda_lo) {
            r.certified = true;
            r.bound = "cholesky";
            r.tau = tau, r.rho = rho, r.rho_gram = rho_gram, r.rho_factor = rho_factor;
            r.lambda_lo = lo;
            r.sigma_lo = std::max(0.0, iv::down(iv::down(std::sqrt(lo)) - opt.product_abs_error));
        }
        // a coarse shift (the estimate was well above lambda_min): inverse iteration with this
        // factor, then one more attempt just below the new Rayleigh quotient
        if (refined || margin <= opt.first_margin || r.attempts >= opt.max_attempts) break;
        refined = true;
        const Eigen::VectorXd x = inverse_iterate(f, n, u_est);
        const double rq = x.allFinite() ? rayleigh(x) : -1;
        r.notes.push_back(
            fmt("certify (double-double): certified at the coarse shift lambda_est "
                "(1 - %.3g); inverse iteration with its factor: Rayleigh quotient "
                "%.12g (was %.12g)",
                margin, rq, r.lambda_est));
        if (!(rq > 0 && rq < r.lambda_est)) break;
        r.u = x;
        r.lambda_est = rq;
        margin = opt.first_margin;
        announce("certified at a coarse shift; inverse iteration refined the estimate");
    }
    r.seconds_chol = seconds_since(tc);
    if (r.certified) r.failed_column = -1;
    r.seconds = seconds_since(t0);
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "certify (double-double): %s after %d factorization(s), tau = %.12g "
                  "(lambda_est %.12g), rho = %.3g (Gram %.3g, factor %.3g) = %.3g tau; %s "
                  "%.2f s, factorizations %.2f s",
                  r.certified ? "certified" : "no certificate", r.attempts, r.tau, r.lambda_est,
                  r.rho, r.rho_gram, r.rho_factor, r.rho / r.tau,
                  gram_by_caller ? "Rayleigh quotient" : "Gram", r.seconds_gram, r.seconds_chol);
    r.notes.emplace_back(buf);
    return r;
}
}  // namespace

DdCertifiedMin certify_lambda_min_dd(const Eigen::MatrixXd& Rt, double lambda_est,
                                     const Eigen::VectorXd& u_est, const DdCertifyOptions& opt) {
    const auto t0 = std::chrono::steady_clock::now();
    const Eigen::Index n = Rt.cols(), m = Rt.rows();
    if (n == 0 || m == 0) fail_data("certify (double-double): empty rows");
    if (!Rt.allFinite()) fail_data("certify (double-double): rows of J are not finite");
    check_allocation(8.0 * 5 * static_cast<double>(n) * static_cast<double>(n), opt.max_bytes,
                     "certify (double-double): Gram, factor and bound (" + std::to_string(n) +
                         " x " + std::to_string(n) + ")",
                     "max_bytes");
    const int threads = opt.threads > 0 ? opt.threads : std::max(1, blas_threads());
    DdCertifiedMin r;
    r.kernel = dd::kernel_name();
    r.method = kMethod + r.kernel;
    if (!(lambda_est > 0) && u_est.size() != n) {
        r.notes.emplace_back("certify (double-double): no positive estimate of lambda_min");
        return r;
    }
    const DdGram g = dd_gram(Rt, threads);
    r.seconds_gram = seconds_since(t0);
    return certify_core(
        g, lambda_est, u_est, opt, threads,
        [&Rt](const Eigen::VectorXd& x) { return dd_rayleigh(Rt, x); }, std::move(r), t0, false);
}

DdCertifiedMin certify_gram_dd(const DdGram& g, double lambda_est, const Eigen::VectorXd& u_est,
                               const DdCertifyOptions& opt) {
    const auto t0 = std::chrono::steady_clock::now();
    const Eigen::Index n = g.n;
    const auto nn = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
    if (n <= 0) fail_data("certify (double-double): empty Gram");
    if (g.hi.size() != nn || g.lo.size() != nn)
        fail_data("certify (double-double): the Gram's pairs are not " + std::to_string(n) + " x " +
                  std::to_string(n));
    if (!(g.rho >= 0) || !std::isfinite(g.rho))
        fail_data("certify (double-double): the Gram's error bound is not a finite number >= 0");
    for (Eigen::Index i = 0; i < n; ++i)
        for (Eigen::Index j = 0; j <= i; ++j)
            if (!std::isfinite(g.hi[idx(i, j, n)]) || !std::isfinite(g.lo[idx(i, j, n)]))
                fail_data("certify (double-double): the Gram is not finite");
    check_allocation(8.0 * 3 * static_cast<double>(n) * static_cast<double>(n), opt.max_bytes,
                     "certify (double-double): factor and bound (" + std::to_string(n) + " x " +
                         std::to_string(n) + ")",
                     "max_bytes");
    const int threads = opt.threads > 0 ? opt.threads : std::max(1, blas_threads());
    DdCertifiedMin r;
    r.kernel = dd::kernel_name();
    r.method = kMethod + r.kernel + "; Gram from " + (g.source.empty() ? "the caller" : g.source);
    if (!(lambda_est > 0) && u_est.size() != n) {
        r.notes.emplace_back("certify (double-double): no positive estimate of lambda_min");
        return r;
    }
    r = certify_core(
        g, lambda_est, u_est, opt, threads,
        [&g](const Eigen::VectorXd& x) { return gram_rayleigh(g, x); }, std::move(r), t0, true);
    // the upper end: the final vector's Rayleigh quotient (its shift's reference), proved
    const Eigen::VectorXd& uf = r.u.size() == n ? r.u : u_est;
    if (r.certified && uf.size() == n && uf.allFinite() && uf.squaredNorm() > 0) {
        r.lambda_hi =
            std::fmin(r.lambda_hi, gram_rayleigh_upper(g, uf));  // fmin skips an unset NaN
        r.sigma_hi = iv::up(iv::up(std::sqrt(r.lambda_hi)) + opt.product_abs_error);
        r.notes.push_back(
            fmt("certify (double-double): lambda_min <= %.12g (the vector's Rayleigh quotient on "
                "the Gram, its rounding and rho), sigma_min <= %.12g",
                r.lambda_hi, r.sigma_hi));
    }
    return r;
}

DdCertifiedMin certified_sigma_min_dd(const LinearOperator& J, double sigma_est,
                                      const Eigen::VectorXd& u_est, const DdCertifyOptions& opt) {
    const auto t0 = std::chrono::steady_clock::now();
    const Eigen::Index n = J.rows(), m = J.cols();
    if (n == 0 || m == 0) fail_data("certified_sigma_min_dd: empty operator");
    if (n > m) fail_data("certified_sigma_min_dd: J must be wide (rows <= cols); pass J^T");
    check_allocation(dd_certify_bytes(n, m), opt.max_bytes,
                     "certify (double-double): rows of J, Gram, factor and bound (" +
                         std::to_string(n) + " x " + std::to_string(m) + ")",
                     "max_bytes");
    Eigen::MatrixXd Rt(m, n);
    {
        Eigen::VectorXd e = Eigen::VectorXd::Zero(n);
        for (Eigen::Index i = 0; i < n; ++i) {
            e[i] = 1;
            J.apply_transpose(e.data(), Rt.col(i).data());
            e[i] = 0;
        }
    }
    const double t_rows = seconds_since(t0);
    DdCertifiedMin r = certify_lambda_min_dd(Rt, sigma_est * sigma_est, u_est, opt);
    r.seconds_rows = t_rows;
    r.seconds += t_rows;
    return r;
}

}  // namespace attnspec
