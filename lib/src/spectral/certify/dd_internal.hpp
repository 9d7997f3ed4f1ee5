// Private to lib/src/spectral/certify/dd_*.cpp and double_double.cpp: the double-double
// certificate's Gram and factorization (dd_factor.cpp), Temple enclosure (dd_temple.cpp) and the
// sequence of factorizations (dd_ladder.cpp) that double_double.cpp's entry points drive
// (proofs/spectral_enclosure.md §8).
#pragma once
#include <Eigen/Dense>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "attnspec/spectral/certify/double_double.hpp"

namespace attnspec::ddcert {

inline constexpr double kEta = std::numeric_limits<double>::denorm_min();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A note's text: printf's format f with up to four numbers.
inline std::string fmt(const char* f, double a, double b = 0, double c = 0, double d = 0) {
    char buf[600];
    std::snprintf(buf, sizeof buf, f, a, b, c, d);
    return buf;
}

inline std::size_t idx(Eigen::Index i, Eigen::Index j, Eigen::Index n) {
    return static_cast<std::size_t>(i) * static_cast<std::size_t>(n) + static_cast<std::size_t>(j);
}

// ---- dd_factor.cpp ------------------------------------------------------------------------------

// G = R R^T in double-double, lower triangle row-major: |G_ij - (R R^T)_ij| <= c_entry w_i w_j +
// abs_entry (the accumulation lemma with P_ij <= ||R_i|| ||R_j|| <= w_i w_j), so rho(B) <=
// c_entry ||w||^2 + n abs_entry (rank one plus a constant), rounded up.
DdGram dd_gram(const Eigen::MatrixXd& Rt, int threads);

struct Factor {
    bool ok = false;
    Eigen::Index failed_column = -1;
    double last_pivot = 0;  // the last column's non-positive pivot, when that is where it failed
    std::vector<double> Lh, Ll, Bs;  // factor (hi, lo) and the entrywise bound, lower, row-major
    // optional rank-one term: the factorization is of G~ - tau I + c w w^T (c >= 0)
    const Eigen::VectorXd* w = nullptr;
    double c = 0;
    // per column j, the lemma's constants of every entry's chain in it (they depend on j only):
    // C(H_j) and gamma_{H_j}, H_j = blocked_height(j, 1 or 2 single terms)
    std::vector<double> colC, colGamma;
};

// The left-looking double-double Cholesky of G~ - tau I (+ c w w^T when w is given), every entry's
// residual bound in Bs; stops at the first non-positive pivot (failed_column, last_pivot).
Factor factor(const DdGram& g, double tau, int threads, const Eigen::VectorXd* w = nullptr,
              double c = 0);

// rho(S + c l l^T) for S = sym(lower Bs) >= 0, by Collatz-Wielandt at x from power steps: for any
// x > 0, rho <= max_i (B x)_i / x_i; the sums are of nonnegative terms (rounding <= gamma_{n+4}).
double collatz_wielandt(const std::vector<double>& Bs, Eigen::Index n, double c,
                        const Eigen::VectorXd& l);

// Rayleigh quotient of u on R R^T with R^T u and its squared norm in double-double (an estimate
// for the shift, not part of the proof).
double dd_rayleigh(const Eigen::MatrixXd& Rt, const Eigen::VectorXd& u);

// Inverse iteration x <- (G - tau I)^-1 x with a factor until 1/||(G - tau I)^-1 x|| (~ |lambda -
// tau| for the eigenvalue nearest tau) settles to 1e-9: at most 200 steps of n^2 each.
Eigen::VectorXd inverse_iterate(const Factor& f, Eigen::Index n, const Eigen::VectorXd& u_est);

// ---- dd_temple.cpp ------------------------------------------------------------------------------

// Rayleigh quotient of u on the double-double Gram itself (an estimate for the shift).
double gram_rayleigh(const DdGram& g, const Eigen::VectorXd& u);
// An upper bound on u^T G u / u^T u for the exact Gram G that g stands for: the double-double
// Rayleigh quotient of gram_rayleigh plus its rounding (the accumulation lemma per row r_i, then
// over the n products u_i r_i: at most (2 c_row + 2 c_total)|u|^T|G~||u|), over a lower bound of
// u^T u, plus g.rho (|u^T (G~ - G) u| <= |u|^T B |u| <= rho(B) u^T u). Rounded up.
double gram_rayleigh_upper(const DdGram& g, const Eigen::VectorXd& u);

struct TempleResult {
    bool ok = false;
    double lo = 0, hi = 0;  // lambda_min(G) in [lo, hi]
    double beta = 0;        // lambda_2(G) >= beta = tau - rho (inertia or interlacing, Weyl)
    double mu = 0, R = 0;   // the vector's Rayleigh quotient on G~ and its residual bound
    double rho = 0;         // rho(B_g + B_f), scaled and with the safety factor
    double rho_factor = 0;  // Collatz-Wielandt of the factor's residual bound
    int steps = 0;          // double-double inverse-iteration steps
    Eigen::VectorXd u;      // the vector's high parts
};

// After a failure at the last pivot: inverse iteration with the indefinite factor, from x0.
TempleResult temple_from_last_pivot(const DdGram& g, const Factor& f, double tau, double cl,
                                    const Eigen::VectorXd& x0, double scale);
// After the factorization of A = G~ - tau I + c w w^T succeeded: inverse iteration with G~ - tau I
// through A's factor by Sherman-Morrison, (A - c w w^T)^-1 x = A^-1 x + c (w^T A^-1 x) / (1 -
// c w^T A^-1 w) A^-1 w, in double-double, from w.
TempleResult temple_from_augmented(const DdGram& g, const Factor& f, double tau, double cl,
                                   double scale);

// ---- dd_ladder.cpp ------------------------------------------------------------------------------

// What the factorizations of both entry points share: the Gram, the estimate's vector, the options
// and threads, `rayleigh` giving the shift's reference for a vector, and whether the Gram came from
// the caller (then the "Gram" time is the Rayleigh quotient's).
struct CoreInput {
    const DdGram& g;
    const Eigen::VectorXd& u_est;
    const DdCertifyOptions& opt;
    int threads;
    std::function<double(const Eigen::VectorXd&)> rayleigh;
    bool gram_by_caller;
};

// The factorizations and their bound on a double-double Gram (certify_lambda_min_dd and
// certify_gram_dd): r carries the method, kernel and Gram time already; t0 is the entry's start.
DdCertifiedMin certify_core(const CoreInput& in, double lambda_est, DdCertifiedMin r,
                            std::chrono::steady_clock::time_point t0);

}  // namespace attnspec::ddcert
