// SVD, enclosures and kappa of one matrix (spectral/cond_analysis.hpp).
#include "attnspec/spectral/cond_analysis.hpp"

#include <chrono>
#include <string>

#include "attnspec/base/errors.hpp"

namespace attnspec {

CondAnalysis cond_analysis(const Eigen::Ref<const Eigen::MatrixXd>& M, const CondOptions& opt) {
    if (!(opt.rtol < 0) && !(opt.rtol < 1))
        throw Error(ExitCode::DataError,
                    "rtol = " + std::to_string(opt.rtol) +
                        " must lie in [0, 1) (negative selects max(m, n) eps)",
                    "rtol");
    CondAnalysis a;
    a.rows = M.rows();
    a.cols = M.cols();
    a.headline = opt.headline;
    const auto t0 = std::chrono::steady_clock::now();
    a.svd = svd(M, opt.svd);
    a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    a.strict = kappa(a.svd, M.rows(), M.cols(), KappaConvention::strict, opt.rtol);
    a.nz = kappa(a.svd, M.rows(), M.cols(), KappaConvention::nz, opt.rtol);
    return a;
}

}  // namespace attnspec
