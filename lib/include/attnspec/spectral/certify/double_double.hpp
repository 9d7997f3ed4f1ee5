// Double-double certificate of sigma_min(J) (proofs/spectral_enclosure.md §8): the plain test of
// §6 in double-double. G = R R^T (R the computed rows of J) accumulated in double-double with a
// proved entrywise error bound, a left-looking Cholesky of G - tau I in double-double (factor L as
// hi + lo pairs), and the residual A - L L^T of every entry accumulated on the same chain. As
// L L^T is positive semidefinite for any real L, lambda_min(R R^T) >= tau - rho(B) for any
// entrywise bound B of (Gram error + Cholesky residual), rho(B) bounded by Collatz-Wielandt. Its
// rounding is ~ (n/8)^2 u^2 relative where §6's is ~ n u: it certifies sigma_min to ~1e-7
// relative at kappa(J) ~ 1e7 (n = 2048), where §6 fails. Cost: n^2 m / 2 + n^3 / 6 double-double
// multiply-adds per attempt, 8 (n m + 5 n^2) bytes. Arithmetic: base/dd_accumulate.hpp. CPU only.
#pragma once
#include <Eigen/Dense>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "attnspec/spectral/operators.hpp"

namespace attnspec {

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
