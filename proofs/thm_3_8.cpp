// Lemma 3.7 (Weyl) and Thm 3.8 checks; see proofs/lemma_3_7.md and proofs/thm_3_8.md.
// Symbols: W (D x d), lambda, I = I_{D x d}, M = W + lambda I, s1 = sigma_1(W).
#include "attnspec/proofs/thm_3_8.hpp"

#include <cmath>
#include <limits>

#include "attnspec/attention/corrections.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/base/rounding.hpp"
#include "attnspec/spectral/svd.hpp"

namespace attnspec::proofs {

namespace {

constexpr double kU = kUnitRoundoff;

void validate(const Eigen::MatrixXd& W, const char* who) {
    if (W.size() == 0) fail_data(std::string(who) + ": W is empty");
    if (!W.allFinite()) fail_data(std::string(who) + ": W contains NaN or Inf");
}

// Strict kappa enclosure from an SVD enclosure (inf upper end when sigma_r's interval reaches 0).
Interval kappa_enclosure(const SvdResult& s) {
    return divide(s.enclosure(0), s.enclosure(s.sigma.size() - 1));
}
double kappa_value(const SvdResult& s) {
    const double sr = s.sigma[s.sigma.size() - 1];
    return sr > 0 ? s.sigma[0] / sr : std::numeric_limits<double>::infinity();
}

// Enclosure of the exact kappa of W + lambda I: the SVD of the computed sum, widened by the
// rounding of forming it (|fl(w + lambda) - (w + lambda)| <= u |w + lambda| on d entries).
Interval kappa_sum_enclosure(const SvdResult& sM, const Eigen::MatrixXd& M) {
    const double form = kU * M.diagonal().cwiseAbs().norm();
    SvdResult wide = sM;
    widen(wide, form);
    return kappa_enclosure(wide);
}

}  // namespace

CheckResult check_lemma_3_7(const Eigen::MatrixXd& W, const Eigen::MatrixXd& E, double factor) {
    validate(W, "lemma3.7");
    validate(E, "lemma3.7");
    if (E.rows() != W.rows() || E.cols() != W.cols())
        fail_data("lemma3.7: E and W differ in shape");
    const SvdResult sW = svd(W), sE = svd(E);
    const Eigen::MatrixXd M = W + E;
    const SvdResult sM = svd(M);
    const double form = kU * M.norm();  // rounding of forming W + E
    const Eigen::Index r = sW.sigma.size();
    Eigen::Index worst = 0;
    double worst_diff = -1;
    for (Eigen::Index i = 0; i < r; ++i) {
        const double diff = std::fabs(sM.sigma[i] - sW.sigma[i]);
        if (diff > worst_diff) worst_diff = diff, worst = i;
    }
    const double rad = sM.radius[worst] + sW.radius[worst] + form;
    CheckResult res;
    res.check = "lemma3.7";
    res.claim = "max_i |sigma_i(W+E) - sigma_i(W)| <= ||E||_2 (Weyl)";
    res.conventions = {{"norm", "spectral norm ||E||_2 = sigma_1(E)"}, {"svd", sW.method}};
    res.tolerances = {{"enclosure_radius", rad,
                       "SVD enclosures of W and W+E plus u*||W+E||_F for forming the sum"}};
    const double nE = factor * sE.sigma[0];
    const Interval nE_enc = Interval::around(nE, factor * sE.radius[0]);
    res.comparisons.push_back(compare(
        "weyl", "max_i |dsigma_i|", worst_diff, {std::max(0.0, worst_diff - rad), worst_diff + rad},
        Relation::le, factor == 1.0 ? "||E||_2" : "factor*||E||_2", nE, nE_enc,
        /*attainable=*/true));
    res.values = {{"||E||_2", sE.sigma[0]},
                  {"max_dsigma", worst_diff},
                  {"worst_index", double(worst)},
                  {"factor", factor}};
    res.instance = {{"W", W}, {"E", E}};
    res.finalize();
    return res;
}

CheckResult check_thm_3_8(const Eigen::MatrixXd& W, double lambda, double bound_factor) {
    validate(W, "thm3.8");
    const Eigen::MatrixXd M = W + lambda_correction(W.rows(), W.cols(), lambda);
    const SvdResult sW = svd(W), sM = svd(M);
    const double s1 = sW.sigma[0];
    CheckResult res;
    res.check = "thm3.8";
    res.claim = "lambda > sigma_1(W) => kappa(W+lambda I) <= (lambda+s1)/(lambda-s1)";
    res.conventions = {{"kappa", "strict, r = min(D, d)"},
                       {"I", "I_{D x d}: ones on the main diagonal"},
                       {"svd", sW.method}};
    const Interval s1_enc = sW.enclosure(0);
    const bool met = lambda > s1_enc.hi;  // decided on the enclosure: met only when proved
    res.hypotheses.push_back({"lambda_gt_sigma1", met,
                              "lambda = " + std::to_string(lambda) + ", sigma_1(W) in [" +
                                  std::to_string(s1_enc.lo) + ", " + std::to_string(s1_enc.hi) +
                                  "]"});
    const double kM = kappa_value(sM), kW = kappa_value(sW);
    const Interval kM_enc = kappa_sum_enclosure(sM, M), kW_enc = kappa_enclosure(sW);
    // (lambda + s1)/(lambda - s1) over the enclosure of s1 (increasing in s1); lambda exact.
    const double b = bound_factor * (lambda + s1) / (lambda - s1);
    Interval b_enc = divide(Interval{lambda + s1_enc.lo, lambda + s1_enc.hi},
                            Interval{lambda - s1_enc.hi, lambda - s1_enc.lo});
    b_enc = {bound_factor * b_enc.lo * (1 - 4 * kU), bound_factor * b_enc.hi * (1 + 4 * kU)};
    if (met) {
        res.comparisons.push_back(compare("weyl_bound", "kappa(W+lambda I)", kM, kM_enc,
                                          Relation::le, "(lambda+s1)/(lambda-s1)", b, b_enc));
        if (kW_enc.lo > b_enc.hi)
            res.comparisons.push_back(compare("guaranteed_decrease", "kappa(W+lambda I)", kM,
                                              kM_enc, Relation::le, "kappa(W)", kW, kW_enc));
    }
    res.values = {{"lambda", lambda}, {"sigma_1(W)", s1},
                  {"kappa(W)", kW},   {"kappa(W+lambda I)", kM},
                  {"weyl_bound", b},  {"condition_met", met ? 1.0 : 0.0}};
    res.instance = {{"W", W}};
    res.finalize();
    return res;
}

CheckResult check_thm_3_8_informal(const Eigen::MatrixXd& W, double lambda) {
    validate(W, "thm3.8-informal");
    const Eigen::MatrixXd M = W + lambda_correction(W.rows(), W.cols(), lambda);
    const SvdResult sW = svd(W), sM = svd(M);
    CheckResult res;
    res.check = "thm3.8-informal";
    res.claim = "lambda >= 2 => kappa(W + lambda I) < kappa(W) (the paper's informal claim)";
    res.conventions = {{"kappa", "strict, r = min(D, d)"}, {"svd", sW.method}};
    res.hypotheses.push_back({"lambda_ge_2", lambda >= 2, "lambda = " + std::to_string(lambda)});
    const double kM = kappa_value(sM), kW = kappa_value(sW);
    if (lambda >= 2)
        res.comparisons.push_back(compare("decrease", "kappa(W+lambda I)", kM,
                                          kappa_sum_enclosure(sM, M), Relation::le, "kappa(W)", kW,
                                          kappa_enclosure(sW)));
    res.values = {{"lambda", lambda},
                  {"sigma_1(W)", sW.sigma[0]},
                  {"kappa(W)", kW},
                  {"kappa(W+lambda I)", kM},
                  {"condition_met", lambda > sW.sigma[0] ? 1.0 : 0.0}};
    res.instance = {{"W", W}};
    res.finalize();
    return res;
}

// ---------------------------------------------------------------- runs
namespace {

// W families for the lambda checks: Gaussian with scale log-uniform over 1e-3..1e2, a prescribed
// spectrum with kappa(W) log-uniform in [1, 1e6], and "anti-aligned" W = -(lambda - a) I + noise
// whose diagonal cancels lambda (the counterexample family of MATH.md §2).
Eigen::MatrixXd draw_w(const std::string& fam, long D, long d, double lambda, Rng& rng) {
    if (fam == "gaussian")
        return rng.gaussian(D, d, rng.log_uniform(1e-3, 1e2) / std::sqrt(double(D)));
    if (fam == "spectrum") {
        const long r = std::min(D, d);
        return rng.with_spectrum(
            D, d, geometric_spectrum(r, rng.log_uniform(1e-2, 1e2), rng.log_uniform(1, 1e6)));
    }
    Eigen::MatrixXd W = rng.gaussian(D, d, 1e-2);
    W.diagonal().setConstant(-(lambda - rng.uniform(0.01, 1.0)));
    W(0, 0) = rng.uniform(0.5, 2.0);
    return W;
}

template <class CheckFn>
CheckRun run_lambda_check(const RunOptions& opt, const std::string& name, const std::string& claim,
                          const std::string& headline, bool classify, CheckFn fn) {
    RunLoop loop(opt, name, claim, headline);
    const auto shapes = weight_shapes(opt, {"large", 256, 64});
    const std::vector<std::string> fams = {"gaussian", "spectrum", "anti-aligned"};
    std::vector<std::string> names;
    for (const auto& sh : shapes)
        for (const auto& fam : fams) names.push_back(sh.name + "/" + fam);
    const long per = loop.per_regime(names, 32, 120);
    std::uint64_t i = 0;
    for (const auto& sh : shapes)
        for (const auto& fam : fams)
            for (long t = 0; t < per && !loop.stopped(); ++t, ++i) {
                std::string regime = sh.name + "/" + fam;
                if (loop.skip(i, regime)) continue;
                Rng rng(loop.seed(i));
                // lambda: the paper's 10, the informal threshold 2, or log-uniform in [0.1, 100]
                const int pick = int(t % 3);
                const double lambda = pick == 0   ? 10.0
                                      : pick == 1 ? 2.0
                                                  : rng.log_uniform(0.1, 100);
                CheckResult r = fn(draw_w(fam, sh.D, sh.d, lambda, rng), lambda, rng);
                if (classify) regime += r.value("condition_met") > 0 ? "/lambda>s1" : "/lambda<=s1";
                loop.add(std::move(r), regime, loop.seed(i));
            }
    return loop.finish();
}

}  // namespace

CheckRun run_lemma_3_7(const RunOptions& opt) {
    return run_lambda_check(
        opt, "lemma3.7", "|sigma_i(W+E) - sigma_i(W)| <= ||E||_2, E = lambda I or Gaussian", "weyl",
        false, [](const Eigen::MatrixXd& W, double lambda, Rng& rng) {
            // E = lambda I (Weyl is tight when W's singular directions align)
            // or a Gaussian perturbation of norm ~ lambda, drawn from the seed
            Eigen::MatrixXd E = lambda_correction(W.rows(), W.cols(), lambda);
            if (rng.uniform() < 0.5)
                E = rng.gaussian(W.rows(), W.cols(), lambda / std::sqrt(double(W.rows())));
            return check_lemma_3_7(W, E);
        });
}

CheckRun run_thm_3_8(const RunOptions& opt) {
    return run_lambda_check(
        opt, "thm3.8", "lambda > sigma_1(W) => kappa(W+lambda I) <= (lambda+s1)/(lambda-s1)",
        "weyl_bound", false,
        [](const Eigen::MatrixXd& W, double lambda, Rng&) { return check_thm_3_8(W, lambda); });
}

CheckRun run_thm_3_8_informal(const RunOptions& opt) {
    return run_lambda_check(opt, "thm3.8-informal", "lambda >= 2 => kappa(W+lambda I) < kappa(W)",
                            "decrease", true, [](const Eigen::MatrixXd& W, double lambda, Rng&) {
                                return check_thm_3_8_informal(W, lambda);
                            });
}

}  // namespace attnspec::proofs
