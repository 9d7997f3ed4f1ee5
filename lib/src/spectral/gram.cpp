// Gram preparation for operator_spectrum (proofs/spectral_enclosure.md §4): G = J J^T assembled
// from products, an estimate of its forming error, the shifted Cholesky factor, and eigenvalues
// of G (all by dsyevd, or the extremes by Spectra Lanczos and shift-invert).
#include <Spectra/MatOp/DenseSymMatProd.h>
#include <Spectra/SymEigsShiftSolver.h>
#include <Spectra/SymEigsSolver.h>

#include <cmath>

#include "attnspec/base/rounding.hpp"
#include "engine_progress.hpp"
#include "operator_spectrum_internal.hpp"

namespace attnspec::opspec {

Eigen::MatrixXd assemble_gram(const LinearOperator& J) {
    const Eigen::Index n = J.rows();
    Eigen::MatrixXd G(n, n);
    Vec e = Vec::Zero(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        e[i] = 1;
        G.col(i) = JJt(J, e);
        e[i] = 0;
    }
    return 0.5 * (G + G.transpose());
}

double estimate_gram_error(const LinearOperator& J, const Eigen::MatrixXd& G, Rng& rng) {
    Vec x(G.rows());
    for (Eigen::Index i = 0; i < x.size(); ++i) x[i] = rng.normal();
    x.normalize();
    double e = 0;
    for (int k = 0; k < 4; ++k) {
        Vec y = G.selfadjointView<Eigen::Lower>() * x - JJt(J, x);
        e = y.norm();
        if (e == 0) break;
        x = y / e;
    }
    return e;
}

double factor_shifted(CholShiftOp& chol, double lambda_max_est) {
    const Eigen::Index n = chol.rows();
    double tau = 4 * std::sqrt(static_cast<double>(n)) * kUnitRoundoff * lambda_max_est;
    while (!chol.factor(-tau)) {
        tau *= 16;
        if (tau > lambda_max_est)
            fail_data("operator_spectrum: G is not positive semidefinite (not J J^T)");
    }
    return tau;
}

namespace {

// Rayleigh quotients and residuals of the Ritz pairs in double: each lambda is within res of an
// eigenvalue of G (symmetric Bauer-Fike), whatever the solver's tolerance was.
void ritz_check(const Eigen::MatrixXd& G, Vec& vals, Eigen::MatrixXd& vecs, Vec& res) {
    res.resize(vals.size());
    for (Eigen::Index k = 0; k < vals.size(); ++k) {
        vecs.col(k).normalize();
        const Vec g = G.selfadjointView<Eigen::Lower>() * vecs.col(k);
        vals[k] = vecs.col(k).dot(g);
        res[k] = (g - vals[k] * vecs.col(k)).norm();
    }
}

// A Spectra operator that counts its applications into a progress stage (Lanczos products of
// both ends share one count).
template <class Op>
class Counted {
  public:
    using Scalar = double;
    Counted(Op& op, StageProgress& prog, long& count) : op_(op), prog_(prog), count_(count) {}
    Eigen::Index rows() const { return op_.rows(); }
    Eigen::Index cols() const { return op_.cols(); }
    void set_shift(double s) { op_.set_shift(s); }
    void perform_op(const double* x, double* y) const {
        op_.perform_op(x, y);
        prog_.update(++count_, 16);
    }

  private:
    Op& op_;
    StageProgress& prog_;
    long& count_;
};

// Expected Lanczos applications per end (nev = 2, ncv = 16, tol 1e-7): measured 17 to 45 on
// attention Jacobians up to ViT-B size; the total grows when a run needs more.
constexpr long kExpectedLanczosOps = 40;

// Both ends from a dense eigensolve of G (O(n^3)): the three smallest and largest pairs.
GramEigs dense_eigs(const Eigen::MatrixXd& G) {
    const Eigen::Index n = G.rows();
    GramEigs d;
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(G);
    const Eigen::Index k = std::min<Eigen::Index>(3, n);
    d.bot_vals = es.eigenvalues().head(k);
    d.bot_vecs = es.eigenvectors().leftCols(k);
    d.top_vals = es.eigenvalues().tail(k).reverse();
    d.top_vecs = es.eigenvectors().rightCols(k).rowwise().reverse();
    return d;
}

GramEigs lanczos_eigs(const Eigen::MatrixXd& G, CholShiftOp& chol, double tau, Rng& rng,
                      std::vector<std::string>& notes, const EngineProgressFn& progress) {
    const Eigen::Index n = G.rows();
    GramEigs d;
    Vec v0(n);
    for (Eigen::Index i = 0; i < n; ++i) v0[i] = rng.normal();
    if (n <= 8) return dense_eigs(G);  // Spectra needs nev < n: tiny cases go dense
    const Eigen::Index nev = 2,
                       ncv = std::min<Eigen::Index>(n, 16);  // refinement follows: loose tol
    StageProgress prog(progress, "Lanczos", "products", 2 * kExpectedLanczosOps);
    long count = 0;
    Spectra::DenseSymMatProd<double> dense_op(G);
    Counted<Spectra::DenseSymMatProd<double>> op(dense_op, prog, count);
    Spectra::SymEigsSolver<Counted<Spectra::DenseSymMatProd<double>>> top(op, nev, ncv);
    top.init(v0.data());
    top.compute(Spectra::SortRule::LargestAlge, 2000, 1e-7);
    if (top.info() != Spectra::CompInfo::Successful)
        notes.emplace_back("Lanczos (largest) reported no convergence; residuals decide");
    d.top_vals = top.eigenvalues();
    d.top_vecs = top.eigenvectors();
    d.top_ops = top.num_operations();
    // shift-invert at -tau (tau > 0): never at 0, where a singular G breaks the factorization
    Counted<CholShiftOp> shift_op(chol, prog, count);
    Spectra::SymEigsShiftSolver<Counted<CholShiftOp>> bot(shift_op, nev, ncv, -tau);
    bot.init(v0.data());
    bot.compute(Spectra::SortRule::LargestMagn, 2000, 1e-7);
    if (bot.info() != Spectra::CompInfo::Successful)
        notes.emplace_back(
            "shift-invert Lanczos (smallest) reported no convergence; residuals decide");
    d.bot_ops = bot.num_operations();
    prog.finish();
    Vec bv = bot.eigenvalues();
    Eigen::MatrixXd bV = bot.eigenvectors();
    std::vector<Eigen::Index> order(bv.size());
    for (Eigen::Index i = 0; i < bv.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](Eigen::Index a, Eigen::Index b) { return bv[a] < bv[b]; });
    d.bot_vals.resize(bv.size());
    d.bot_vecs.resize(n, bv.size());
    for (Eigen::Index i = 0; i < bv.size(); ++i) {
        d.bot_vals[i] = bv[order[i]];
        d.bot_vecs.col(i) = bV.col(order[i]);
    }
    if (d.top_vals.size() == 0 || d.bot_vals.size() == 0) {
        // Spectra returns only converged pairs: none at one end (seen with OpenBLAS's Prescott
        // kernels on 2 threads, model-speca-lambda) would leave nothing to refine.
        notes.emplace_back(
            "Lanczos returned no converged pair at one end: both ends from a "
            "dense eigensolve of the " +
            std::to_string(n) + " x " + std::to_string(n) + " Gram");
        GramEigs dense = dense_eigs(G);
        dense.top_ops = d.top_ops;
        dense.bot_ops = d.bot_ops;
        return dense;
    }
    return d;
}

}  // namespace

GramEigs extremal_eigs(const Eigen::MatrixXd& G, CholShiftOp& chol, double tau, Rng& rng,
                       std::vector<std::string>& notes, const EngineProgressFn& progress) {
    GramEigs d = lanczos_eigs(G, chol, tau, rng, notes, progress);
    ritz_check(G, d.top_vals, d.top_vecs, d.top_res);
    ritz_check(G, d.bot_vals, d.bot_vecs, d.bot_res);
    return d;
}

Vec gram_eigenvalues(const Eigen::MatrixXd& G) {
    const Eigen::Index n = G.rows();
    Eigen::MatrixXd A = G;
    Vec all(n);
    const lapack_int info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'N', 'L', static_cast<lapack_int>(n),
                                           A.data(), static_cast<lapack_int>(n), all.data());
    if (info != 0) fail_data("dsyevd failed (info = " + std::to_string(info) + ")");
    return all;
}

}  // namespace attnspec::opspec
