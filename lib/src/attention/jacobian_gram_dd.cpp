// J~ J~^T in double-double from a head's factors (computed in double-double and rounded once by
// dd_factors, with a proved ||J~ - J||), never forming J
// (proofs/spectral_enclosure.md §8, "Gram from the factors"): the structure of
// jacobian_gram_outer,
//   G[(i,c),(j,c')] = s^2 XX_ij ZZ_ij + s^2 QQ_ij YY_ij + [c = c'] VV_ij,
//   XX = X X^T, QQ = Q Q^T, ZZ = P^c (K K^T) P^c'^T, YY = P^c (X X^T) P^c'^T, VV = S (X X^T) S^T,
// every sum accumulated by dd::sub_dot_blocked (dd_accumulate.hpp) with the accumulation lemma's
// bound, propagated to an entrywise bound c (wQ_r wQ_r' + wK_r wK_r' + [c = c'] v_i v_j) + abs.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "attnspec/attention/jacobian.hpp"
#include "attnspec/base/dd_accumulate.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/parallel.hpp"
#include "attnspec/base/rounding.hpp"
#include "jacobian_factors_dd.hpp"

namespace attnspec {

namespace {
using Eigen::Index;
using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
constexpr double kEta = std::numeric_limits<double>::denorm_min();

// The lemma's constant for one sub_dot_blocked over K terms (its hi-part product sums P taken as
// they come), with the (1 + 4u) of reading a normalised pair's value through its high part.
double dot_constant(Index K) {
    return dd::error_constant(dd::blocked_height(static_cast<std::size_t>(K), 0)) *
           (1 + 4 * kUnitRoundoff);
}

// An r x r matrix of double-double pairs, row-major (both triangles).
struct PairMat {
    Index r = 0;
    std::vector<double> hi, lo;
    explicit PairMat(Index rows)
        : r(rows),
          hi(static_cast<std::size_t>(rows * rows)),
          lo(static_cast<std::size_t>(rows * rows)) {}
    std::size_t at(Index i, Index j) const { return static_cast<std::size_t>(i * r + j); }
};

// acc (a fresh accumulator after subtractions) as the pair of -acc, normalised: |lo| <= u |hi|.
void store_negated(const dd::Acc& a, double& hi, double& lo) { dd::two_sum(-a.hi, -a.lo, hi, lo); }

// A A^T of the rows of A (r x k, row-major) in double-double.
PairMat row_gram(const RowMat& A) {
    PairMat g(A.rows());
    const auto k = static_cast<std::size_t>(A.cols());
    for (Index i = 0; i < A.rows(); ++i)
        for (Index j = 0; j <= i; ++j) {
            dd::Acc a;
            dd::sub_dot_blocked(A.row(i).data(), nullptr, A.row(j).data(), nullptr, k, a);
            store_negated(a, g.hi[g.at(i, j)], g.lo[g.at(i, j)]);
            g.hi[g.at(j, i)] = g.hi[g.at(i, j)], g.lo[g.at(j, i)] = g.lo[g.at(i, j)];
        }
    return g;
}

// U = M Y for M (r x r, row-major, double) and Y (symmetric pairs): U_il = sum_k Y_lk M_ik, row l
// of Y standing for its column.
PairMat left_product(const RowMat& M, const PairMat& Y) {
    PairMat U(Y.r);
    const auto r = static_cast<std::size_t>(Y.r);
    for (Index i = 0; i < Y.r; ++i)
        for (Index l = 0; l < Y.r; ++l) {
            dd::Acc a;
            dd::sub_dot_blocked(Y.hi.data() + Y.at(l, 0), Y.lo.data() + Y.at(l, 0), M.row(i).data(),
                                nullptr, r, a);
            store_negated(a, U.hi[U.at(i, l)], U.lo[U.at(i, l)]);
        }
    return U;
}

// (U M'^T)_ij = sum_l U_il M'_jl, as a pair.
void right_entry(const PairMat& U, Index i, const RowMat& Mp, Index j, double& hi, double& lo) {
    dd::Acc a;
    dd::sub_dot_blocked(U.hi.data() + U.at(i, 0), U.lo.data() + U.at(i, 0), Mp.row(j).data(),
                        nullptr, static_cast<std::size_t>(U.r), a);
    store_negated(a, hi, lo);
}

// (s2h + s2l) Y entrywise, as pairs (one sub_prod each).
PairMat scaled(double s2h, double s2l, const PairMat& Y) {
    PairMat out(Y.r);
    for (std::size_t k = 0; k < Y.hi.size(); ++k) {
        dd::Acc a;
        dd::sub_prod(s2h, s2l, Y.hi[k], Y.lo[k], a);
        store_negated(a, out.hi[k], out.lo[k]);
    }
    return out;
}

// Row norms of A, rounded up.
Eigen::VectorXd row_norms_up(const RowMat& A) {
    return A.rowwise().norm() * (1 + gamma_n(static_cast<double>(A.cols()) + 2));
}

// (|M| x)_i for x >= 0, rounded up.
Eigen::VectorXd abs_times_up(const RowMat& M, const Eigen::VectorXd& x) {
    return (M.cwiseAbs() * x) * (1 + gamma_n(static_cast<double>(M.cols()) + 2));
}
}  // namespace

JacobianFactors jacobian_factors(const Head& h) {
    DdFactors d = dd_factors(h);
    JacobianFactors f;
    f.X = d.X, f.Q = std::move(d.Q), f.K = std::move(d.K), f.S = std::move(d.S), f.s = d.s;
    f.P = std::move(d.P);
    f.error = d.error, f.error_q = d.error_q, f.error_k = d.error_k, f.error_v = d.error_v;
    return f;
}

double jacobian_gram_dd_bytes(Index N, Index d) {
    const double n = static_cast<double>(N) * static_cast<double>(d);
    const double NN = static_cast<double>(N) * static_cast<double>(N);
    return 16.0 * n * n + 8.0 * NN * (5.0 * static_cast<double>(d) + 12);
}

double jacobian_gram_dd_updates(Index N, Index D, Index d) {
    const double n = static_cast<double>(N) * static_cast<double>(d);
    const double Nd = static_cast<double>(N), Dd = static_cast<double>(D);
    return n * n * Nd + Nd * Nd * (Dd + 2 * static_cast<double>(d)) / 2 +
           2 * Nd * Nd * Nd * (static_cast<double>(d) + 1);
}

DdGram jacobian_gram_dd(const Head& h, int threads, double max_bytes) {
    h.validate();
    const Index N = h.N(), D = h.D(), d = h.d(), n = N * d;
    check_allocation(
        jacobian_gram_dd_bytes(N, d), max_bytes,
        "J J^T in double-double (" + std::to_string(n) + "x" + std::to_string(n) + " pairs)",
        "max_bytes");
    threads = std::max(1, threads);
    DdFactors fac = dd_factors(h);
    const RowMat X = fac.X, K = fac.K, Q = fac.Q, S = fac.S;
    std::vector<RowMat> P(static_cast<std::size_t>(d));
    for (Index c = 0; c < d; ++c)
        P[static_cast<std::size_t>(c)] = fac.P[static_cast<std::size_t>(c)];
    fac.P.clear();

    // the N x N factors in double-double
    const PairMat XX = row_gram(X), KK = row_gram(K), QQ = row_gram(Q);
    const double s = fac.s, s2h = s * s, s2l = std::fma(s, s, -s2h);  // s^2 = s2h + s2l exactly
    const PairMat sXX = scaled(s2h, s2l, XX), sQQ = scaled(s2h, s2l, QQ);
    const PairMat VV = [&] {
        const PairMat U = left_product(S, XX);
        PairMat v(N);
        for (Index i = 0; i < N; ++i)
            for (Index j = 0; j < N; ++j)
                right_entry(U, i, S, j, v.hi[v.at(i, j)], v.lo[v.at(i, j)]);
        return v;
    }();
    std::vector<PairMat> UZ, UY;  // P^c KK and P^c XX
    UZ.reserve(static_cast<std::size_t>(d)), UY.reserve(static_cast<std::size_t>(d));
    for (Index c = 0; c < d; ++c) {
        UZ.push_back(left_product(P[static_cast<std::size_t>(c)], KK));
        UY.push_back(left_product(P[static_cast<std::size_t>(c)], XX));
    }

    DdGram g;
    g.n = n;
    g.source =
        "the head's factors in double-double, rounded once (J~: J with those Q, K, S, P^c; "
        "structure of jacobian_gram_outer)";
    g.factor_error =
        std::isfinite(fac.error) ? fac.error : std::numeric_limits<double>::quiet_NaN();
    g.hi.assign(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), 0.0);
    g.lo.assign(g.hi.size(), 0.0);
    // items: the blocks (c, c'), c >= c', of the lower triangle; each entry its own accumulators
    std::vector<std::pair<Index, Index>> blocks;
    for (Index c = 0; c < d; ++c)
        for (Index cp = 0; cp <= c; ++cp) blocks.emplace_back(c, cp);
    parallel_for_ordered(blocks.size(), threads, [&](std::size_t b) {
        const Index c = blocks[b].first, cp = blocks[b].second;
        const auto ci = static_cast<std::size_t>(c), cpi = static_cast<std::size_t>(cp);
        for (Index i = 0; i < N; ++i) {
            const Index r = c * N + i;
            const Index jmax = c == cp ? i : N - 1;
            for (Index j = 0; j <= jmax; ++j) {
                double zh = 0, zl = 0, yh = 0, yl = 0;
                right_entry(UZ[ci], i, P[cpi], j, zh, zl);
                right_entry(UY[ci], i, P[cpi], j, yh, yl);
                dd::Acc a;
                if (c == cp) a.hi = -VV.hi[VV.at(i, j)], a.lo = -VV.lo[VV.at(i, j)];
                dd::sub_prod(sXX.hi[sXX.at(i, j)], sXX.lo[sXX.at(i, j)], zh, zl, a);
                dd::sub_prod(sQQ.hi[sQQ.at(i, j)], sQQ.lo[sQQ.at(i, j)], yh, yl, a);
                const std::size_t at = static_cast<std::size_t>(r) * static_cast<std::size_t>(n) +
                                       static_cast<std::size_t>(cp * N + j);
                store_negated(a, g.hi[at], g.lo[at]);
            }
        }
    });

    // The bound (proofs §8): |G~ - G(J~)| <= c_QK (wQ wQ^T + wK wK^T) + c_V (I_d (x) v v^T) + abs
    // entrywise, so rho <= c_QK (||wQ||^2 + ||wK||^2) + c_V ||v||^2 + n abs.
    const Eigen::VectorXd x = row_norms_up(X), k = row_norms_up(K), q = row_norms_up(Q);
    const Eigen::VectorXd v = abs_times_up(S, x);
    Eigen::VectorXd wQ(n), wK(n);
    double mp = S.cwiseAbs().rowwise().sum().maxCoeff(), amax = 0, bmax = 0;
    for (Index c = 0; c < d; ++c) {
        const RowMat& Pc = P[static_cast<std::size_t>(c)];
        mp = std::max(mp, Pc.cwiseAbs().rowwise().sum().maxCoeff());
        const Eigen::VectorXd a = abs_times_up(Pc, k), bb = abs_times_up(Pc, x);
        amax = std::max(amax, a.maxCoeff()), bmax = std::max(bmax, bb.maxCoeff());
        wQ.segment(c * N, N) = std::abs(s) * x.cwiseProduct(a);
        wK.segment(c * N, N) = std::abs(s) * q.cwiseProduct(bb);
    }
    const double C1 = dd::error_constant(dd::blocked_height(0, 1)) * (1 + 4 * kUnitRoundoff);
    const double CF = dd::error_constant(dd::blocked_height(0, 2)) * (1 + 4 * kUnitRoundoff);
    const double CD = dot_constant(D), Cd = dot_constant(d), CN = dot_constant(N);
    constexpr double kSecondOrder = 1 + 1e-6;  // products of the constants, (1 + u) factors
    const double c_qk = (C1 + CD + Cd + 2 * CN + CF) * kSecondOrder;
    const double c_v = (2 * CN + CD + CF + 7 * kUnitRoundoff * kUnitRoundoff) * kSecondOrder;
    // gradual underflow: at most 4 (K + 2) eta per accumulation, carried through at most two
    // products of magnitudes, each below lambda
    const double xm = x.maxCoeff(), km = k.maxCoeff(), qm = q.maxCoeff();
    const double mag = (1 + mp) * (1 + mp) * (1 + s2h) * (1 + xm * xm + km * km + qm * qm) *
                       (1 + amax * amax + bmax * bmax + v.maxCoeff() * v.maxCoeff());
    const double abs_entry = 16.0 * static_cast<double>(D + 2 * N + 16) * kEta * mag;
    const double nd = static_cast<double>(n);
    g.rho =
        (c_qk * (wQ.squaredNorm() + wK.squaredNorm()) + c_v * v.squaredNorm() + nd * abs_entry) *
        (1 + gamma_n(nd + 8)) * kBoundSafety;
    return g;
}

}  // namespace attnspec
