// The condition analysis of one matrix (`attnspec cond`): every singular value with a rigorous
// enclosure (spectral/svd.hpp: Weyl on the whole decomposition, tightened per triplet), the
// numerical rank and kappa in both conventions (strict, nz) with enclosures. Eigen / LAPACKE
// backends. Result struct only; report/cond_section.hpp writes it. CPU only.
#pragma once
#include <Eigen/Dense>

#include "attnspec/spectral/svd.hpp"

namespace attnspec {

struct CondOptions {
    SvdOptions svd;                                      // backend (method) and refinement
    KappaConvention headline = KappaConvention::strict;  // the convention a summary quotes
    double rtol = -1;  // relative rank threshold in [0, 1); negative: max(m, n) eps
};

struct CondAnalysis {
    Eigen::Index rows = 0, cols = 0;
    SvdResult svd;     // sigma descending with lo, hi, basis per sigma
    Kappa strict, nz;  // both conventions at opt.rtol
    KappaConvention headline = KappaConvention::strict;
    double seconds = 0;  // SVD + enclosures (the kappas are O(r) more)
    const Kappa& headline_kappa() const {
        return headline == KappaConvention::strict ? strict : nz;
    }
};

// Cost O(m n min(m, n)) (the SVD) plus O(m n) per refined triplet; memory a few copies of M.
// Throws DataError (parameter rtol) for rtol >= 1 or NaN, and DataError from svd() for an empty
// or non-finite M, a LAPACK failure, work space above memory_limit_bytes() (parameter
// "max_bytes"), or a sigma_max above the largest double (svd() scales by a power of two first, so
// entries near DBL_MAX or in the subnormal range are analysed exactly).
CondAnalysis cond_analysis(const Eigen::Ref<const Eigen::MatrixXd>& M, const CondOptions& opt = {});

}  // namespace attnspec
