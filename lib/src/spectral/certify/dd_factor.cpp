// The double-double certificate's Gram of the computed rows and its left-looking Cholesky of
// G - tau I (proofs/spectral_enclosure.md §8), both accumulated by base/dd_accumulate.hpp with its
// proved bound; the factor's residual bound, its spectral radius (Collatz-Wielandt) and inverse
// iteration with the factor.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <vector>

#include "attnspec/base/dd_accumulate.hpp"
#include "attnspec/base/parallel.hpp"
#include "attnspec/base/rounding.hpp"
#include "dd_internal.hpp"

namespace attnspec::ddcert {

namespace {
std::atomic<int> g_row_group{dd::kMaxRows};  // set_factor_row_group

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
        dd::sqrt(a, lh, ll);
        f.Lh[ij] = lh, f.Ll[ij] = ll;
        dd::sub_prod(lh, ll, lh, ll, a);
    } else {
        const double dh = f.Lh[idx(j, j, n)], dl = f.Ll[idx(j, j, n)];
        dd::divide(a, dh, dl, lh, ll);
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
}  // namespace

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

Factor factor(const DdGram& g, double tau, int threads, const Eigen::VectorXd* w, double c) {
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

namespace {
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

}  // namespace

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

}  // namespace attnspec::ddcert

namespace attnspec {

void set_factor_row_group(int rows) {
    ddcert::g_row_group.store(std::clamp(rows, 1, dd::kMaxRows), std::memory_order_relaxed);
}

}  // namespace attnspec
