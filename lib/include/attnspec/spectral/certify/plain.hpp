// Certified lower bound on sigma_min(J) (rows <= cols) through verified positive definiteness
// (Rump's isspd, diagonally scaled as van der Sluis): G = J J^T assembled from the rows of J with
// an error-free split (Ozaki) so that its assembly error is ~2u |g_ij|, then a floating-point
// Cholesky (LAPACK dpotrf) of G - tau I - c W^2 (W = diag of the row norms of J, c the scaled
// bound on every rounding and assembly error). Its success proves lambda_min(J J^T) >= tau, so
// sigma_min(J) >= sqrt(tau). Statement, error terms and the limit: proofs/spectral_enclosure.md
// §6. CPU only.
#pragma once
#include <Eigen/Dense>
#include <string>
#include <vector>

#include "attnspec/spectral/operators.hpp"

namespace attnspec {

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

// The plain certificate's own settings (the engine's policy is CertifyOptions, certify/policy.hpp).
struct PlainCertifyOptions {
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
                                const Eigen::VectorXd& u_est, const PlainCertifyOptions& opt = {});

// The whole method on a matrix-free operator (rows <= cols): rows of J by J^T e_i (n products),
// compensated_gram, certify_lambda_min at sigma_est^2. Checks 8 (2 n m + 2 n^2) bytes against
// opt.max_bytes before allocating (DataError). Throws DataError for a tall or empty operator.
CertifiedMin certified_sigma_min(const LinearOperator& J, double sigma_est,
                                 const Eigen::VectorXd& u_est, const PlainCertifyOptions& opt = {});

}  // namespace attnspec
