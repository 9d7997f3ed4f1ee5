#include "attnspec/base/random.hpp"

#include <cmath>

namespace attnspec {

double Rng::log_uniform(double lo, double hi) {
    return std::pow(10.0, uniform(std::log10(lo), std::log10(hi)));
}

Eigen::MatrixXd Rng::gaussian(Eigen::Index rows, Eigen::Index cols, double scale) {
    Eigen::MatrixXd M(rows, cols);
    for (Eigen::Index j = 0; j < cols; ++j)
        for (Eigen::Index i = 0; i < rows; ++i) M(i, j) = scale * normal();
    return M;
}

Eigen::MatrixXd Rng::orthonormal(Eigen::Index rows, Eigen::Index cols) {
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(gaussian(rows, cols));
    Eigen::MatrixXd Q = qr.householderQ() * Eigen::MatrixXd::Identity(rows, cols);
    const Eigen::MatrixXd& R = qr.matrixQR();
    for (Eigen::Index j = 0; j < cols; ++j)
        if (R(j, j) < 0) Q.col(j) *= -1;
    return Q;
}

Eigen::MatrixXd Rng::with_spectrum(Eigen::Index rows, Eigen::Index cols,
                                   const Eigen::VectorXd& sigma) {
    const Eigen::Index r = sigma.size();
    return orthonormal(rows, r) * sigma.asDiagonal() * orthonormal(cols, r).transpose();
}

Eigen::VectorXd geometric_spectrum(Eigen::Index r, double sigma_1, double kappa) {
    Eigen::VectorXd s(r);
    for (Eigen::Index i = 0; i < r; ++i)
        s[i] = r == 1 ? sigma_1 : sigma_1 * std::pow(kappa, -static_cast<double>(i) / (r - 1));
    return s;
}

}  // namespace attnspec
