// Certified lower bound on sigma_min(J) (rows <= cols) through verified positive definiteness
// (Rump's isspd, diagonally scaled as van der Sluis): G = J J^T assembled from the rows of J with
// an error-free split (Ozaki) so that its assembly error is ~2u |g_ij|, then a floating-point
// Cholesky (LAPACK dpotrf) of G - tau I - c W^2 (W = diag of the row norms of J, c the scaled
// bound on every rounding and assembly error). Its success proves lambda_min(J J^T) >= tau, so
// sigma_min(J) >= sqrt(tau). Statement, error terms and the limit: proofs/spectral_enclosure.md
// §6. CPU only.
#pragma once
#include <Eigen/Dense>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "attnspec/spectral/operators.hpp"

namespace attnspec {

// When the engine (operator_spectrum) certifies sigma_min: auto (when its own lower bound is 0
// or wider than 1e-6 relative), always, never.
enum class CertifyMode { auto_select, always, never };
const char* to_string(CertifyMode m);                        // "auto", "always", "never"
CertifyMode certify_mode_from_string(const std::string& s);  // Usage error otherwise

// Which certificate the engine tries (LargeSvdOptions::certify_method): auto = double-double (§8)
// where it fits, else plain (§6), then deflated (§7) when still needed; or exactly one of them.
enum class CertifyMethod { auto_select, double_double, plain, deflated };

// G = fl(J J^T), lower triangle, with ||W^-1 (G - J J^T) W^-1||_2 <= scaled_error (symmetric G
// from the lower triangle), W = diag(w), w_i >= ||row i of J||. Rows are taken as given (exact).
struct CompensatedGram {
    Eigen::MatrixXd G;  // n x n, lower triangle valid
    Eigen::VectorXd w;  // row-norm upper bounds
    double scaled_error = 0;
    int split_bits = 0;  // bits of the high part of the split (53 - log2 m) / 2
};

// From the rows R (n x m) of J: R = H + L exactly, H with split_bits bits per entry relative to
// its row's largest entry, so H H^T is exact in double (any summation order); G = H H^T +
// (H L^T + L R^T), the cross terms by dgemm with the standard bound gamma_m. O(3 n^2 m) flops,
// 2 n m + n^2 doubles. Throws DataError on non-finite rows or an exponent range that would
// underflow the split.
CompensatedGram compensated_gram(const Eigen::MatrixXd& rows);

struct CertifyOptions {
    int max_attempts = 6;  // Cholesky attempts (tau lowered, or the slack raised, each time)
    // Absolute bound on ||J~ - J||_2, J~ the computed rows (assumption A2: the engine passes
    // product_rel_error x sigma_max); subtracted from sqrt(tau).
    double product_abs_error = 0;
    double max_bytes = 8.0 * (1ull << 30);  // refuse rows + Gram + factor above this
    double slack_scale = 1;  // tests only: < 1 plants an under-estimated rounding bound
};

struct CertifiedMin {
    bool certified = false;
    double lambda_lo = 0, sigma_lo = 0;  // lambda_min(J J^T) >= lambda_lo, sigma_min >= sigma_lo
    double tau = 0;                      // the last shift tried (= lambda_lo when certified)
    double slack = 0;                    // c: scaled bound on all rounding (dimensionless)
    double delta = 0;                    // Cholesky rounding part of c times max w_i^2
    double assembly_error = 0;           // assembly + row error part of c times max w_i^2
    int attempts = 0;
    double seconds = 0;  // total (rows, Gram, Cholesky attempts)
    std::string method;
    std::vector<std::string> notes;
};

// The scaled slack c needed for shift tau: dpotrf succeeding on fl(G - tau I - c W^2) with a
// factor L such that ||W^-1 |L|||_2^2 <= factor_norm2 proves lambda_min(J J^T) >= tau when the
// Gram's error is <= err (scaled, as CompensatedGram). Higham Thm 10.5 + the diagonal's rounding.
double rump_slack(const Eigen::MatrixXd& G, const Eigen::VectorXd& w, double err, double tau,
                  double factor_norm2);

struct ShiftTest {
    bool factored = false;   // dpotrf succeeded
    bool certified = false;  // and c_needed <= c_trial: lambda_min(J J^T) >= tau is proved
    double c_trial = 0, c_needed = 0, factor_norm2 = 0;
};
// One attempt: dpotrf of fl(G - tau I - c_trial W^2), then the slack its factor needs (times
// slack_scale: < 1 plants an under-estimate, tests only). O(n^3 / 3) flops, one n^2 copy.
ShiftTest rump_shift_test(const CompensatedGram& g, double tau, double c_trial,
                          double slack_scale = 1);

// lambda_min(J J^T) >= tau from the Gram, starting just below lambda_est (margin 2 c sum w_i^2
// u_i^2 with u_est the approximate eigenvector, or 2 c max w^2 when empty): a failed dpotrf
// lowers tau (margin x 4), a factor needing more slack raises c; at most max_attempts dpotrf.
CertifiedMin certify_lambda_min(const CompensatedGram& g, double lambda_est,
                                const Eigen::VectorXd& u_est, const CertifyOptions& opt = {});

// The whole method on a matrix-free operator (rows <= cols): rows of J by J^T e_i (n products),
// compensated_gram, certify_lambda_min at sigma_est^2. Checks 8 (2 n m + 2 n^2) bytes against
// opt.max_bytes before allocating (DataError). Throws DataError for a tall or empty operator.
CertifiedMin certified_sigma_min(const LinearOperator& J, double sigma_est,
                                 const Eigen::VectorXd& u_est, const CertifyOptions& opt = {});

// ---- deflated certificate (proofs/spectral_enclosure.md §7) -------------------------------------
// For an ill-conditioned J whose smallest eigenvalues of G = J J^T lie far below the plain shift
// test's slack: k approximate eigenvectors V of a computed Gram G~ below beta (LAPACK dsyevr), an
// inertia certificate (rump_shift_test on fl(G~ + s V V^T) at tau = beta) proving that the
// compression of G onto range(V)^perp has eigenvalues >= beta, and the k x k Rayleigh-Ritz block
// from matrix-free products Y = J^T V (its smallest singular value enclosed by svd()), whose
// off-diagonal block is bounded by the residual ||J Y - V Theta||. Schur complement (R.-C. Li /
// Mathias quadratic residual bound): lambda_min(G) >= lambda_1(block) - 2e^2/(g + sqrt(g^2+4e^2)),
// g = beta - lambda_1(block). Rigorous given A2 (product error) and ||G~ - J J^T||_2 <= gram_error
// (which only has to stay below the certificate's margin ~ beta).
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

// ---- double-double certificate (proofs/spectral_enclosure.md §8)
// --------------------------------- The plain test of §6 in double-double: G = R R^T (R the
// computed rows of J) accumulated in double-double with a proved entrywise error bound, a
// left-looking Cholesky of G - tau I in double-double (factor L as hi + lo pairs), and the residual
// A - L L^T of every entry accumulated on the same chain. As L L^T is positive semidefinite for any
// real L, lambda_min(R R^T) >= tau - rho(B) for any entrywise bound B of (Gram error + Cholesky
// residual), rho(B) bounded by Collatz-Wielandt. Its rounding is ~ (n/8)^2 u^2 relative where §6's
// is ~ n u: it certifies sigma_min to ~1e-7 relative at kappa(J) ~ 1e7 (n = 2048), where §6 fails.
// Cost: n^2 m / 2 + n^3 / 6 double-double multiply-adds per attempt, 8 (n m + 5 n^2) bytes. CPU
// only.
struct DdCertifyOptions {
    // factorizations: after a failed one the shift's margin goes 4e-8, 1e-6, 1e-4, 1e-2, 0.5,
    // 0.9, 0.98 (an estimate far above lambda_min); after a success at a coarse margin, inverse
    // iteration with that factor and one more try just below its Rayleigh quotient
    int max_attempts = 9;
    double first_margin = 4e-8;    // first tau = lambda_est (1 - first_margin)
    double product_abs_error = 0;  // A2: ||J~ - J||_2 bound, subtracted from sqrt(lambda_lo)
    double max_bytes = 8.0 * (1ull << 30);  // refuse rows + Gram + factor above this (DataError)
    int threads = 0;                        // <= 0: the BLAS's thread count
    double bound_scale = 1;  // tests only: < 1 plants an under-estimated rounding bound
    // a factorization that fails only at its last pivot proves lambda_2 >= tau - rho; Temple's
    // bound at its double-double inverse-iteration vector then encloses lambda_min without another
    // factorization (false: the ladder only; tests)
    bool temple = true;
    // with Temple's bound and an estimate's vector w, the first factorization is of G~ - tau I +
    // c w w^T at tau = lambda_est (1 + augmented_margin), c = lambda_est (<= 0: skip it)
    double augmented_margin = 1e-6;
    // optional: one line before each further factorization (why, and its expected time: the
    // last one's)
    std::function<void(const std::string&)> notice;
};

struct DdCertifiedMin {
    bool certified = false;
    double lambda_lo = 0, sigma_lo = 0;  // lambda_min(R R^T) >= lambda_lo, sigma_min(J) >= sigma_lo
    double lambda_est =
        0;           // the shift's reference: Rayleigh quotient of u_est on G (double-double)
    double tau = 0;  // the last shift tried
    double rho = 0;  // rho(B): Gram error + Cholesky residual + rounding, absolute
    double rho_gram = 0, rho_factor = 0;  // its parts (Collatz-Wielandt of each alone)
    Eigen::Index failed_column = -1;      // the last failed attempt's non-positive pivot
    // how lambda_lo was proved: "cholesky" (a factorization of G - tau I succeeded: tau - rho) or
    // "temple" (one failed only at its last pivot: Temple's bound with lambda_2 >= tau - rho)
    std::string bound;
    // when certified by certify_gram_dd or by Temple's bound: lambda_min(G) <= lambda_hi (the
    // final vector's Rayleigh quotient on G~ with its rounding, plus the Gram's rho) and
    // sigma_min(J) <= sigma_hi = sqrt(lambda_hi) + product_abs_error; NaN otherwise
    double lambda_hi = std::numeric_limits<double>::quiet_NaN();
    double sigma_hi = std::numeric_limits<double>::quiet_NaN();
    Eigen::VectorXd u;  // the inverse-iteration vector when the estimate was refined (else empty)
    int attempts = 0;
    double seconds_rows = 0, seconds_gram = 0, seconds_chol = 0, seconds = 0;
    std::string method, kernel;
    std::vector<std::string> notes;
};

// A Gram matrix in double-double with a proved bound on its error: the lower triangle, row-major
// (entry (i, j), j <= i, at i n + j), each entry the exact real hi + lo (|lo| <= u |hi|), and
// rho >= rho(B) for a symmetric nonnegative B bounding |G~ - G| entrywise, G the Gram of the
// matrix it stands for (the rows of J, or J~ from a head's factors: attention/jacobian.hpp,
// jacobian_gram_dd). `source` names it in the certificate's notes.
struct DdGram {
    Eigen::Index n = 0;
    std::vector<double> hi, lo;
    double rho = 0;
    std::string source;
    // ||J~ - J||_2 <= factor_error, J~ the matrix whose Gram this is and J the exact operator
    // (proved by the caller, e.g. jacobian_gram_dd); NaN when unknown (A2 then bounds it)
    double factor_error = std::numeric_limits<double>::quiet_NaN();
};

// Temple's bound on a double-double Gram (proofs/spectral_enclosure.md §8 "One factorization"):
// for the exact Gram G that g stands for, any x = x_hi + x_lo and the hypothesis lambda_2(G) >=
// beta (the caller's: certify_* prove it by the inertia of a factorization that failed only at
// its last pivot), mu = the double-double Rayleigh quotient of x_hi on G~ and residual >=
// ||G x - mu x|| / ||x|| (the accumulation lemma, the norm's rounding and g.rho) give, when
// applies (mu + residual < beta), lambda_min(G) in [lambda_lo, lambda_hi] = [mu - residual -
// residual^2 / (beta - mu - residual), mu + residual]. lambda_lo may be <= 0. bound_scale < 1
// (tests only) under-estimates the rounding parts. DataError when the sizes do not match.
struct TempleEnclosure {
    bool applies = false;
    double lambda_lo = 0, lambda_hi = 0;
    double mu = 0, residual = 0;
};
TempleEnclosure temple_enclosure(const DdGram& g, const std::vector<double>& x_hi,
                                 const std::vector<double>& x_lo, double beta,
                                 double bound_scale = 1);

// Tests and benchmarks (process-wide): the factorization's rows below each column block go
// through the double-double dot `rows` (1 .. dd::kMaxRows, default kMaxRows) at a time, sharing
// the pass over the column's factor row. Every value is the same bits; only the time differs.
void set_factor_row_group(int rows);

// Bytes and double-double multiply-adds of certified_sigma_min_dd for an n x m operator (one
// factorization).
double dd_certify_bytes(Eigen::Index n, Eigen::Index m);
double dd_certify_updates(Eigen::Index n, Eigen::Index m);

// lambda_min(R R^T) >= lambda_lo from rows_t (m x n: column i is row i of R, taken as exact).
// u_est (n, may be empty) sets the shift: its double-double Rayleigh quotient on G (else
// lambda_est). Throws DataError for non-finite rows or memory above max_bytes.
DdCertifiedMin certify_lambda_min_dd(const Eigen::MatrixXd& rows_t, double lambda_est,
                                     const Eigen::VectorXd& u_est,
                                     const DdCertifyOptions& opt = {});

// lambda_min(G) >= lambda_lo for a Gram given in double-double (the same factorization and
// bound; G = g's exact Gram, rho_gram = g.rho). u_est sets the shift by its Rayleigh quotient on
// G~ in double-double. Throws DataError for a malformed or non-finite g or memory above max_bytes
// (the factor and its bound, 3 n^2 doubles).
DdCertifiedMin certify_gram_dd(const DdGram& g, double lambda_est, const Eigen::VectorXd& u_est,
                               const DdCertifyOptions& opt = {});

// On a matrix-free operator (rows <= cols): rows by J^T e_i, then certify_lambda_min_dd at
// sigma_est^2; sigma_lo = sqrt(lambda_lo) - product_abs_error, rounded down. DataError for a tall
// or empty operator or memory above max_bytes (checked before allocating).
DdCertifiedMin certified_sigma_min_dd(const LinearOperator& J, double sigma_est,
                                      const Eigen::VectorXd& u_est,
                                      const DdCertifyOptions& opt = {});

}  // namespace attnspec
