// Gram preparation for operator_spectrum (proofs/spectral_enclosure.md §4): G = J J^T assembled
// from products, an estimate of its forming error, the shifted Cholesky factor, and eigenvalues
// of G (all by dsyevd, or the extremes by Spectra Lanczos and shift-invert).
#include <Spectra/MatOp/DenseSymMatProd.h>
#include <Spectra/SymEigsShiftSolver.h>
#include <Spectra/SymEigsSolver.h>

#include <cmath>
#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

#include "attnspec/base/rounding.hpp"
#include "attnspec/spectral/engine_progress.hpp"
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
// both ends share one count). A total that proves short grows to `cap` when the count is below
// it (the bottom end's known budget), else by 16.
template <class Op>
class Counted {
  public:
    using Scalar = double;
    Counted(Op& op, StageProgress& prog, long& count, long cap = 0)
        : op_(op), prog_(prog), count_(count), cap_(cap) {}
    Eigen::Index rows() const { return op_.rows(); }
    Eigen::Index cols() const { return op_.cols(); }
    void set_shift(double s) { op_.set_shift(s); }
    void perform_op(const double* x, double* y) const {
        op_.perform_op(x, y);
        ++count_;
        prog_.update(count_, cap_ > count_ ? cap_ - count_ : 16);
    }

  private:
    Op& op_;
    StageProgress& prog_;
    long& count_;
    long cap_;
};

// Expected Lanczos applications per end (nev = 2, ncv = 16, tol 1e-7): measured 17 to 45 on
// attention Jacobians up to ViT-B size; the total grows when a run needs more.
constexpr long kExpectedLanczosOps = 40;

// The smallest end. Shift-invert Lanczos on S = (G + tau I)^-1 converges slowly when G's smallest
// eigenvalues lie below tau (kappa(J)^2 near or beyond ~1 / (sqrt(n) u), where fl(G) resolves them
// no better than its forming error): their 1 / (lambda + tau) cluster, and tol 1e-7 took 28,000
// solves and 559 s at (128, 384, 32) with weight scale 1.6 (2,000 restarts, never converged), and
// over 6,000 solves and 17 min at the seed-0 ViT-B Gaussian head. A probe decides first: two steps
// of block inverse iteration and a Rayleigh-Ritz on J give sigma_hat >= sigma_min(J). Unless
// sigma_hat^2 is within the Gram error delta (A1, proofs/spectral_enclosure.md section 4: there
// the Gram interval of lambda_min starts at 0 and nothing is identified, whatever the tolerance),
// Lanczos runs as it always did (tol 1e-7, up to 2,000 restarts: the same pairs). Within delta
// it runs at tol 1e-4 with at most 60 restarts (856 solves; the seed-0 ViT-B head took 533, the
// seed-1 head 127 for the same refined sigma_min to 6 digits, where tol 1e-7 took 290), then
// afresh at tol 1e-2 (at (128, 384, 32), w 1.6, tol 1e-4 needs 1,124 solves; tol 1e-2 took 30
// and gave a sigma_min 7x smaller than 40 block steps did), and last one pair from kBlockIters
// steps of block inverse iteration. Either way the Ritz values are then recomputed with their
// residuals (ritz_check), which decide what they prove.
constexpr int kProbeIters = 2;
constexpr double kNoiseTols[] = {1e-4, 1e-2};
constexpr int kNoiseRestarts = 60;
constexpr int kBlockIters = 40;
constexpr double kBlockTol = 1e-3;  // relative Ritz residual in S

// The nev smallest singular directions of J within span(Q) (Q orthonormal), ascending, and the
// smallest of them, sigma: Rayleigh-Ritz on J itself, min ||J^T Q c|| over unit c (an upper
// bound on sigma_min(J)), whose products carry u ||J|| where fl(G) carries u ||J||^2.
Eigen::MatrixXd ritz_on_j(const LinearOperator& J, const Eigen::MatrixXd& Q, Eigen::Index nev,
                          double& sigma) {
    Eigen::MatrixXd JtQ(J.cols(), Q.cols());
    for (Eigen::Index k = 0; k < Q.cols(); ++k) JtQ.col(k) = J.transpose_times(Q.col(k));
    const Eigen::JacobiSVD<Eigen::MatrixXd> svd(JtQ, Eigen::ComputeThinV);
    sigma = svd.singularValues()[Q.cols() - 1];
    return Q * svd.matrixV().rightCols(nev).rowwise().reverse();
}

Eigen::MatrixXd orthonormal_basis(const Eigen::MatrixXd& V) {
    return Eigen::HouseholderQR<Eigen::MatrixXd>(V).householderQ() *
           Eigen::MatrixXd::Identity(V.rows(), V.cols());
}

// Block inverse iteration with S (chol holds the factor) from v0 and b - 1 vectors of a fixed
// stream, stopped when the nev leading Ritz pairs of S have relative residual <= kBlockTol or
// after max_iters steps; returns J's nev smallest Rayleigh-Ritz vectors in the last block.
struct BlockBottom {
    Eigen::MatrixXd vecs;
    double sigma = 0;  // >= sigma_min(J): the smallest of J's Rayleigh-Ritz values
    Eigen::Index iters = 0, solves = 0;
    double rel_res = 0;  // the nev leading Ritz pairs of S: largest relative residual
};

BlockBottom block_inverse_iteration(const LinearOperator& J, const CholShiftOp& chol, const Vec& v0,
                                    Eigen::Index nev, Eigen::Index b, int max_iters,
                                    StageProgress& prog, long& count) {
    Rng rng(0x5eedb10c);  // its own stream: the caller's draws stay as they were
    Eigen::MatrixXd V = rng.gaussian(v0.size(), b);
    V.col(0) = v0;
    Eigen::MatrixXd Q = orthonormal_basis(V);
    BlockBottom out;
    for (int it = 0; it < max_iters; ++it) {
        Eigen::MatrixXd W = Q;
        chol.solve_block(W);  // W = S Q
        out.solves += b;
        count += static_cast<long>(b);
        prog.update(count, static_cast<long>(b) * (max_iters - it - 1) + 1);
        const Eigen::MatrixXd H = Q.transpose() * W;
        const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(0.5 * (H + H.transpose()));
        // descending theta: the largest of S are G's smallest
        const Eigen::MatrixXd Y = es.eigenvectors().rowwise().reverse();
        const Vec theta = es.eigenvalues().reverse();
        const Eigen::MatrixXd R =
            W * Y.leftCols(nev) - Q * Y.leftCols(nev) * theta.head(nev).asDiagonal();
        out.rel_res = 0;
        for (Eigen::Index k = 0; k < nev; ++k)
            out.rel_res = std::max(out.rel_res, R.col(k).norm() / std::abs(theta[k]));
        out.iters = it + 1;
        Q = orthonormal_basis(W * Y);
        if (out.rel_res <= kBlockTol) break;
    }
    out.vecs = ritz_on_j(J, Q, nev, out.sigma);
    return out;
}

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

// The bottom end of G's spectrum, unsorted: shift-invert Lanczos at -tau (tau > 0: never at 0,
// where a singular G breaks the factorization) from v0. When a block inverse-iteration probe puts
// sigma_min(J)^2 within the Gram error delta, a ladder of looser tolerances, then (none
// converging) one pair from the block iteration; notes what it did.
struct BottomPairs {
    Vec vals;
    Eigen::MatrixXd vecs;
    Eigen::Index ops = 0;  // solves
};
BottomPairs bottom_pairs(const LinearOperator& J, CholShiftOp& chol, const Vec& v0, double tau,
                         double delta, StageProgress& prog, long& count,
                         std::vector<std::string>& notes) {
    const Eigen::Index nev = 2, ncv = std::min<Eigen::Index>(v0.size(), 16);
    const BlockBottom probe =
        block_inverse_iteration(J, chol, v0, nev, ncv, kProbeIters, prog, count);
    const bool below_noise = probe.sigma * probe.sigma <= delta;
    BottomPairs out;
    out.ops = probe.solves;
    // one tolerance as always, or the noise ladder; the first that converges gives the pairs
    const std::vector<double> tols =
        below_noise ? std::vector<double>(std::begin(kNoiseTols), std::end(kNoiseTols))
                    : std::vector<double>{1e-7};
    std::string ladder;  // what the noise ladder did, for its note
    bool converged = false;
    for (const double tol : tols) {
        const int restarts = below_noise ? kNoiseRestarts : 2000;
        Counted<CholShiftOp> shift_op(chol, prog, count,
                                      below_noise ? count + ncv + restarts * (ncv - nev) : 0);
        Spectra::SymEigsShiftSolver<Counted<CholShiftOp>> bot(shift_op, nev, ncv, -tau);
        bot.init(v0.data());
        bot.compute(Spectra::SortRule::LargestMagn, restarts, tol);
        out.ops += bot.num_operations();
        converged = bot.info() == Spectra::CompInfo::Successful;
        out.vals = bot.eigenvalues();
        out.vecs = bot.eigenvectors();
        char step[80];
        std::snprintf(step, sizeof step, "%stol %.0e %s in %ld solves", ladder.empty() ? "" : ", ",
                      tol, converged ? "converged" : "not reached",
                      static_cast<long>(bot.num_operations()));
        ladder += step;
        if (converged) break;
    }
    if (!below_noise) {
        if (!converged)
            notes.emplace_back(
                "shift-invert Lanczos (smallest) reported no convergence; residuals decide");
        return out;
    }
    if (!converged) {
        const BlockBottom blk =
            block_inverse_iteration(J, chol, v0, nev, ncv, kBlockIters, prog, count);
        out.ops += blk.solves;
        // one pair: the smallest of J's Rayleigh-Ritz (ritz_check recomputes its quotient on G);
        // with no second pair refine_min assumes nothing above it (no identification)
        out.vecs = blk.vecs.leftCols(1);
        out.vals = Vec::Zero(1);
        char step[160];
        std::snprintf(step, sizeof step,
                      "; one pair from block inverse iteration (%ld vectors, %ld steps, "
                      "relative Ritz residual %.2g) by Rayleigh-Ritz on J",
                      static_cast<long>(ncv), static_cast<long>(blk.iters), blk.rel_res);
        ladder += step;
    }
    char head[200];
    std::snprintf(head, sizeof head,
                  "shift-invert Lanczos (smallest): sigma_min(J)^2 <= %.3g, within the Gram "
                  "error %.3g (no Gram bound resolves it; shift %.3g): ",
                  probe.sigma * probe.sigma, delta, tau);
    notes.emplace_back(head + ladder + "; residuals decide");
    return out;
}

GramEigs lanczos_eigs(const LinearOperator& J, const Eigen::MatrixXd& G, CholShiftOp& chol,
                      double tau, Rng& rng, std::vector<std::string>& notes,
                      const EngineProgressFn& progress) {
    const Eigen::Index n = G.rows();
    GramEigs d;
    Vec v0(n);
    for (Eigen::Index i = 0; i < n; ++i) v0[i] = rng.normal();
    // the Gram error estimate draws right after v0, as it did when operator_spectrum drew it
    // after this function: same stream, same values
    const double gram_est = estimate_gram_error(J, G, rng);
    if (n <= 8) {  // Spectra needs nev < n: tiny cases go dense
        GramEigs dense = dense_eigs(G);
        dense.gram_est = gram_est;
        return dense;
    }
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
    const double delta = gram_error_bound(gram_est, n, d.top_vals.size() ? d.top_vals[0] : 0.0);
    const BottomPairs bot = bottom_pairs(J, chol, v0, tau, delta, prog, count, notes);
    d.bot_ops = bot.ops;
    prog.finish();
    std::vector<Eigen::Index> order(bot.vals.size());
    for (Eigen::Index i = 0; i < bot.vals.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](Eigen::Index a, Eigen::Index b) { return bot.vals[a] < bot.vals[b]; });
    d.bot_vals.resize(bot.vals.size());
    d.bot_vecs.resize(n, bot.vals.size());
    for (Eigen::Index i = 0; i < bot.vals.size(); ++i) {
        d.bot_vals[i] = bot.vals[order[i]];
        d.bot_vecs.col(i) = bot.vecs.col(order[i]);
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
        dense.gram_est = gram_est;
        return dense;
    }
    d.gram_est = gram_est;
    return d;
}

}  // namespace

double gram_error_bound(double gram_est, Eigen::Index n, double lambda_max) {
    return 10 * gram_est + 4 * std::sqrt(static_cast<double>(n)) * kUnitRoundoff * lambda_max;
}

GramEigs extremal_eigs(const LinearOperator& J, const Eigen::MatrixXd& G, CholShiftOp& chol,
                       double tau, Rng& rng, std::vector<std::string>& notes,
                       const EngineProgressFn& progress) {
    GramEigs d = lanczos_eigs(J, G, chol, tau, rng, notes, progress);
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
