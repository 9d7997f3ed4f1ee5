// Lemma 3.7 (Weyl) and the Thm 3.8 checks (thm3.8, thm3.8-sufficient, thm3.8-trained,
// thm3.8-above-sigma1); see proofs/lemma_3_7.md and proofs/thm_3_8.md.
// Symbols: W (D x d), lambda, I = I_{D x d}, M = W + lambda I, s1 = sigma_1(W).
#include "attnspec/proofs/thm_3_8.hpp"

#include <algorithm>
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

namespace {

// What every thm3.8 check needs about W and M = W + lambda I: values and enclosures of sigma_1(W),
// kappa(W), kappa(M), and of the Weyl bound (lambda + s1)/(lambda - s1).
struct Pair38 {
    SvdResult sW, sM;
    double s1 = 0, kW = 0, kM = 0, weyl = 0;
    Interval s1_enc, kW_enc, kM_enc, weyl_enc;
    bool lambda_gt_s1 = false;  // decided on the enclosure: true only when proved
};

Pair38 evaluate_pair(const Eigen::MatrixXd& W, double lambda, const char* who) {
    validate(W, who);
    if (!(lambda >= 0) || !std::isfinite(lambda))
        fail_data(std::string(who) + ": lambda must be finite and >= 0");
    const Eigen::MatrixXd M = W + lambda_correction(W.rows(), W.cols(), lambda);
    Pair38 p;
    p.sW = svd(W);
    p.sM = svd(M);
    p.s1 = p.sW.sigma[0];
    p.s1_enc = p.sW.enclosure(0);
    p.kW = kappa_value(p.sW);
    p.kM = kappa_value(p.sM);
    p.kW_enc = kappa_enclosure(p.sW);
    p.kM_enc = kappa_sum_enclosure(p.sM, M);
    p.lambda_gt_s1 = lambda > p.s1_enc.hi;
    if (p.lambda_gt_s1) {
        // increasing in s1, so evaluated at the ends of s1's interval; lambda is exact; 4u padding
        p.weyl = (lambda + p.s1) / (lambda - p.s1);
        const Interval b = divide(Interval{lambda + p.s1_enc.lo, lambda + p.s1_enc.hi},
                                  Interval{lambda - p.s1_enc.hi, lambda - p.s1_enc.lo});
        p.weyl_enc = {b.lo * (1 - 4 * kU), b.hi * (1 + 4 * kU)};
    } else {
        p.weyl = p.s1 < lambda ? (lambda + p.s1) / (lambda - p.s1)
                               : std::numeric_limits<double>::infinity();
        p.weyl_enc = Interval::point(std::numeric_limits<double>::infinity());
    }
    return p;
}

std::string interval_text(const Interval& x) {
    return "[" + std::to_string(x.lo) + ", " + std::to_string(x.hi) + "]";
}

Hypothesis lambda_gt_s1(const Pair38& p, double lambda) {
    return {"lambda_gt_sigma1", p.lambda_gt_s1,
            "lambda = " + std::to_string(lambda) + ", sigma_1(W) in " + interval_text(p.s1_enc)};
}

// kappa(W + lambda I) < factor * kappa(W), strict as in the stated claim.
Comparison decrease(const Pair38& p, double factor = 1.0) {
    return compare("decrease", "kappa(W+lambda I)", p.kM, p.kM_enc, Relation::lt,
                   factor == 1.0 ? "kappa(W)" : "factor*kappa(W)", factor * p.kW,
                   {factor * p.kW_enc.lo, factor * p.kW_enc.hi});
}

CheckResult base_result(const Pair38& p, const std::string& check, const std::string& claim,
                        const Eigen::MatrixXd& W, double lambda) {
    CheckResult res;
    res.check = check;
    res.claim = claim;
    res.conventions = {{"kappa", "strict, r = min(D, d)"},
                       {"I", "I_{D x d}: ones on the main diagonal"},
                       {"svd", p.sW.method}};
    res.values = {{"lambda", lambda},     {"sigma_1(W)", p.s1},
                  {"kappa(W)", p.kW},     {"kappa(W+lambda I)", p.kM},
                  {"weyl_bound", p.weyl}, {"condition_met", p.lambda_gt_s1 ? 1.0 : 0.0}};
    res.instance = {{"W", W}};
    return res;
}

}  // namespace

CheckResult check_thm_3_8(const Eigen::MatrixXd& W, double lambda, double bound_factor) {
    const Pair38 p = evaluate_pair(W, lambda, "thm3.8");
    CheckResult res = base_result(
        p, "thm3.8", "lambda > sigma_1(W) => kappa(W+lambda I) <= (lambda+s1)/(lambda-s1)", W,
        lambda);
    res.hypotheses.push_back(lambda_gt_s1(p, lambda));
    if (p.lambda_gt_s1)
        res.comparisons.push_back(compare(
            "weyl_bound", "kappa(W+lambda I)", p.kM, p.kM_enc, Relation::le,
            bound_factor == 1.0 ? "(lambda+s1)/(lambda-s1)" : "factor*(lambda+s1)/(lambda-s1)",
            bound_factor * p.weyl, {bound_factor * p.weyl_enc.lo, bound_factor * p.weyl_enc.hi}));
    res.finalize();
    return res;
}

CheckResult check_thm_3_8_sufficient(const Eigen::MatrixXd& W, double lambda, double rhs_factor) {
    const Pair38 p = evaluate_pair(W, lambda, "thm3.8-sufficient");
    CheckResult res = base_result(p, "thm3.8-sufficient",
                                  "lambda > s1 and kappa(W) > (lambda+s1)/(lambda-s1) => "
                                  "kappa(W+lambda I) < kappa(W)",
                                  W, lambda);
    res.hypotheses.push_back(lambda_gt_s1(p, lambda));
    const bool above = p.lambda_gt_s1 && p.kW_enc.lo > p.weyl_enc.hi;
    res.hypotheses.push_back({"kappa_W_gt_weyl_bound", above,
                              "kappa(W) in " + interval_text(p.kW_enc) +
                                  ", (lambda+s1)/(lambda-s1) in " + interval_text(p.weyl_enc)});
    if (above) res.comparisons.push_back(decrease(p, rhs_factor));
    res.finalize();
    return res;
}

CheckResult check_thm_3_8_trained(const Eigen::MatrixXd& W, double lambda, double bound_factor) {
    const Pair38 p = evaluate_pair(W, lambda, "thm3.8-trained");
    CheckResult res =
        base_result(p, "thm3.8-trained",
                    "||W||_2 <= 1 and lambda >= 2 => kappa(W+lambda I) < kappa(W)", W, lambda);
    const bool small = p.s1_enc.hi <= 1.0;
    res.hypotheses.push_back(
        {"norm_W_le_1", small, "sigma_1(W) in " + interval_text(p.s1_enc) + " (proved <= 1)"});
    res.hypotheses.push_back({"lambda_ge_2", lambda >= 2, "lambda = " + std::to_string(lambda)});
    if (small && lambda >= 2) {
        res.comparisons.push_back(decrease(p));
        // Weyl with sigma_1 <= 1: kappa(W + lambda I) <= (lambda+1)/(lambda-1) <= 3, attained by
        // W = diag(1, -1) at lambda = 2. lambda >= 2 is exact, so only the division rounds.
        const double b = (lambda + 1) / (lambda - 1);
        const Interval b_enc{bound_factor * b * (1 - 2 * kU), bound_factor * b * (1 + 2 * kU)};
        res.comparisons.push_back(
            compare("bound", "kappa(W+lambda I)", p.kM, p.kM_enc, Relation::le,
                    bound_factor == 1.0 ? "(lambda+1)/(lambda-1)" : "factor*(lambda+1)/(lambda-1)",
                    bound_factor * b, b_enc, /*attainable=*/true));
    }
    res.finalize();
    return res;
}

CheckResult check_thm_3_8_above_sigma1(const Eigen::MatrixXd& W, double lambda) {
    const Pair38 p = evaluate_pair(W, lambda, "thm3.8-above-sigma1");
    CheckResult res = base_result(p, "thm3.8-above-sigma1",
                                  "lambda > sigma_1(W) alone => kappa(W+lambda I) < kappa(W) "
                                  "(a reading known to be false; probed, not claimed)",
                                  W, lambda);
    res.hypotheses.push_back(lambda_gt_s1(p, lambda));
    if (p.lambda_gt_s1) res.comparisons.push_back(decrease(p));
    res.values.emplace_back("sufficient_met", p.lambda_gt_s1 && p.kW > p.weyl ? 1.0 : 0.0);
    res.finalize();
    return res;
}

// ---------------------------------------------------------------- runs
namespace {

// W families for the lambda checks: Gaussian with scale log-uniform over 1e-3..1e2, a prescribed
// spectrum with kappa(W) log-uniform in [1, 1e6], and "anti-aligned" W = -(lambda - a) I + noise
// whose diagonal cancels lambda (the counterexample family of docs/MATH.md §2).
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
                          const std::string& headline, CheckFn fn) {
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
                const std::string regime = sh.name + "/" + fam;
                if (loop.skip(i, regime)) continue;
                const std::uint64_t seed = loop.seed(i);
                loop.submit(regime, seed, [&fn, fam, D = sh.D, d = sh.d, t, seed] {
                    Rng rng(seed);
                    // lambda: the paper's 10, the threshold 2, or log-uniform in [0.1, 100]
                    const int pick = int(t % 3);
                    const double lambda = pick == 0   ? 10.0
                                          : pick == 1 ? 2.0
                                                      : rng.log_uniform(0.1, 100);
                    return fn(draw_w(fam, D, d, lambda, rng), lambda, rng);
                });
            }
    return loop.finish();
}

// W with ||W||_2 <= 1 (sigma_1 in [0.05, 0.99]; trained weights under weight decay / norm
// control): "spectrum" (kappa log-uniform in [1, 1e3]), "well-conditioned" (kappa log-uniform in
// [1, 4], to map the region kappa(W) < 3 densely), "anti-aligned" (the worst case for a decrease:
// near-diagonal with entries +s1, -s1, +-s1/kappa and the rest +-s1 kappa^-U(0,1), kappa
// log-uniform in [1, 4], noise 1e-3 * s1; then kappa(W + lambda I) reaches
// (lambda+s1)/(lambda-s1)).
Eigen::MatrixXd draw_trained_w(const std::string& fam, long D, long d, Rng& rng) {
    const long r = std::min(D, d);
    const double s1 = rng.uniform(0.05, 0.99);
    if (fam == "spectrum")
        return rng.with_spectrum(D, d, geometric_spectrum(r, s1, rng.log_uniform(1, 1e3)));
    if (fam == "well-conditioned")
        return rng.with_spectrum(D, d, geometric_spectrum(r, s1, rng.log_uniform(1, 4)));
    const double k = rng.log_uniform(1, 4);
    auto sign = [&] { return rng.uniform() < 0.5 ? -1.0 : 1.0; };
    Eigen::MatrixXd W = rng.gaussian(D, d, 1e-3 * s1);
    for (long i = 0; i < r; ++i) W(i, i) = sign() * s1 * std::pow(k, -rng.uniform());
    W(0, 0) = s1;
    if (r > 1) W(1, 1) = -s1;
    if (r > 2) W(2, 2) = sign() * s1 / k;
    return W * (s1 / svd(W).sigma[0]);
}

// The map of thm3.8-trained: kappa(W) band x lambda band.
std::string trained_regime(double kW, double lambda) {
    const char* kb = kW < 1.5  ? "kW<1.5"
                     : kW < 2  ? "kW[1.5,2)"
                     : kW < 3  ? "kW[2,3)"
                     : kW < 10 ? "kW[3,10)"
                               : "kW>=10";
    const char* lb = lambda == 2    ? "lambda=2"
                     : lambda < 10  ? "lambda(2,10)"
                     : lambda == 10 ? "lambda=10"
                                    : "lambda>10";
    return std::string(kb) + "/" + lb;
}

}  // namespace

CheckRun run_lemma_3_7(const RunOptions& opt) {
    return run_lambda_check(
        opt, "lemma3.7", "|sigma_i(W+E) - sigma_i(W)| <= ||E||_2, E = lambda I or Gaussian", "weyl",
        [](const Eigen::MatrixXd& W, double lambda, Rng& rng) {
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
        "weyl_bound",
        [](const Eigen::MatrixXd& W, double lambda, Rng&) { return check_thm_3_8(W, lambda); });
}

CheckRun run_thm_3_8_sufficient(const RunOptions& opt) {
    return run_lambda_check(opt, "thm3.8-sufficient",
                            "lambda > s1 and kappa(W) > (lambda+s1)/(lambda-s1) => "
                            "kappa(W+lambda I) < kappa(W)",
                            "decrease", [](const Eigen::MatrixXd& W, double lambda, Rng&) {
                                return check_thm_3_8_sufficient(W, lambda);
                            });
}

CheckRun run_thm_3_8_above_sigma1(const RunOptions& opt) {
    return run_lambda_check(opt, "thm3.8-above-sigma1",
                            "lambda > sigma_1(W) alone => kappa(W+lambda I) < kappa(W) (false "
                            "reading, probed)",
                            "decrease", [](const Eigen::MatrixXd& W, double lambda, Rng&) {
                                return check_thm_3_8_above_sigma1(W, lambda);
                            });
}

CheckRun run_thm_3_8_trained(const RunOptions& opt) {
    RunLoop loop(opt, "thm3.8-trained",
                 "||W||_2 <= 1 and lambda >= 2 => kappa(W+lambda I) < kappa(W)", "decrease");
    const auto shapes = weight_shapes(opt, {"large", 256, 64});
    const std::vector<std::string> fams = {"spectrum", "well-conditioned", "anti-aligned"};
    const long cells = long(shapes.size() * fams.size());
    const long per = loop.per_regime(cells, 32, 120);
    long c = 0;  // the regimes (kappa(W) x lambda bands) are known only after the draw: --trials N
                 // is spread over the shape x family cells, N / cells each, one more for the first
                 // N mod cells; instance i = c * per + t keeps the seeds of the default grid
    for (const auto& sh : shapes)
        for (const auto& fam : fams) {
            const long n =
                opt.trials > 0 ? opt.trials / cells + (c < opt.trials % cells ? 1 : 0) : per;
            for (long t = 0; t < n && !loop.stopped(); ++t) {
                const std::uint64_t seed = loop.seed(static_cast<std::uint64_t>(c * per + t));
                auto one = [fam, D = sh.D, d = sh.d, t, seed] {
                    Rng rng(seed);
                    const int pick = int(t % 3);  // lambda: 2, 10, or log-uniform in [2, 100]
                    const double lambda = pick == 0   ? 2.0
                                          : pick == 1 ? 10.0
                                                      : rng.log_uniform(2, 100);
                    CheckResult r = check_thm_3_8_trained(draw_trained_w(fam, D, d, rng), lambda);
                    r.regime = trained_regime(r.value("kappa(W)"), lambda);
                    return r;
                };
                // the regime is known after the draw: the filter applies as results are gathered
                loop.submit("", seed, one, [&loop, cell = sh.name + "/" + fam](CheckResult& r) {
                    return loop.selected(r.regime) || loop.selected(cell);
                });
            }
            ++c;
        }
    CheckRun run = loop.finish();
    // the map reads in band order (kappa(W) bands, then lambda bands), not in order of appearance
    auto rank = [](const std::string& reg) {
        int k = 0;
        for (const char* b : {"kW<1.5", "kW[1.5,2)", "kW[2,3)", "kW[3,10)", "kW>=10"}) {
            if (reg.rfind(b, 0) == 0) break;
            ++k;
        }
        int l = 0;
        for (const char* b : {"lambda=2", "lambda(2,10)", "lambda=10", "lambda>10"}) {
            if (reg.find(b) != std::string::npos) break;
            ++l;
        }
        return 8 * k + l;
    };
    std::stable_sort(run.regimes.begin(), run.regimes.end(),
                     [&](const RegimeSummary& a, const RegimeSummary& b) {
                         return rank(a.regime) < rank(b.regime);
                     });
    return run;
}

}  // namespace attnspec::proofs
