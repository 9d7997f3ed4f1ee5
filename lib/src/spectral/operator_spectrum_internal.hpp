// Private to the operator-spectrum sources: what Gram preparation (gram.cpp: assembly, error
// estimate, full / extremal eigensolve) and refinement (refine.cpp: power steps, PCG inverse
// iteration, Temple enclosure) hand to operator_spectrum.cpp (orchestration, rank and kappa).
#pragma once
#include <lapacke.h>

#include <Eigen/Dense>
#include <algorithm>
#include <string>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/spectral/operator_spectrum.hpp"

namespace attnspec::opspec {

using Vec = Eigen::VectorXd;

// (G - shift I)^{-1} by LAPACK dpotrf/dpotrs; the factor is kept for the PCG preconditioner.
// The Spectra shift-invert operator interface (rows, cols, set_shift, perform_op).
class CholShiftOp {
  public:
    using Scalar = double;
    explicit CholShiftOp(const Eigen::MatrixXd& G) : G_(G) {}
    Eigen::Index rows() const { return G_.rows(); }
    Eigen::Index cols() const { return G_.rows(); }
    bool factor(double shift) {
        if (ok_ && shift == shift_) return true;
        L_ = G_;
        L_.diagonal().array() -= shift;
        const lapack_int n = static_cast<lapack_int>(L_.rows());
        // the _work entries skip LAPACKE's NaN scan of the matrix (G is finite by construction;
        // the scan of the n^2/2 triangle cost as much as the solve itself: 13% of a MiniLM-size
        // kappa(J) in perf); same LAPACK routine, same bits
        ok_ = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', n, L_.data(), n) == 0;
        shift_ = shift;
        return ok_;
    }
    void set_shift(double s) {
        if (!factor(s)) fail_data("shift-invert: G - shift I is not positive definite");
    }
    // X <- (G - shift I)^-1 X (dpotrs with X.cols() right-hand sides), after a successful factor.
    void solve_block(Eigen::MatrixXd& X) const {
        const lapack_int n = static_cast<lapack_int>(L_.rows());
        LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', n, static_cast<lapack_int>(X.cols()), L_.data(), n,
                       X.data(), n);
    }
    void perform_op(const double* x, double* y) const {
        const lapack_int n = static_cast<lapack_int>(L_.rows());
        std::copy(x, x + n, y);
        LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', n, 1, L_.data(), n, y, n);
    }

  private:
    const Eigen::MatrixXd& G_;
    Eigen::MatrixXd L_;
    double shift_ = 0;
    bool ok_ = false;
};

// J J^T x by two matrix-free products.
inline Vec JJt(const LinearOperator& J, const Vec& x) { return J * J.transpose_times(x); }

// ---- gram.cpp -----------------------------------------------------------------------------------

// G = J J^T from n products J (J^T e_i), symmetrised. O(n products).
Eigen::MatrixXd assemble_gram(const LinearOperator& J);
// A few power steps on E = G - J J^T: an estimate (a lower bound) of ||E||_2. Draws from rng.
double estimate_gram_error(const LinearOperator& J, const Eigen::MatrixXd& G, Rng& rng);
// Factors G + tau I with the smallest tau = 4 sqrt(n) u lambda_max_est 16^k that succeeds (above
// the possible negative eigenvalues of fl(G), never zero) and returns tau. DataError when tau
// passes lambda_max_est (G is not J J^T).
double factor_shifted(CholShiftOp& chol, double lambda_max_est);

struct GramEigs {            // Ritz pairs at both ends of G's spectrum
    Vec top_vals, bot_vals;  // descending / ascending
    Eigen::MatrixXd top_vecs, bot_vecs;
    Vec top_res, bot_res;                   // Ritz residuals ||G y - lambda y||, y unit
    Eigen::Index top_ops = 0, bot_ops = 0;  // operator applications (Lanczos cost)
    double gram_est = 0;                    // estimate_gram_error, drawn right after v0
};
// A1's delta: 10 x the estimate of ||fl(G) - J J^T|| + the eigensolver's 4 sqrt(n) u lambda_max.
double gram_error_bound(double gram_est, Eigen::Index n, double lambda_max);
// Spectra Lanczos (largest) and shift-invert at -tau on `chol` (smallest); dense for n <= 8. The
// Ritz values are then recomputed as Rayleigh quotients with their residuals (ritz_check), so
// each is within its residual of an eigenvalue of G whatever the solver's tolerance was.
// Progress (optional): stage "Lanczos", in operator applications of both ends.
GramEigs extremal_eigs(const LinearOperator& J, const Eigen::MatrixXd& G, CholShiftOp& chol,
                       double tau, Rng& rng, std::vector<std::string>& notes,
                       const EngineProgressFn& progress = {});
// All eigenvalues of G, ascending (LAPACK dsyevd, values only). DataError on LAPACK failure.
Vec gram_eigenvalues(const Eigen::MatrixXd& G);

// ---- refine.cpp ---------------------------------------------------------------------------------

// Triplet from a left vector u0 (normalised): sigma = ||J^T u||, v = J^T u / sigma, residuals.
void make_triplet(const LinearOperator& J, const Vec& u0, RefinedTriplet& t);
// t.rho: the Jordan-Wielandt residual bound of t's residuals, each plus the product pad.
void set_rho(RefinedTriplet& t, double pad);
// Interval of sigma_k from the Gram eigenvalue lambda (Weyl on G with error delta).
Interval gram_interval(double lambda, double delta);
// sigma_max: power steps from the top Ritz vector (at most `steps`, until the residual is below
// 8 pe sigma), then its enclosure. Returns the product-rounding pad both ends use.
double refine_max(const LinearOperator& J, const GramEigs& d, double gram_error, double pe,
                  int steps, RefinedTriplet& t);
// sigma_min: inverse iteration from the bottom Ritz vector, each solve by PCG preconditioned with
// the Gram factor (while it lowers the residual), then its enclosure.
void refine_min(const LinearOperator& J, const CholShiftOp& chol, const GramEigs& d,
                double gram_error, double pe, double smax, double pad, int steps, int pcg_max_iter,
                RefinedTriplet& t);

// ---- certify/policy.cpp -------------------------------------------------------------------------

// opt.certify (CertifyOptions): replaces s.min's lower end by a certified bound (auto: when it is 0
// or wider than 1e-6 relative and the work fits max_bytes and auto's flop cap; always): the plain
// shift test of spectral/certify/plain.hpp minus pad (the product error, A2) when it can work, else
// the deflated certificate on G with chol (the factor of G + tau I) for its bottom pairs (rate: the
// measured Cholesky flop/s, for its time estimate). Notes what it did.
void certify_min(const LinearOperator& J, const Eigen::MatrixXd& G, const CholShiftOp& chol,
                 const LargeSvdOptions& opt, double pad, double rate, OperatorSpectrum& s);

}  // namespace attnspec::opspec
