// Collatz–Wielandt-certified power iteration for non-negative operators (proofs/infsa_neumann.md,
// "Perron certificate"): for B >= 0 and x > 0, min_i (Bx)_i/x_i <= rho(B) <= max_i (Bx)_i/x_i.
#include "attnspec/infsa/perron.hpp"

#include <cmath>
#include <limits>

#include "attnspec/base/errors.hpp"
#include "infsa_internal.hpp"

namespace attnspec {

using detail::gamma_n;
using detail::kUnit;

DenseNonnegOp::DenseNonnegOp(const Eigen::MatrixXd& B) : B_(B) {
    if (B.rows() != B.cols() || B.size() == 0)
        fail_data("perron: the matrix must be square and non-empty");
    if (!B.allFinite()) fail_data("perron: the matrix contains NaN or Inf");
    if (B.minCoeff() < 0)
        fail_data("perron: the matrix has a negative entry (Collatz–Wielandt needs B >= 0)");
}

void DenseNonnegOp::apply(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z,
                          Eigen::VectorXd& z_lo, Eigen::VectorXd& z_hi) const {
    if (transpose)
        z.noalias() = B_.transpose() * x;
    else
        z.noalias() = B_ * x;
    // Non-negative terms: |fl(z) - z| <= gamma_n z, so z in [fl/(1+g), fl/(1-g)].
    const double g = gamma_n(double(B_.rows()) + 1);
    z_lo = z * (1 - g);
    z_hi = z * (1 + 2 * g);
}

PerronResult perron(const NonnegOperator& op, const PerronOptions& opt) {
    const Eigen::Index n = op.size();
    PerronResult r;
    r.left = opt.left;
    const double sqrt_n = std::sqrt(double(n));
    Eigen::VectorXd x = Eigen::VectorXd::Constant(n, 1.0 / sqrt_n);
    Eigen::VectorXd z, zlo, zhi, x_prev, c_hi;  // c_hi >= B^T 1 (from the first pass)
    double lo = 0, hi = std::numeric_limits<double>::infinity();
    double d_prev = -1, best_width = hi;
    int stalled = 0;
    for (int it = 1; it <= opt.max_iter; ++it) {
        op.apply(x, opt.left, z, zlo, zhi);
        r.iterations = it;
        if (it == 1) c_hi = zhi * (sqrt_n * (1 + 4 * kUnit));
        // Lower CW bound: B^T x >= s x with x >= 0, x != 0 gives rho >= s; indices with x_i = 0
        // (zero columns, which the iterate drops exactly) hold trivially.
        double l = std::numeric_limits<double>::infinity();
        for (Eigen::Index i = 0; i < n; ++i)
            if (x[i] > 0) l = std::min(l, zlo[i] / x[i]);
        // Upper CW bound needs y > 0: y = x + eta 1 gives B^T y <= zhi + eta c_hi for any eta > 0
        // (no extra pass); the best eta of a small grid is kept.
        const double xmax = x.maxCoeff();
        double h = std::numeric_limits<double>::infinity();
        for (double eta_rel = 1e-16; eta_rel <= 1e-2; eta_rel *= 10) {
            const double eta = eta_rel * xmax;
            double hh = 0;
            for (Eigen::Index i = 0; i < n; ++i)
                hh = std::max(hh, (zhi[i] + eta * c_hi[i]) * (1 + 2 * kUnit) / (x[i] + eta));
            h = std::min(h, hh);
        }
        if (std::isfinite(l)) lo = std::max(lo, l * (1 - 2 * kUnit));  // division rounding, outward
        hi = std::min(hi, h * (1 + 2 * kUnit));
        r.rho = x.dot(z) / x.squaredNorm();
        r.vec = x / x.norm();
        r.residual = (z - r.rho * x).norm() / x.norm();
        const double nz = z.norm();
        if (nz == 0) {  // B^T x = 0 for the positive first iterate: B = 0, rho = 0
            lo = 0;
            hi = std::min(hi, 0.0);
            r.converged = true;
            break;
        }
        if (hi - lo <= opt.rel_width * hi) {
            r.converged = true;
            break;
        }
        // Stop when the enclosure has not narrowed by 1% in 25 passes (e.g. reducible B whose
        // lower bound cannot close); `converged` stays false.
        if (hi - lo < 0.99 * best_width)
            best_width = hi - lo, stalled = 0;
        else if (++stalled >= 25)
            break;
        x_prev = x;
        x = z / nz;
        const double dk = (x - x_prev).norm();
        if (d_prev > 1e-12 && dk > 0) r.gap_ratio = std::min(0.999999, dk / d_prev);
        d_prev = dk;
    }
    r.rho_enc = {lo, hi};
    const double gap = r.rho * (1 - r.gap_ratio);
    r.vec_error = gap > 0 ? r.residual / gap : std::numeric_limits<double>::infinity();
    return r;
}

PerronResult perron(const Eigen::MatrixXd& B, const PerronOptions& opt) {
    DenseNonnegOp op(B);
    return perron(op, opt);
}

namespace {

// B^T B applied as two certified non-negative products (enclosures chained outward).
class GramOp final : public NonnegOperator {
  public:
    explicit GramOp(const Eigen::MatrixXd& B) : B_(B), op_(B) {}
    Eigen::Index size() const override { return B_.cols(); }
    void apply(const Eigen::VectorXd& x, bool, Eigen::VectorXd& z, Eigen::VectorXd& z_lo,
               Eigen::VectorXd& z_hi) const override {
        Eigen::VectorXd y, ylo, yhi, t1, t2;
        op_.apply(x, false, y, ylo, yhi);
        op_.apply(y, true, z, t1, t2);
        Eigen::VectorXd a, b;
        op_.apply(yhi, true, a, t1, z_hi);  // B^T y_exact <= B^T y_hi <= its upper enclosure
        op_.apply(ylo, true, b, z_lo, t2);
    }

  private:
    const Eigen::MatrixXd& B_;
    DenseNonnegOp op_;
};

}  // namespace

Interval norm2_enclosure(const Eigen::MatrixXd& B, double rel_width) {
    GramOp g(B);
    PerronOptions o;
    o.rel_width = rel_width;
    o.max_iter = 2000;
    const PerronResult p = perron(g, o);
    Interval s{std::sqrt(p.rho_enc.lo) * (1 - 2 * kUnit),
               std::sqrt(p.rho_enc.hi) * (1 + 2 * kUnit)};
    // Always also ||B||_2 <= ||B||_F (rounded up): keeps the bound finite if the iteration stalls.
    const double f = B.norm() * (1 + gamma_n(double(B.size()) + 2));
    s.hi = std::min(s.hi, f);
    return s;
}

AffinityNorms affinity_norms(const Eigen::MatrixXd& A_hat) {
    AffinityNorms n;
    n.frob = A_hat.norm();
    n.norm2 = norm2_enclosure(A_hat);
    n.left = perron(A_hat);
    return n;
}

}  // namespace attnspec
