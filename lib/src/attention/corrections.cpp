#include "attnspec/attention/corrections.hpp"

#include <cmath>
#include <string>

#include "attnspec/base/errors.hpp"

namespace attnspec {

Eigen::MatrixXd svd_correction(const Eigen::MatrixXd& W) { return svd_correction(W, svd(W)); }

Eigen::MatrixXd svd_correction(const Eigen::MatrixXd& W, const SvdResult& s) {
    if (W.size() == 0) fail_data("SVD correction of an empty matrix");
    if (!W.allFinite()) fail_data("SVD correction: W contains NaN or Inf");
    if (s.sigma.size() == 0 || s.sigma[0] == 0)
        fail_data("SVD correction of W = 0 is undefined (sigma_1(W) = 0, kappa undefined)");
    return s.sigma[0] * s.U * s.V.transpose();
}

Eigen::MatrixXd lambda_correction(Eigen::Index rows, Eigen::Index cols, double lambda) {
    if (!std::isfinite(lambda))
        fail_data("lambda = " + value_text(lambda) + " must be finite", "lambda");
    if (lambda < 0) fail_data("lambda = " + value_text(lambda) + " must be >= 0", "lambda");
    return lambda * Eigen::MatrixXd::Identity(rows, cols);
}

double thm_3_5_kappa(double sigma_1, double sigma_r) { return 2 * sigma_1 / (sigma_1 + sigma_r); }

}  // namespace attnspec
