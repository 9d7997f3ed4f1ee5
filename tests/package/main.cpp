// Package consumer: kappa of diag(4, 2, 1) through an installed attnspec::core must be its closed
// form sigma_max / sigma_min = 4, inside the returned enclosure and within a few ulps of it.
// Exit 0 when it is, 1 otherwise (with a one-line reason on stderr).
#include <cmath>
#include <iostream>
#include <limits>

#include "attnspec/spectral/svd.hpp"
#include "attnspec/version.hpp"

int main() {
    Eigen::Matrix3d D = Eigen::Vector3d(4.0, 2.0, 1.0).asDiagonal();
    const attnspec::Kappa k = attnspec::kappa(Eigen::MatrixXd(D));
    const double exact = 4.0;
    // Diagonal input: the SVD is exact up to a few roundings of 4, 2, 1; 8 ulps of 4 is ample.
    const double tol = 8 * std::numeric_limits<double>::epsilon() * exact;
    const bool inside = k.enclosure.contains(exact);
    const bool close = std::abs(k.value - exact) <= tol;
    std::cout << "attnspec " << ATTNSPEC_VERSION << ": " << k.describe() << "\n";
    if (!inside || !close) {
        std::cerr << "package check failed: kappa(diag(4,2,1)) = " << k.value << ", enclosure ["
                  << k.enclosure.lo << ", " << k.enclosure.hi << "], expected 4\n";
        return 1;
    }
    return 0;
}
