// widen() and svd_from_values(): enclosure bookkeeping for matrices formed with a known error and
// for spectra assembled from blocks (see spectral.hpp).
#include <algorithm>
#include <numeric>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/interval_ops.hpp"
#include "attnspec/spectral/svd.hpp"

namespace attnspec {

void widen(SvdResult& s, double extra) {
    if (!(extra >= 0)) fail_data("widen: extra = " + value_text(extra) + " must be >= 0", "extra");
    for (Eigen::Index i = 0; i < s.sigma.size(); ++i) {
        s.radius[i] = iv::up(s.radius[i] + extra);
        s.lo[i] = std::max(0.0, iv::down(s.lo[i] - extra));
        s.hi[i] = iv::up(s.hi[i] + extra);
    }
}

SvdResult svd_from_values(const Eigen::VectorXd& sigma, const Eigen::VectorXd& radius,
                          const std::string& method) {
    if (sigma.size() == 0 || sigma.size() != radius.size())
        fail_data("svd_from_values: empty or mismatched sigma / radius");
    std::vector<Eigen::Index> order(sigma.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return sigma[a] > sigma[b]; });
    SvdResult s;
    const Eigen::Index r = sigma.size();
    s.sigma.resize(r);
    s.radius.resize(r);
    s.lo.resize(r);
    s.hi.resize(r);
    for (Eigen::Index k = 0; k < r; ++k) {
        s.sigma[k] = sigma[order[k]];
        s.radius[k] = radius[order[k]];
        const Interval w = iv::around(s.sigma[k], s.radius[k]);
        s.lo[k] = std::max(0.0, w.lo);
        s.hi[k] = w.hi;
    }
    s.weyl_radius = s.radius;
    s.triplet_residual = Eigen::VectorXd::Constant(r, std::numeric_limits<double>::quiet_NaN());
    s.basis.assign(r, "given");
    s.method = method;
    return s;
}

}  // namespace attnspec
