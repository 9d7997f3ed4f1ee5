// Private helpers shared by lib/src/infsa/*.cpp: BLAS products (OpenBLAS dgemm through CBLAS;
// Eigen's own GEMM is built without AVX here), the rounding constants of base/rounding.hpp under
// the short names the sources use, and the parameter checks that name the parameter and its value.
#pragma once
#include <Eigen/Dense>
#include <cmath>
#include <sstream>
#include <string>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/rounding.hpp"

namespace attnspec::detail {

constexpr double kUnit = kUnitRoundoff;  // unit roundoff u
using attnspec::gamma_n;                 // gamma_n = n u / (1 - n u) (Higham)

// C = alpha op(A) op(B) (+ beta C) through cblas_dgemm. C is resized when beta == 0.
void gemm(const Eigen::MatrixXd& A, bool ta, const Eigen::MatrixXd& B, bool tb, Eigen::MatrixXd& C,
          double alpha = 1.0, double beta = 0.0);
inline Eigen::MatrixXd gemm(const Eigen::MatrixXd& A, bool ta, const Eigen::MatrixXd& B, bool tb,
                            double alpha = 1.0) {
    Eigen::MatrixXd C;
    gemm(A, ta, B, tb, C, alpha, 0.0);
    return C;
}

// A value as messages print it: %g with up to 10 significant digits ("1.5", "0.95", "1.052631579").
inline std::string num(double x) {
    std::ostringstream os;
    os.precision(10);
    os << x;
    return os.str();
}

// DataError "gamma = 1.5 must lie in (0, 1)" naming parameter "gamma".
inline void check_gamma(double gamma) {
    if (!(gamma > 0 && gamma < 1))
        throw Error(ExitCode::DataError, "gamma = " + num(gamma) + " must lie in (0, 1)", "gamma");
}

// DataError "eps = -1 must be finite and >= 0" naming parameter "eps".
inline void check_eps(double eps) {
    if (!(eps >= 0) || !std::isfinite(eps))
        throw Error(ExitCode::DataError, "eps = " + num(eps) + " must be finite and >= 0", "eps");
}

}  // namespace attnspec::detail
