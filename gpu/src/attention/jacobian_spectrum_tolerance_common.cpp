// The kappa(J) twin's a priori gpu-check tolerance (jacobian_spectrum_tolerance.hpp).
//
// Forming bound. Every entry of G is built along one of three chains (jacobian_spectrum_logic.hpp)
// and, with exact inputs S, V, A, K, Q, X, Fx, s, each multiplication or addition rounds once and
// each length-L dot product (cuBLAS fp64, any order, FMA or not) stays within gamma_L of the sum
// of its absolute products (Higham §3.1). Chains, counting roundings:
//   XX o ZZ: P (2) -> Z = P K (N) -> Z Z^T (x2 + d); XX: s^2 (1), X X^T (D), alpha (1);
//            the product (1) and at most two additions (2):      2N + D + d + 9
//   QQ o T:  Y = P Fx (N + 2) -> Y Y^T (x2 + m), QQ (d + 2), product and additions: 2N + m + d + 9
//   VV:      S X (N) -> (S X)(S X)^T (x2 + D), one addition:     2N + D + 1
// so |fl(G) - G_Fx| <= gamma_K G_abs entrywise, K = 2N + D + d + 9 (m <= D), G_Fx the exact
// assembly from Fx, and G_abs the same formulas on absolute values with
// |P| <= P_abs = S (|V| + |A|). For non-negative matrices the 2-norm is monotone, and Schur's
// bound ||A o B||_2 <= max_i a_ii ||B||_2 (A positive semidefinite) gives
//   ||G_abs||_2 <= s^2 max_i ||x_i||^2 ||P_abs |K|||_F^2 + s^2 max_i ||q_i||^2 ||P_abs |Fx|||_F^2
//                  + ||S |X|||_F^2
// (the XX block pattern 1 1^T (x) |X||X|^T is PSD with diagonal ||x_i||^2; the VV part is block
// diagonal).
// Factor term (D > N only): G_Fx - J J^T = (1 1^T (x) QQ) o (P E P^T), E = Fx Fx^T - X X^T. E is
// formed on the host with |fl E - E| <= gamma_m |Fx||Fx|^T + gamma_D |X||X|^T (+ u |fl E|), so
// ||.||_2 <= s^2 max_i ||q_i||^2 ||P_abs||_F^2 ||E_bar||_F (Schur again, QQ PSD).
// Eigensolver: syevd's backward error sized as the CPU engine sizes it, 4 sqrt(n) u ||fl G||_2,
// with ||fl G||_2 <= sigma_max_hi^2 + forming + factor (assumed, as there; not a theorem).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attnspec/base/rounding.hpp"
#include "jacobian_spectrum_tolerance.hpp"

namespace attnspec::gpu {

using Eigen::MatrixXd;

MatrixXd jacobian_x_factor(const MatrixXd& X) {
    if (X.cols() <= X.rows()) return X;
    Eigen::HouseholderQR<MatrixXd> qr(X.transpose());
    return qr.matrixQR().topRows(X.rows()).triangularView<Eigen::Upper>().transpose();
}

GramBound jacobian_gram_bound(const Head& h, double sigma_max_hi) {
    const Forward<double> f = attention_forward<double>(h);  // the state the twin uploads
    const long N = h.N(), D = h.D(), d = h.d(), n = N * d;
    const MatrixXd Fx = jacobian_x_factor(h.X);
    const long m = Fx.cols();
    const MatrixXd Kabs = f.K.cwiseAbs(), Fabs = Fx.cwiseAbs();
    double z2 = 0, y2 = 0, p2 = 0;  // ||P_abs |K|||_F^2, ||P_abs |Fx|||_F^2, ||P_abs||_F^2
    for (long c = 0; c < d; ++c) {
        // P_abs^c = S diag|V_c| + diag|A_c| S: entry (i, k) = S_ik (|V_kc| + |A_ic|)
        const MatrixXd Pc =
            f.S * f.V.col(c).cwiseAbs().asDiagonal() + f.A.col(c).cwiseAbs().asDiagonal() * f.S;
        z2 += (Pc * Kabs).squaredNorm();
        y2 += (Pc * Fabs).squaredNorm();
        p2 += Pc.squaredNorm();
    }
    const double s2 = h.s * h.s;
    const double x2 = h.X.rowwise().squaredNorm().maxCoeff();
    const double q2 = f.Q.rowwise().squaredNorm().maxCoeff();
    const double v2 = (f.S * h.X.cwiseAbs()).squaredNorm();
    GramBound b;
    b.depth = 2 * N + D + d + 9;
    b.forming = gamma_n(static_cast<double>(b.depth)) * (s2 * x2 * z2 + s2 * q2 * y2 + v2);
    if (m < D) {  // Fx = R^T: Fx Fx^T = X X^T only up to the QR's rounding
        const MatrixXd Xabs = h.X.cwiseAbs();
        const double gm = gamma_n(static_cast<double>(m)), gD = gamma_n(static_cast<double>(D));
        MatrixXd E = (Fx * Fx.transpose() - h.X * h.X.transpose()).cwiseAbs();
        E *= 1 + kUnitRoundoff;
        E += gm * Fabs * Fabs.transpose();
        E += gD * Xabs * Xabs.transpose();
        b.factor = s2 * q2 * p2 * E.norm();
    }
    const double g_norm = sigma_max_hi * sigma_max_hi + b.forming + b.factor;
    b.eigensolver = 4 * std::sqrt(static_cast<double>(n)) * kUnitRoundoff * g_norm;
    b.delta = kGramBoundEvalSlack * (b.forming + b.factor + b.eigensolver);
    return b;
}

double jacobian_sigma_tolerance(double delta, const Interval& cpu) {
    const double root = std::sqrt(delta);
    const double weyl = cpu.lo > 0 ? std::min(root, delta / cpu.lo) : root;
    return weyl + 2 * kUnitRoundoff * std::abs(cpu.hi) + cpu.radius();
}

JacobianCheckTolerance jacobian_check_tolerance(const Head& h, const OperatorSpectrum& cpu) {
    JacobianCheckTolerance t;
    t.gram = jacobian_gram_bound(h, cpu.max.enclosure.hi);
    t.tol_max = jacobian_sigma_tolerance(t.gram.delta, cpu.max.enclosure);
    t.tol_min = jacobian_sigma_tolerance(t.gram.delta, cpu.min.enclosure);
    t.abs = std::max(t.tol_max, t.tol_min);
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "bound (a priori, host): Weyl on delta = %.3g >= ||fl(G) - JJ^T||_2 (forming "
                  "gamma_%ld %.3g, R^T factor %.3g, syevd %.3g, x%g) + CPU half-width; per end "
                  "max %.3g, min %.3g",
                  t.gram.delta, t.gram.depth, t.gram.forming, t.gram.factor, t.gram.eigensolver,
                  kGramBoundEvalSlack, t.tol_max, t.tol_min);
    t.reason = buf;
    return t;
}

}  // namespace attnspec::gpu
