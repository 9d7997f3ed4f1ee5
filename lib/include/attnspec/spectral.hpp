// Singular values and condition numbers with stated accuracy. Dense SVD by Eigen JacobiSVD (small)
// or BDCSVD; every SVD comes with an a-posteriori enclosure of each singular value built from the
// backward error of the whole decomposition (Weyl) and the loss of orthogonality of U and V
// (proofs/spectral_enclosure.md). kappa follows MATH.md §1: strict (sigma_1/sigma_r) or nz
// (sigma_1 / smallest sigma above rtol*sigma_1, default rtol = max(m,n)*eps). CPU only.
#pragma once
#include <Eigen/Dense>
#include <string>

#include "attnspec/check.hpp"

namespace attnspec {

enum class KappaConvention { strict, nz };
const char* to_string(KappaConvention c);

enum class SvdMethod { jacobi, bdc, auto_select };
const char* to_string(SvdMethod m);

// Thin SVD M = U diag(sigma) V^T with an enclosure radius for each sigma_i:
//   |sigma_i(M) - sigma[i]| <= radius[i]
// where radius[i] = residual + sigma[i]*(1 - sqrt((1-eta_U)(1-eta_V))) + pad, residual =
// ||M - U S V^T||_F, eta = ||U^T U - I||_F, pad = rounding of evaluating those (gamma_{k} bound).
struct SvdResult {
    Eigen::VectorXd sigma;   // descending, length min(m, n)
    Eigen::MatrixXd U, V;    // thin factors (empty when values_only)
    Eigen::VectorXd radius;  // enclosure radius per sigma (NaN when values_only)
    double residual = 0, eta_U = 0, eta_V = 0, pad = 0;
    std::string method;
    Interval enclosure(Eigen::Index i) const {
        return Interval::around(sigma[i], radius[i]);
    }
};

// Cost O(m n min(m,n)); throws DataError on empty or non-finite input.
SvdResult svd(const Eigen::MatrixXd& M, SvdMethod method = SvdMethod::auto_select);

struct Kappa {
    double value = 0;        // +inf when the convention's sigma_min is 0
    KappaConvention convention = KappaConvention::strict;
    double rtol = 0;         // nz: the relative threshold used; strict: 0
    Eigen::Index rank = 0;   // numerical rank at rtol (default rtol for strict too)
    double sigma_max = 0, sigma_min = 0;  // sigma_min is the one kappa divides by
    Interval enclosure;      // contains the exact kappa of the input matrix (inf hi allowed)
    std::string method;
    std::string describe() const;  // "kappa_strict = 12.3 in [12.29, 12.31] (JacobiSVD)"
};

// kappa from an SVD with enclosures. rtol < 0 selects the default max(m,n)*eps.
Kappa kappa(const SvdResult& s, Eigen::Index rows, Eigen::Index cols, KappaConvention c,
            double rtol = -1);
Kappa kappa(const Eigen::MatrixXd& M, KappaConvention c = KappaConvention::strict,
            double rtol = -1);

// Interval quotient a / b for a, b >= 0 (hi = +inf when b.lo <= 0).
Interval divide(Interval a, Interval b);

}  // namespace attnspec
