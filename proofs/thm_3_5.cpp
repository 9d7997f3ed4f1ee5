// Thm 3.5 check (proofs/thm_3_5.md). Symbols: W (D x d), C = correction(W), M = W + C.
#include "attnspec/proofs/thm_3_5.hpp"

#include <cmath>
#include <limits>

#include "attnspec/attention/corrections.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/format.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/spectral/svd.hpp"

namespace attnspec::proofs {

CheckResult check_thm_3_5(const Eigen::MatrixXd& W, const CorrectionFn& correction) {
    if (W.size() == 0) fail_data("thm3.5: W is empty");
    if (!W.allFinite()) fail_data("thm3.5: W contains NaN or Inf");
    const double u = kUnitRoundoff;
    const Eigen::Index r = std::min(W.rows(), W.cols());
    const SvdResult sW = svd(W);
    if (sW.sigma[0] == 0)
        fail_data("thm3.5: W = 0 has no SVD correction (sigma_1 = 0, kappa undefined)");
    const Eigen::MatrixXd C = correction ? correction(W) : svd_correction(W, sW);
    if (C.rows() != W.rows() || C.cols() != W.cols())
        fail_data("thm3.5: correction has the wrong shape");
    const Eigen::MatrixXd M = W + C;
    const SvdResult sM = svd(M);
    const double s1 = sW.sigma[0], sr = sW.sigma[r - 1];

    CheckResult res;
    res.check = "thm3.5";
    res.claim = "sigma_i(W+C) = sigma_i(W) + sigma_1(W); kappa(W+C) = 2 s1/(s1+sr) <= 2";
    res.conventions = {
        {"kappa", "strict: sigma_1/sigma_r, r = min(D, d)"},
        {"svd", sW.method + " thin SVD, a-posteriori enclosure (proofs/spectral_enclosure.md)"},
        {"correction", correction ? "supplied" : "sigma_1 U_r V_r^T from the same SVD"}};
    res.hypotheses.push_back({"W_nonzero", true, "sigma_1(W) = " + format_number(s1)});

    // delta: distance from (W, C) to an exact pair (W', C') for which the theorem is an identity
    // (W' = Q_U Sigma Q_V^T with the orthonormal polar factors of the computed U, V; see the .md).
    const double eta = sW.eta_U + sW.eta_V + sW.eta_U * sW.eta_V;
    const double form_pad = 4 * (r + 2) * u * (W.norm() + s1 * std::sqrt(static_cast<double>(r)));
    const double delta = sW.residual + 2 * s1 * eta + sW.pad + form_pad;
    res.tolerances.push_back(
        {"delta_pair", delta,
         "Weyl: |sigma_i(W+C) - sigma_i(W'+C')| <= ||W-W'|| + ||C-C'|| <= residual(W) + "
         "2 s1 eta + rounding pads; every term measured a posteriori"});
    res.tolerances.push_back(
        {"svd_radius_M", sM.radius.maxCoeff(),
         "enclosure radius of the SVD of W+C (residual + orthogonality + pad)"});

    // Claim 1: every singular value shifts by sigma_1 (worst index kept).
    Eigen::Index worst = 0;
    double worst_gap = -std::numeric_limits<double>::infinity(), slack_used = 0;
    for (Eigen::Index i = 0; i < r; ++i) {
        const double err = std::fabs(sM.sigma[i] - (sW.sigma[i] + s1));
        const double gap = err - sM.radius[i] - delta;
        if (gap > worst_gap) worst_gap = gap, worst = i;
        slack_used = std::max(slack_used, err / (sM.radius[i] + delta));
    }
    const double pred = sW.sigma[worst] + s1;
    res.comparisons.push_back(compare("sigma_shift", "sigma_i(W+C)", sM.sigma[worst],
                                      sM.enclosure(worst), Relation::eq, "sigma_i(W)+sigma_1(W)",
                                      pred, Interval::around(pred, delta)));

    // Claim 2: kappa(W+C) equals the closed form. The kappa enclosure of W'+C' widens M's by delta.
    Interval num = Interval::around(sM.sigma[0], sM.radius[0] + delta);
    Interval den = Interval::around(sM.sigma[r - 1], sM.radius[r - 1] + delta);
    const Interval kap = divide(num, den);
    const double kM = sM.sigma[0] / sM.sigma[r - 1];
    const double kf = thm_3_5_kappa(s1, sr);
    res.comparisons.push_back(compare("kappa_closed_form", "kappa(W+C)", kM, kap, Relation::eq,
                                      "2 s1/(s1+sr)", kf, Interval::around(kf, 4 * u * kf)));
    // Claim 3: kappa(W+C) <= 2, with equality iff W is rank-deficient (attainable).
    res.comparisons.push_back(compare("kappa_le_2", "kappa(W+C)", kM, kap, Relation::le, "2", 2.0,
                                      Interval::point(2.0), /*attainable=*/true));

    res.values = {{"sigma_1(W)", s1},
                  {"sigma_r(W)", sr},
                  {"kappa(W)", s1 / sr},
                  {"sigma_1(W+C)", sM.sigma[0]},
                  {"sigma_r(W+C)", sM.sigma[r - 1]},
                  {"kappa(W+C)", kM},
                  {"kappa_closed_form", kf},
                  {"worst_index", double(worst)},
                  {"shift_slack_used", slack_used},
                  {"svd_residual(W)", sW.residual},
                  {"eta_U", sW.eta_U},
                  {"eta_V", sW.eta_V}};
    res.instance = {{"W", W}, {"C", C}};
    res.finalize();
    return res;
}

namespace {

// One instance of a family; the seed fixes everything (replay: family + shape + seed).
Eigen::MatrixXd draw(const std::string& family, long D, long d, std::uint64_t seed) {
    Rng rng(seed);
    const double scale = rng.log_uniform(1e-8, 1e8);
    const long r = std::min(D, d);
    if (family == "gaussian") return rng.gaussian(D, d, scale);
    if (family == "kappa-1e12")
        return rng.with_spectrum(D, d, geometric_spectrum(r, scale, rng.log_uniform(1e2, 1e12)));
    if (family == "rank-deficient") {
        const long k = std::max(1L, rng.integer(1, r - 1));
        return rng.with_spectrum(D, d, geometric_spectrum(k, scale, rng.log_uniform(1, 1e3)));
    }
    // near-zero sigma_r: sigma_r = 1e-14 sigma_1
    Eigen::VectorXd s = geometric_spectrum(r, scale, rng.log_uniform(1, 1e3));
    s[r - 1] = 1e-14 * scale;
    return rng.with_spectrum(D, d, s);
}

}  // namespace

CheckRun run_thm_3_5(const RunOptions& opt) {
    RunLoop loop(opt, "thm3.5", "kappa(W + sigma_1 U_r V_r^T) = 2 s1/(s1+sr) <= 2", "kappa_le_2");
    const auto shapes = weight_shapes(opt, {"large", 200, 64});
    const std::vector<std::string> families = {"gaussian", "kappa-1e12", "rank-deficient",
                                               "near-zero-sigma_r"};
    std::vector<std::string> names;
    for (const auto& sh : shapes)
        for (const auto& fam : families) names.push_back(sh.name + "/" + fam);
    const long per = loop.per_regime(names, 40, 200);
    std::uint64_t i = 0;
    for (const auto& sh : shapes)
        for (const auto& fam : families) {
            const std::string regime = sh.name + "/" + fam;
            for (long t = 0; t < per && !loop.stopped(); ++t, ++i) {
                if (loop.skip(i, regime)) continue;
                if (fam == "rank-deficient" && std::min(sh.D, sh.d) < 2) {
                    loop.drop();
                    continue;
                }
                const std::uint64_t seed = loop.seed(i);
                loop.submit(regime, seed, [fam, D = sh.D, d = sh.d, seed] {
                    return check_thm_3_5(draw(fam, D, d, seed));
                });
            }
        }
    return loop.finish();
}

}  // namespace attnspec::proofs
