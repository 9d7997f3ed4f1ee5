// Fixed spectral corrections of a weight matrix W (D x d), docs/MATH.md §2: the SVD correction (Thm
// 3.5) C = sigma_1(W) U_r V_r^T, so sigma_i(W + C) = sigma_i(W) + sigma_1(W) and kappa(W + C) =
// 2 sigma_1 / (sigma_1 + sigma_r); the lambda correction (Thm 3.8) C = lambda I_{D x d} (ones on
// the main diagonal of the rectangular D x d matrix). CPU only; one thin SVD of W, O(D d min(D,
// d)).
#pragma once
#include <Eigen/Dense>

#include "attnspec/spectral/svd.hpp"

namespace attnspec {

// Throws DataError for W = 0 (no correction exists: sigma_1 = 0, kappa undefined), for empty W
// and for NaN/Inf entries. `s` may pass a precomputed SVD of W.
Eigen::MatrixXd svd_correction(const Eigen::MatrixXd& W);
Eigen::MatrixXd svd_correction(const Eigen::MatrixXd& W, const SvdResult& s);

// lambda * I_{rows x cols}; throws DataError for lambda < 0 or non-finite lambda.
Eigen::MatrixXd lambda_correction(Eigen::Index rows, Eigen::Index cols, double lambda);

// kappa(W + C) predicted by Thm 3.5 from the singular values of W: 2 s1 / (s1 + sr).
double thm_3_5_kappa(double sigma_1, double sigma_r);

}  // namespace attnspec
