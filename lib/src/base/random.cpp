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

std::uint64_t instance_seed(std::uint64_t master, std::uint64_t i) {
    std::uint64_t z = master + 0x9E3779B97F4A7C15ull * (i + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

}  // namespace attnspec
