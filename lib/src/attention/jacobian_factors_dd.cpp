// The factors of J~ for the double-double certificate, computed in double-double and rounded once,
// with a proved bound on ||J~ - J||_2 (proofs/spectral_enclosure.md §8, "The factors' error"):
// J the exact weight Jacobian at the head's effective weights, J~ the same formulas on the stored
// factors X, Q^, K^, S^, P^c^. Assumption A-exp: the C library's expl errs by at most 2 ulp of
// long double (tests/cpu/attention/test_jacobian_gram_dd.cpp measures it against a binary128
// series).
//
// Q, K, V: X W + 1 b^T in double-double, rounded (|Q^ - Q| <= u|Q^| + c_D |X||W|).
// L = s Q K^T from the pairs, t = L - max_k L_hi (pairs), e = expl(t_hi)(1 + t_lo) in long double
// split into pairs, row sums sigma in double-double, S^ = fl(e_hi / sigma_hi) and S_lo from the
// residual e - S^ sigma; |S^ + S_lo - e / sigma| is bounded a posteriori from e - (S^ + S_lo) sigma
// in double-double. e = exp(t)(1 + theta) + phi with |theta| <= delta (A-exp and the pairs'
// errors), |phi| <= 2^-1073, so e / sigma = S (1 + theta) / (1 + theta_bar) / (1 + c) with
// theta_bar a convex combination of theta. A = S V and P^c = S (V_c - A_c) from the pairs S^ +
// S_lo and V, P^c rounded once: its error is u |P^c^| plus ~1e-19 (S |V|) terms, so the
// cancellation in V_kc - A_ic (a peaked softmax) costs nothing.
#include "jacobian_factors_dd.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "attnspec/base/dd_accumulate.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/rounding.hpp"

namespace attnspec {

namespace {
using Eigen::Index;
using Eigen::MatrixXd;
constexpr double kEta = std::numeric_limits<double>::denorm_min();
// A-exp: the C library's expl errs by at most 2 ulp of long double, <= 2 LDBL_EPSILON exp(x)
// relative (x86-64: 2^-62; where long double is double, 4u; glibc's measures <= 0.88 ulp on
// [-745, 0]); the product by (1 + t_lo) and the sum in long double round twice more
// (LDBL_EPSILON / 2 each)
constexpr double kLdEps = static_cast<double>(std::numeric_limits<long double>::epsilon());
constexpr double kExpRel = 3 * kLdEps;
// the lemma's constants are multiplied by this for the few-term accumulations and the reading of
// pairs through their high parts (their terms are ~u^2 relative: the factor costs nothing)
constexpr double kGenerous = 4;

double few_constant(int extra) {
    return kGenerous * dd::error_constant(dd::blocked_height(0, extra)) * (1 + 4 * kUnitRoundoff);
}
double dot_constant(Index K, int extra) {
    return kGenerous * dd::error_constant(dd::blocked_height(static_cast<std::size_t>(K), extra)) *
           (1 + 4 * kUnitRoundoff);
}

// An r x c matrix of pairs (column-major like Eigen), value hi + lo with |lo| <= u |hi|.
struct Pairs {
    MatrixXd hi, lo;
};

void store_negated(const dd::Acc& a, double& hi, double& lo) { dd::two_sum(-a.hi, -a.lo, hi, lo); }

// X W + 1 b^T in double-double; err (same shape) bounds |pair - exact| entrywise.
Pairs dd_projection(const RowMatD& X, const MatrixXd& W, const Eigen::VectorXd& b, MatrixXd& err) {
    const Index N = X.rows(), D = X.cols(), d = W.cols();
    Pairs p{MatrixXd(N, d), MatrixXd(N, d)};
    const RowMatD Wt = W.transpose();
    for (Index i = 0; i < N; ++i)
        for (Index c = 0; c < d; ++c) {
            dd::Acc a;
            dd::sub_dot_blocked(X.row(i).data(), nullptr, Wt.row(c).data(), nullptr,
                                static_cast<std::size_t>(D), a);
            if (b.size()) dd::sub_prod(1.0, 0, b[c], 0, a);
            store_negated(a, p.hi(i, c), p.lo(i, c));
        }
    // |X||W| + |b|, rounded up (nonnegative terms: relative error <= gamma_D)
    MatrixXd M = X.cwiseAbs() * W.cwiseAbs();
    if (b.size()) M.rowwise() += b.cwiseAbs().transpose();
    const double c_dot =
        dot_constant(D, b.size() ? 1 : 0) * (1 + gamma_n(static_cast<double>(D) + 4));
    err = M * c_dot;
    err.array() += 8.0 * static_cast<double>(D + 8) * kEta;
    return p;
}
}  // namespace

DdFactors dd_factors(const Head& h) {
    h.validate();
    const Head e = h.effective();
    const Index N = e.X.rows(), D = e.X.cols(), d = e.W_Q.cols();
    DdFactors f;
    f.X = e.X;
    f.s = e.s;
    const double s = e.s, as = std::abs(s);

    MatrixXd eQd, eKd, eVd;  // the pairs' errors (u^2-level)
    const Pairs Q = dd_projection(f.X, e.W_Q, e.b_Q, eQd);
    const Pairs K = dd_projection(f.X, e.W_K, e.b_K, eKd);
    const Pairs V = dd_projection(f.X, e.W_V, e.b_V, eVd);
    f.Q = Q.hi, f.K = K.hi;
    // |Q^ - Q| <= |lo| + eQd <= u |Q^| + eQd
    const MatrixXd EQ = (kUnitRoundoff * f.Q.cwiseAbs() + eQd) * (1 + 2 * kUnitRoundoff);
    const MatrixXd EK = (kUnitRoundoff * f.K.cwiseAbs() + eKd) * (1 + 2 * kUnitRoundoff);
    const MatrixXd EV = eVd;  // V stays in pairs

    // ---- L = s Q K^T and t = L - m_i in pairs; e = exp(t_hi)(1 + t_lo)
    const RowMatD Qh = Q.hi, Ql = Q.lo, Kh = K.hi, Kl = K.lo;
    MatrixXd Lh(N, N), Ll(N, N);
    for (Index i = 0; i < N; ++i)
        for (Index k = 0; k < N; ++k) {
            dd::Acc a;
            dd::sub_dot_blocked(Qh.row(i).data(), Ql.row(i).data(), Kh.row(k).data(),
                                Kl.row(k).data(), static_cast<std::size_t>(d), a);
            double gh = 0, gl = 0;
            store_negated(a, gh, gl);
            dd::Acc b;
            dd::sub_prod(gh, gl, s, 0, b);
            store_negated(b, Lh(i, k), Ll(i, k));
        }
    if (!Lh.allFinite()) fail_data("attention logits overflow (|s Q K^T| beyond the double range)");
    // |L_pair - L| <= |s| [c_d |Q||K|^T + eQd |K|^T + |Q| eKd^T + eQd eKd^T] (1 + c_1): the
    // largest entry of the bound (u^2-level), rounded up
    const MatrixXd aQ = f.Q.cwiseAbs() * (1 + 2 * kUnitRoundoff),
                   aK = f.K.cwiseAbs() * (1 + 2 * kUnitRoundoff);
    const MatrixXd eL = as *
                        ((dot_constant(d, 0) + few_constant(1)) * (aQ * aK.transpose()) +
                         eQd * aK.transpose() + aQ * eKd.transpose() + eQd * eKd.transpose()) *
                        (1 + gamma_n(static_cast<double>(d) + 8));
    double eps_t = eL.maxCoeff() + 16 * kEta;
    MatrixXd E(N, N), El(N, N);
    double tl_max = 0, t_abs_max = 0;
    for (Index i = 0; i < N; ++i) {
        const double m = Lh.row(i).maxCoeff();
        for (Index k = 0; k < N; ++k) {
            double th = 0, b = 0;
            dd::two_sum(Lh(i, k), -m, th, b);
            const double tl = b + Ll(i, k);  // error <= u |b + Ll| <= 2u^2 (|th| + |Lh|)
            eps_t = std::max(eps_t, eL(i, k) + 2 * kUnitRoundoff * kUnitRoundoff *
                                                   (std::abs(th) + std::abs(Lh(i, k))) *
                                                   (1 + 4 * kUnitRoundoff));
            tl_max = std::max(tl_max, std::abs(tl));
            t_abs_max = std::max(t_abs_max, std::abs(th));
            // e = exp(th)(1 + tl) in long double, split into a pair (the split's lo rounds by u)
            const long double x = std::exp(static_cast<long double>(th));
            const long double y = x + x * static_cast<long double>(tl);
            E(i, k) = static_cast<double>(y);
            El(i, k) = static_cast<double>(y - static_cast<long double>(E(i, k)));
        }
    }
    // the series bound below needs |t_lo| + eps < 1e-3 (logits below ~1e13): beyond it the factors
    // are still computed, and the bound is reported as unknown (infinite)
    const bool bounded = tl_max < 1e-3 && eps_t < 1e-3;
    // e = exp(t)(1 + theta) + phi: A-exp; exp(tl + eps) vs 1 + tl (|x| < 1e-3: |e^x - 1 - x| <=
    // 0.51 x^2); the rounding of E tl (u |E tl|); second-order products of the three
    const double delta = (kExpRel + eps_t + 0.51 * (tl_max + eps_t) * (tl_max + eps_t) +
                          2 * kUnitRoundoff * kUnitRoundoff) *
                         (1 + 1e-6);
    const double phi = 2 * kEta;

    // ---- sigma_i = sum_k e_ik in pairs; S = S^ + S_lo with S^ = fl(E / sigma_hi) and S_lo from
    // the residual e - S^ sigma; w = |S^ + S_lo - e / sigma| a posteriori
    const double cN = dot_constant(N, 0), c2 = few_constant(2);
    f.S.resize(N, N);
    MatrixXd ES(N, N), ESd(N, N), Slo(N, N);  // |S^ - S|, |S^ + S_lo - S|, S_lo
    const RowMatD Er = E, Elr = El;
    const std::vector<double> ones(static_cast<std::size_t>(N), 1.0);
    for (Index i = 0; i < N; ++i) {
        dd::Acc a;
        dd::sub_dot_blocked(Er.row(i).data(), Elr.row(i).data(), ones.data(), nullptr,
                            static_cast<std::size_t>(N), a);
        double sh = 0, sl = 0;
        store_negated(a, sh, sl);
        // the row of the max has t = L_lo-level, so sigma >= exp(-eps) ~ 1
        if (!(sh >= 0.5)) fail_data("softmax normalisation below 1/2 (logits not finite)");
        const double sum_abs = Er.row(i).sum() * (1 + gamma_n(static_cast<double>(N) + 4)) * 1.01;
        // sigma_pair = sum e (1 + c) with |c| <= c_sum
        const double c_sum = (cN * sum_abs + 8.0 * static_cast<double>(N + 4) * kEta) / sh * 1.01;
        // Z = sum exp(t) >= (sigma_pair (1 - c_sum) - N phi) / (1 + delta) >= 0.4
        const double Phi = static_cast<double>(N) * phi / 0.4;
        const double num = 2 * delta + Phi + c_sum;
        const double den = 1 - delta - Phi - c_sum;
        const double vs = num / den * (1 + 1e-9);  // |e / sigma - S| <= vs S + phi / sigma
        const double sigma_lo = sh * (1 - 4 * kUnitRoundoff);
        for (Index k = 0; k < N; ++k) {
            const double Sh = E(i, k) / sh;
            f.S(i, k) = Sh;
            dd::Acc r0;
            dd::sub_prod(Sh, 0, sh, sl, r0);             // r0 = -S^ sigma
            dd::sub_prod(E(i, k), El(i, k), -1, 0, r0);  // r0 = e - S^ sigma
            const double Sl = (r0.hi + r0.lo) / sh;
            Slo(i, k) = Sl;
            dd::Acc r;
            dd::sub_prod(Sh, Sl, sh, sl, r);            // r = -(S^ + S_lo) sigma
            dd::sub_prod(E(i, k), El(i, k), -1, 0, r);  // r = e - (S^ + S_lo) sigma
            const double res = std::abs(r.hi + r.lo) * (1 + 2 * kUnitRoundoff) +
                               c2 * (Sh * sh + E(i, k)) * (1 + 4 * kUnitRoundoff) + 16 * kEta;
            const double w = res / sigma_lo * (1 + 4 * kUnitRoundoff);
            const double pe = phi / sigma_lo;
            // S <= (e / sigma + pe) / (1 - vs) <= (S^ + |S_lo| + w + pe) / (1 - vs)
            ESd(i, k) =
                (vs * (Sh + std::abs(Sl) + w + pe) / (1 - vs) + pe + w) * (1 + 8 * kUnitRoundoff);
            ES(i, k) = (ESd(i, k) + std::abs(Sl)) * (1 + 2 * kUnitRoundoff);  // |S^ - S|
        }
    }

    // ---- A = S^ V (pairs), D = V_c - A_c, P^c = S^ D (pairs), rounded
    const RowMatD Sr = f.S, Srl = Slo;
    const RowMatD Vth = V.hi.transpose(), Vtl = V.lo.transpose();  // d x N
    MatrixXd Ah(N, d), Al(N, d);
    for (Index i = 0; i < N; ++i)
        for (Index c = 0; c < d; ++c) {
            dd::Acc a;
            dd::sub_dot_blocked(Sr.row(i).data(), Srl.row(i).data(), Vth.row(c).data(),
                                Vtl.row(c).data(), static_cast<std::size_t>(N), a);
            store_negated(a, Ah(i, c), Al(i, c));
        }
    const MatrixXd aV = V.hi.cwiseAbs() * (1 + 2 * kUnitRoundoff),
                   aA = Ah.cwiseAbs() * (1 + 2 * kUnitRoundoff);
    // |A_pair - A| <= [ES |V| + S^ eV + c_N S^ |V|] rounded up (all nonnegative)
    const double gN = 1 + gamma_n(static_cast<double>(N) + 4);
    // |A_pair - A| <= ESd (|V| + eV) + (S^ + |S_lo|) eV + c_N S^ |V|, rounded up
    const MatrixXd aS = (f.S + Slo.cwiseAbs()) * (1 + 2 * kUnitRoundoff);
    const MatrixXd EA =
        ((ESd * (aV + EV)) + aS * EV + cN * (aS * aV)) * gN * (1 + 4 * kUnitRoundoff);
    f.P.assign(static_cast<std::size_t>(d), MatrixXd(N, N));
    std::vector<MatrixXd> EP(static_cast<std::size_t>(d), MatrixXd(N, N));  // |P^c^ - P^c|
    const double c3 = few_constant(3);
    for (Index c = 0; c < d; ++c) {
        MatrixXd& P = f.P[static_cast<std::size_t>(c)];
        MatrixXd& EPc = EP[static_cast<std::size_t>(c)];
        for (Index k = 0; k < N; ++k)
            for (Index i = 0; i < N; ++i) {
                dd::Acc a;
                dd::sub_prod(V.hi(k, c), V.lo(k, c), -1, 0, a);  // a = V_kc
                dd::sub_prod(Ah(i, c), Al(i, c), 1, 0, a);       // a = V_kc - A_ic
                double Dh = 0, Dl = 0;
                dd::two_sum(a.hi, a.lo, Dh, Dl);
                dd::Acc b;
                dd::sub_prod(Dh, Dl, f.S(i, k), Slo(i, k), b);
                double ph = 0, pl = 0;
                store_negated(b, ph, pl);
                P(i, k) = ph;
                // rounding to double; S^'s error times |V - A| (A's own error inside); S^ (dV -
                // dA); the pairs' rounding
                const double vma = std::abs(Dh) * (1 + 2 * kUnitRoundoff) + EV(k, c) + EA(i, c) +
                                   c3 * (aV(k, c) + aA(i, c));
                EPc(i, k) = (kUnitRoundoff * std::abs(ph) * (1 + 2 * kUnitRoundoff) +
                             ESd(i, k) * vma + aS(i, k) * (EV(k, c) + EA(i, c)) +
                             c3 * aS(i, k) * (aV(k, c) + aA(i, c)) * 2 + 16 * kEta) *
                            (1 + 8 * kUnitRoundoff);
            }
    }

    // ---- ||J~ - J||_2 <= sqrt(||dJ_Q||_F^2 + ||dJ_K||_F^2 + ||dJ_V||_2^2)
    //   dJ_Q row (i, c) = s x_i (x) (P^ K^ - P K)_i,  |P^ K^ - P K| <= EP (|K^| + EK) + |P^| EK
    //   dJ_K row (i, c) = s [(Q^ - Q)_i (x) (P^ X)_i + Q_i (x) ((P^ - P) X)_i]
    //   dJ_V = I_d (x) (S^ - S) X, ||.||_2 <= ||ES |X|||_F
    const double gD = 1 + gamma_n(static_cast<double>(D) + 4), gNN = gN;
    const Eigen::VectorXd xn = f.X.rowwise().norm() * gD;
    const MatrixXd aX = f.X.cwiseAbs();
    const Eigen::VectorXd qn = (f.Q.cwiseAbs() + EQ).rowwise().norm() * (1 + gamma_n(d + 4.0));
    const Eigen::VectorXd eqn = EQ.rowwise().norm() * (1 + gamma_n(d + 4.0));
    double fq = 0, fk = 0;
    for (Index c = 0; c < d; ++c) {
        const MatrixXd& P = f.P[static_cast<std::size_t>(c)];
        const MatrixXd& EPc = EP[static_cast<std::size_t>(c)];
        const MatrixXd aP = P.cwiseAbs();
        const MatrixXd Ez = (EPc * (aK + EK) + aP * EK) * gNN;
        const Eigen::VectorXd ezn = Ez.rowwise().norm() * (1 + gamma_n(d + 4.0));
        fq += (xn.cwiseProduct(ezn)).squaredNorm();
        // ||(P^ X)_i|| <= ||fl(P^ X)_i|| + gamma_N ||(|P^| |X|)_i||
        const MatrixXd PX = P * f.X;
        const MatrixXd aPX = aP * aX;
        const Eigen::VectorXd pxn =
            (PX.rowwise().norm() * gD +
             gamma_n(static_cast<double>(N) + 4) * aPX.rowwise().norm() * gD) *
            (1 + 4 * kUnitRoundoff);
        const Eigen::VectorXd epxn = ((EPc * aX) * gNN).rowwise().norm() * gD;
        fk += (eqn.cwiseProduct(pxn) + qn.cwiseProduct(epxn)).squaredNorm();
    }
    const double fv = ((ES * aX) * gNN).squaredNorm();
    const double gsum = 1 + gamma_n(static_cast<double>(N) * static_cast<double>(d) + 8);
    f.error_q = std::sqrt(s * s * fq * gsum) * (1 + 4 * kUnitRoundoff);
    f.error_k = std::sqrt(s * s * fk * gsum) * (1 + 4 * kUnitRoundoff);
    f.error_v = std::sqrt(fv * gsum) * (1 + 4 * kUnitRoundoff);
    f.error = std::sqrt((f.error_q * f.error_q + f.error_k * f.error_k + f.error_v * f.error_v) *
                        (1 + 8 * kUnitRoundoff)) *
              (1 + 4 * kUnitRoundoff) * kBoundSafety;
    f.exp_relative = delta;
    if (!bounded || !std::isfinite(f.error)) f.error = std::numeric_limits<double>::infinity();
    return f;
}

}  // namespace attnspec
