// Deflated certificate of sigma_min(J) (proofs/spectral_enclosure.md §7), CPU only.
// For an ill-conditioned J whose smallest eigenvalues of G = J J^T lie far below the plain shift
// test's slack: k approximate eigenvectors V of a computed Gram G~ below beta (LAPACK dsyevr), an
// inertia certificate (rump_shift_test on fl(G~ + s V V^T) at tau = beta) proving that the
// compression of G onto range(V)^perp has eigenvalues >= beta, and the k x k Rayleigh-Ritz block
// from matrix-free products Y = J^T V (its smallest singular value enclosed by svd()), whose
// off-diagonal block is bounded by the residual ||J Y - V Theta||. Schur complement (R.-C. Li /
// Mathias quadratic residual bound): lambda_min(G) >= lambda_1(block) - 2e^2/(g + sqrt(g^2+4e^2)),
// g = beta - lambda_1(block). Rigorous given A2 (product error) and ||G~ - J J^T||_2 <= gram_error
// (which only has to stay below the certificate's margin ~ beta).
#pragma once
#include <Eigen/Dense>
#include <functional>
#include <string>
#include <vector>

#include "attnspec/spectral/operators.hpp"

namespace attnspec {

struct DeflatedOptions {
    double vu_rel = 1e-3;          // deflate the eigenvalues of G~ below vu_rel * sigma_max_hi^2
    Eigen::Index k_max = 1024;     // at most this many (dsyevr computes k_max + 1 pairs)
    double product_rel_error = 0;  // A2: ||fl(J x) - J x|| <= this * sigma_max ||x|| (> 0)
    double sigma_max_hi = 0;       // upper bound on sigma_max(J) (> 0)
    double gram_error = 0;         // ||G~ - J J^T||_2 <= this (proved or the engine's A1 estimate)
    double max_bytes = 8.0 * (1ull << 30);  // refuse above this (DataError) before allocating
    int max_attempts = 3;                   // Cholesky attempts (beta / 4 after a failed dpotrf)
    // Optional: X <- (G~ + tau I)^-1 X in place, tau >= 0 small (the engine's Cholesky factor).
    // Given and n > dsyevr_upto, the bottom pairs come from block inverse iteration (block_size
    // vectors, doubled while too few of them lie above vu) instead of dsyevr: soundness does not
    // depend on it (a missed eigenvalue below beta makes the inertia certificate fail).
    std::function<void(Eigen::MatrixXd&)> shifted_solve;
    Eigen::Index dsyevr_upto = 4096;
    Eigen::Index block_size = 256;
    int inverse_steps = 3;
    // tests only: < 1 plants an under-estimated slack / residual bound; > 0 forces beta
    double slack_scale = 1, residual_scale = 1, beta_override = 0;
};

struct DeflatedMin {
    bool certified = false;
    double lambda_lo = 0, lambda_hi = 0;  // lambda_min(J J^T) in [lambda_lo, lambda_hi]
    double sigma_lo = 0, sigma_hi = 0;    // sigma_min(J) in [sigma_lo, sigma_hi]
    Eigen::VectorXd u;   // the block's last (graded) column, unit: ||J^T u|| estimates sigma_min
    Eigen::Index k = 0;  // deflated pairs
    double beta = 0;     // certified: lambda_min(G on range(V)^perp) >= beta
    double theta_1 = 0, theta_k = 0, theta_next = 0;  // dsyevr values of G~: 1, k, k + 1
    double gap = 0;          // g = beta - upper bound of lambda_1 of the Ritz block
    double residual = 0;     // e >= ||(I - Q Q^T) G Q||_2, Q orthonormal basis of range(V)
    double shift = 0;        // 2e^2/(g + sqrt(g^2 + 4e^2)): the quadratic term
    double block_error = 0;  // ||fl(J^T V) - J^T V||_2 bound (A2, Frobenius over k columns)
    double eta = 0;          // ||V^T V - I||_2 bound
    double slack = 0;        // c of the inertia certificate (scaled)
    double gram_error = 0;   // the assumed ||G~ - J J^T||_2
    int attempts = 0;
    double seconds_eig = 0, seconds_chol = 0, seconds_ritz = 0, seconds = 0;
    std::string method;
    std::vector<std::string> notes;
};

// Bytes the deflated certificate allocates beyond G~ (dsyevr copy or shifted matrix + its copy,
// V, J^T V, J Y and svd work on J^T V) for k deflated pairs: for refusing early.
double deflated_bytes(Eigen::Index n, Eigen::Index m, Eigen::Index k);

// G: n x n symmetric (lower triangle read), n = J.rows() <= J.cols(). Costs a dsyevr of G (~4/3
// n^3 flops + 2 n^2 k; or inverse_steps block solves, 2 n^2 K each), one or more dpotrf (n^3 / 3
// each), 3 k products with J, SVDs of two m x k blocks and the exact split of one (3 k^2 m). Throws
// DataError for bad sizes, options or memory above max_bytes; returns certified = false with a note
// when the spectrum has no usable gap or a check fails.
DeflatedMin certify_deflated(const LinearOperator& J, const Eigen::MatrixXd& G,
                             const DeflatedOptions& opt);

}  // namespace attnspec
