// Per-triplet enclosures (proofs/spectral_enclosure.md §2-§3): compensated (Dot2) evaluation of
// the Rayleigh quotient and residual of the Jordan-Wielandt matrix H = [0 M; M^T 0] at x = [u; v],
// then Kato-Temple once the Weyl intervals of the other singular values separate sigma_i.
#include <algorithm>
#include <cmath>
#include <limits>

#include "attnspec/base/interval_ops.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/spectral/svd.hpp"

namespace attnspec {

namespace {

// Error-free transformations (Knuth TwoSum, FMA-based TwoProd).
inline void two_sum(double a, double b, double& s, double& e) {
    s = a + b;
    const double z = s - a;
    e = (a - (s - z)) + (b - z);
}

// Column-wise Dot2 of y = M x - shift * w (Ogita, Rump, Oishi 2005, Alg. 5.3 per row):
// |y_k - exact_k| <= u |exact_k| + gamma_{n+1}^2 absrow_k, absrow = |M||x| + |shift||w|.
void dot2_matvec(const Eigen::Ref<const Eigen::MatrixXd>& M, bool transpose,
                 const Eigen::VectorXd& x, double shift, const Eigen::VectorXd& w,
                 Eigen::VectorXd& y, Eigen::VectorXd& absrow) {
    const Eigen::Index m = M.rows(), n = M.cols();
    if (!transpose) {
        Eigen::VectorXd s = Eigen::VectorXd::Zero(m), c = Eigen::VectorXd::Zero(m);
        absrow = Eigen::VectorXd::Zero(m);
        for (Eigen::Index j = 0; j <= n; ++j) {
            for (Eigen::Index k = 0; k < m; ++k) {
                const double a = j < n ? M(k, j) : w[k];
                const double b = j < n ? x[j] : -shift;
                const double p = a * b, ep = std::fma(a, b, -p);
                double sn, es;
                two_sum(s[k], p, sn, es);
                s[k] = sn;
                c[k] += es + ep;
                absrow[k] += std::fabs(p);
            }
        }
        y = s + c;
    } else {
        y.resize(n);
        absrow.resize(n);
        for (Eigen::Index j = 0; j < n; ++j) {
            double s = 0, c = 0, ab = 0;
            for (Eigen::Index k = 0; k <= m; ++k) {
                const double a = k < m ? M(k, j) : w[j];
                const double b = k < m ? x[k] : -shift;
                const double p = a * b, ep = std::fma(a, b, -p);
                double sn, es;
                two_sum(s, p, sn, es);
                s = sn;
                c += es + ep;
                ab += std::fabs(p);
            }
            y[j] = s + c;
            absrow[j] = ab;
        }
    }
}

double dot2(const Eigen::VectorXd& a, const Eigen::VectorXd& b, double& abs_sum) {
    double s = 0, c = 0;
    abs_sum = 0;
    for (Eigen::Index i = 0; i < a.size(); ++i) {
        const double p = a[i] * b[i], ep = std::fma(a[i], b[i], -p);
        double sn, es;
        two_sum(s, p, sn, es);
        s = sn;
        c += es + ep;
        abs_sum += std::fabs(p);
    }
    return s + c;
}

long double norm_ld(const Eigen::VectorXd& a) {
    long double s = 0;
    for (Eigen::Index i = 0; i < a.size(); ++i) s += static_cast<long double>(a[i]) * a[i];
    return std::sqrt(s);
}

}  // namespace

TripletBound triplet_bound(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::VectorXd& u,
                           const Eigen::VectorXd& v) {
    const Eigen::Index m = M.rows(), n = M.cols();
    const double k = static_cast<double>(std::max(m, n) + 1);
    const double g = gamma_n(k), g2 = g * g;  // gamma_{k}^2 of Dot2
    TripletBound t;
    // theta = 2 u^T M v / (u^T u + v^T v): Rayleigh quotient of H at x = [u; v].
    Eigen::VectorXd Mv, A, zero_m = Eigen::VectorXd::Zero(m), zero_n = Eigen::VectorXd::Zero(n);
    dot2_matvec(M, false, v, 0.0, zero_m, Mv, A);
    double s_num, s_uu, s_vv;
    const double num = dot2(u, Mv, s_num);
    const double uu = dot2(u, u, s_uu), vv = dot2(v, v, s_vv);
    const double xx = uu + vv;
    t.theta = 2 * num / xx;
    // |num - u^T M v| <= u|num| + g2 s_num + sum |u_k| (u |Mv_k| + g2 A_k)
    const double nu = static_cast<double>(norm_ld(u));
    const double num_err = 2 * kUnitRoundoff * std::fabs(num) + g2 * s_num +
                           nu * (kUnitRoundoff * static_cast<double>(norm_ld(Mv)) +
                                 g2 * static_cast<double>(norm_ld(A)));
    // uu, vv, the sum and the quotient: each a relative u (Dot2 gives u + g2 on positive sums).
    t.theta_err =
        iv::up(2 * num_err / xx * (1 + 6 * kUnitRoundoff) + 6 * kUnitRoundoff * std::fabs(t.theta));
    // Residuals at the computed theta (RQ minimises the residual, so this bounds the exact one).
    Eigen::VectorXd r1, r2, A1, A2;
    dot2_matvec(M, false, v, t.theta, u, r1, A1);
    dot2_matvec(M, true, u, t.theta, v, r2, A2);
    t.res_u = static_cast<double>(norm_ld(r1));
    t.res_v = static_cast<double>(norm_ld(r2));
    const double r1b = t.res_u * (1 + 2 * kUnitRoundoff) + g2 * static_cast<double>(norm_ld(A1));
    const double r2b = t.res_v * (1 + 2 * kUnitRoundoff) + g2 * static_cast<double>(norm_ld(A2));
    t.rho = iv::up(std::sqrt((r1b * r1b + r2b * r2b) / xx) * (1 + 4 * kUnitRoundoff));
    return t;
}

Interval temple_enclosure(const TripletBound& t, double alpha, double beta) {
    const double th_lo = t.theta - t.theta_err, th_hi = t.theta + t.theta_err;
    if (!(th_lo > alpha && th_hi < beta)) return {1.0, 0.0};  // empty
    const double r2 = t.rho * t.rho;
    const double lo = std::isinf(beta) ? th_lo : th_lo - r2 / iv::down(beta - th_hi);
    const double hi = th_hi + r2 / iv::down(th_lo - alpha);
    return {iv::down(lo * (1 - 4 * kUnitRoundoff)), iv::up(hi * (1 + 4 * kUnitRoundoff))};
}

// Tighten [lo, hi] of the refined indices. sigma_i is identified when its Weyl interval is
// separated from all others: then it is the only eigenvalue of H in (alpha, beta).
void refine_enclosures(const Eigen::Ref<const Eigen::MatrixXd>& M, SvdResult& out,
                       const SvdOptions& opt) {
    const Eigen::Index r = out.sigma.size();
    std::vector<Eigen::Index> idx;
    if (r <= opt.refine_all_upto) {
        for (Eigen::Index i = 0; i < r; ++i) idx.push_back(i);
    } else {
        const double t = static_cast<double>(std::max(M.rows(), M.cols())) *
                         std::numeric_limits<double>::epsilon();
        Eigen::Index rank = 0;
        for (Eigen::Index i = 0; i < r; ++i)
            if (out.sigma[i] > t * out.sigma[0]) rank = i + 1;
        for (Eigen::Index i : {Eigen::Index(0), r - 1, rank - 1, rank})
            if (i >= 0 && i < r && std::find(idx.begin(), idx.end(), i) == idx.end())
                idx.push_back(i);
    }
    const Eigen::VectorXd wlo = out.lo, whi = out.hi;  // Weyl intervals: the identification basis
    // suffix max of hi below i and prefix min of lo above i
    Eigen::VectorXd below(r + 1), above(r + 1);
    below[r] = 0.0;  // eigenvalues of H not of the form +sigma_k are <= 0
    for (Eigen::Index i = r - 1; i >= 0; --i) below[i] = std::max(below[i + 1], whi[i]);
    above[0] = std::numeric_limits<double>::infinity();
    for (Eigen::Index i = 0; i < r; ++i) above[i + 1] = std::min(above[i], wlo[i]);
    for (Eigen::Index i : idx) {
        const double alpha = below[i + 1], beta = above[i];
        const TripletBound t = triplet_bound(M, out.U.col(i), out.V.col(i));
        out.triplet_residual[i] = t.rho;
        Interval enc{wlo[i], whi[i]};
        if (i == 0) enc.lo = std::max(enc.lo, iv::down(t.theta - t.theta_err));  // sigma_1 >= RQ
        const bool separated = wlo[i] > alpha && whi[i] < beta;
        if (separated) {
            const Interval jw = iv::around(t.theta, t.rho);
            if (jw.lo > alpha && jw.hi < beta) {
                enc = iv::intersect(enc, jw);
                out.basis[i] = "jordan-wielandt";
            }
            const Interval tk = temple_enclosure(t, alpha, beta);
            if (tk.lo <= tk.hi) {
                enc = iv::intersect(enc, tk);
                out.basis[i] = "temple";
            }
        }
        if (enc.lo > enc.hi) continue;  // cannot happen when the arguments hold; keep Weyl
        out.lo[i] = std::max(0.0, enc.lo);
        out.hi[i] = enc.hi;
        if (out.basis[i] != "weyl")
            out.sigma[i] = std::min(std::max(t.theta, out.lo[i]), out.hi[i]);
        out.radius[i] = iv::up(std::max(out.sigma[i] - out.lo[i], out.hi[i] - out.sigma[i]));
    }
}

}  // namespace attnspec
