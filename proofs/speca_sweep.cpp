// specA-sweep, an experiment: kappa(J) of SpecA (C = lambda I_{D x d}, frozen) as lambda grows,
// over token scale x placement x logit scale (proofs/speca_sweep.md). Symbols: J_lambda = J at
// effective weights W + lambda I (on Q, K, V or on Q only).
#include "attnspec/proofs/speca_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "attnspec/attention/corrections.hpp"
#include "attnspec/attention/jacobian.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/proofs/attention_instances.hpp"
#include "attnspec/spectral/svd.hpp"

namespace attnspec::proofs {

namespace {
constexpr double kSaturated = 1 - 1e-6;  // max attention probability above which we say saturated
enum Col { kLambda, kKappa, kKappaLo, kKappaHi, kMaxProb, kKappaS, kRank, kFull, kCols };

// One point of the curve: row of instance/sweep.
Eigen::RowVectorXd evaluate(const Head& base, double lambda, bool q_only) {
    Head h = base;
    h.C_Q = h.C_K = h.C_V = Eigen::MatrixXd();
    if (lambda > 0) {
        const Eigen::MatrixXd C = lambda_correction(h.D(), h.d(), lambda);
        h.C_Q = C;
        if (!q_only) h.C_K = h.C_V = C;
    }
    const Head e = h.effective();
    const Forward<double> f = attention_forward<double>(e);
    const SvdResult s = svd(jacobian_weights(e));
    const Eigen::Index rows = e.N() * e.d(), cols = 3 * e.D() * e.d();
    const Kappa k = kappa(s, rows, cols, KappaConvention::strict);
    const Eigen::Index r = s.sigma.size();
    const bool full = k.rank == r && s.enclosure(r - 1).lo > 0;
    Eigen::RowVectorXd row(kCols);
    row << lambda, k.value, k.enclosure.lo,
        full ? k.enclosure.hi : std::numeric_limits<double>::infinity(), f.S.maxCoeff(),
        kappa(f.S).value, double(k.rank), full ? 1.0 : 0.0;
    return row;
}

double median(std::vector<double> x) {
    if (x.empty()) return std::numeric_limits<double>::quiet_NaN();
    std::sort(x.begin(), x.end());
    const size_t n = x.size();
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

std::string lambda_text(double l) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", l);
    return buf;
}
}  // namespace

const std::vector<double>& speca_lambdas() {
    static const std::vector<double> grid = {0, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100};
    return grid;
}

CheckResult sweep_speca(const Head& base, bool q_only, const std::vector<double>& lambdas_in) {
    base.validate("specA-sweep");
    std::vector<double> lambdas = lambdas_in.empty() ? speca_lambdas() : lambdas_in;
    for (double l : lambdas)
        if (!(l >= 0) || !std::isfinite(l))
            fail_data("specA-sweep: lambda must be finite and >= 0");
    for (double must : {0.0, 10.0})
        if (std::find(lambdas.begin(), lambdas.end(), must) == lambdas.end())
            lambdas.push_back(must);
    std::sort(lambdas.begin(), lambdas.end());
    lambdas.erase(std::unique(lambdas.begin(), lambdas.end()), lambdas.end());
    Eigen::MatrixXd sweep(Eigen::Index(lambdas.size()), kCols);
    Eigen::Index i10 = 0, argmin = 0;
    for (Eigen::Index i = 0; i < sweep.rows(); ++i) {
        sweep.row(i) = evaluate(base, lambdas[size_t(i)], q_only);
        if (lambdas[size_t(i)] == 10.0) i10 = i;
        if (sweep(i, kFull) > 0 &&
            (sweep(argmin, kFull) == 0 || sweep(i, kKappa) < sweep(argmin, kKappa)))
            argmin = i;
    }
    CheckResult res;
    res.check = "specA-sweep";
    res.claim = "experiment: kappa(J) of SpecA as lambda grows (no claim tested)";
    res.conventions = {
        {"kappa(J)", "strict, r = min(Nd, 3Dd); enclosure hi = inf when J is rank-deficient"},
        {"correction", q_only ? "C_Q = lambda I_{D x d} (Q only), frozen; J at W + C"
                              : "C_Q = C_K = C_V = lambda I_{D x d}, frozen; J at W + C"},
        {"sweep columns",
         "lambda, kappa(J), kappa lo, kappa hi, max attention probability, "
         "kappa(S), rank(J), full rank"}};
    const bool lowered = sweep(i10, kKappaHi) < sweep(0, kKappaLo) && sweep(0, kFull) > 0;
    res.values = {{"kappa(J_0)", sweep(0, kKappa)},
                  {"kappa(J_10)", sweep(i10, kKappa)},
                  {"lowered_at_10", lowered ? 1.0 : 0.0},
                  {"saturated_at_10", sweep(i10, kMaxProb) > kSaturated ? 1.0 : 0.0},
                  {"max_prob_at_10", sweep(i10, kMaxProb)},
                  {"lambda_argmin_kappa", sweep(argmin, kLambda)},
                  {"q_only", q_only ? 1.0 : 0.0}};
    store_head(res, base);  // adds values/s
    res.instance.emplace_back("sweep", sweep);
    res.note = "experiment record: no claim is tested, so no verdict";
    res.verdict = Verdict::not_applicable;
    return res;
}

ExperimentTable speca_table(const std::vector<CheckResult>& results) {
    // cell key: tokens/placement/scale (the regime without its shape) -> lambda -> rows of curves
    struct Acc {
        std::vector<double> ratio, max_prob;
        double n = 0, full0 = 0, lowered = 0, raised = 0, saturated = 0, deficient = 0;
    };
    std::vector<std::string> cells;
    std::map<std::string, std::map<double, Acc>> acc;
    for (const auto& r : results) {
        const auto slash = r.regime.find('/');
        const std::string cell = slash == std::string::npos ? r.regime : r.regime.substr(slash + 1);
        if (!acc.count(cell)) cells.push_back(cell);
        const Eigen::MatrixXd& sw = r.instance.back().second;
        for (Eigen::Index i = 0; i < sw.rows(); ++i) {
            Acc& a = acc[cell][sw(i, kLambda)];
            const bool full0 = sw(0, kFull) > 0, full = sw(i, kFull) > 0;
            a.n += 1;
            a.full0 += full0;
            a.lowered += full0 && sw(i, kKappaHi) < sw(0, kKappaLo);
            a.raised += full0 && (!full || sw(i, kKappaLo) > sw(0, kKappaHi));
            a.saturated += sw(i, kMaxProb) > kSaturated;
            a.deficient += !full;
            if (full0 && full) a.ratio.push_back(sw(i, kKappa) / sw(0, kKappa));
            a.max_prob.push_back(sw(i, kMaxProb));
        }
    }
    ExperimentTable t;
    t.axis_names = {"tokens", "placement", "scale", "lambda"};
    t.value_names = {"instances",   "n_full_rank_at_0", "n_lowered",          "n_raised",
                     "n_saturated", "n_rank_deficient", "median_kappa_ratio", "median_max_prob"};
    t.axes.resize(4);
    t.values.resize(t.value_names.size());
    // What the sweep measures, stated beside its table (the page gives it before the finding).
    t.attributes = {
        {"weights", "random, untrained heads: W_Q, W_K, W_V i.i.d. N(0, 1/D), no correction"},
        {"correction",
         "lambda I_{D x d} added, frozen, to W_Q, W_K and W_V (QKV) or to W_Q only (Q)"},
        {"tokens",
         "layernorm (||x|| = sqrt(D)), unit-norm (||x|| = 1), raw (i.i.d. N(0, 1), ||x|| ~ "
         "sqrt(D))"}};
    for (const auto& cell : cells) {
        // cell = tokens/placement/scale, where scale may itself hold a '/' ("s=1/sqrt(d)")
        const auto a = cell.find('/'), b = cell.find('/', a + 1);
        for (const auto& [lambda, x] : acc[cell]) {
            t.axes[0].push_back(cell.substr(0, a));
            t.axes[1].push_back(cell.substr(a + 1, b - a - 1));
            t.axes[2].push_back(cell.substr(b + 1));
            t.axes[3].push_back(lambda_text(lambda));
            const double v[] = {x.n,         x.full0,     x.lowered,       x.raised,
                                x.saturated, x.deficient, median(x.ratio), median(x.max_prob)};
            for (size_t k = 0; k < t.values.size(); ++k) t.values[k].push_back(v[k]);
        }
    }
    return t;
}

namespace {
struct SweepShape {
    const char* name;
    long N, D, d;
};

// A base head (weights N(0, 1/D), no correction) with token rows at the given scale:
// raw = i.i.d. N(0, 1) entries (||x|| ~ sqrt(D)), layernorm = rows centred to unit variance
// (||x|| = sqrt(D)), unit-norm = rows scaled to ||x|| = 1.
Head base_head(const SweepShape& sh, const std::string& tokens, std::uint64_t seed) {
    RandomSpec spec;
    spec.N = sh.N;
    spec.D = sh.D;
    spec.d = sh.d;
    spec.seed = seed;
    spec.token_dist = tokens == "layernorm" ? "layernorm" : "gaussian";
    Head h = random_head(spec);
    if (tokens == "unit-norm") h.X = h.X.rowwise().normalized();
    return h;
}
}  // namespace

CheckRun run_speca_sweep(const RunOptions& opt) {
    RunLoop loop(opt, "specA-sweep",
                 "where does lambda = 10 lower kappa(J) of SpecA, and where does it "
                 "saturate the softmax? (base weights N(0, 1/D), no correction)",
                 "");
    std::vector<SweepShape> shapes = {
        {"N<D", 6, 10, 3}, {"N>D", 12, 5, 3}, {"d=1", 8, 8, 1}, {"d=D", 6, 4, 4}};
    if (opt.thorough) shapes.push_back({"N>D-large", 32, 16, 8});
    if (opt.shape.size() == 2) shapes = {{"given", 2 * opt.shape[0], opt.shape[0], opt.shape[1]}};
    const char* tokens[] = {"layernorm", "unit-norm", "raw"};
    // Each head drawn in a shape x tokens cell gives 4 curves (placement x logit scale). By
    // default `per` heads per cell; --trials N means N curves: N / cells per cell (one more for the
    // first N mod cells), from as many heads as that takes. Head t of cell c has instance index
    // c * stride + t (stride = per by default: the seeds of the default grid).
    const long cells = long(shapes.size()) * 3;
    const long per = loop.per_regime(cells * 4, 3, 12);
    const long stride = opt.trials > 0 ? ((opt.trials + cells - 1) / cells + 3) / 4 : per;
    long c = 0;
    for (const auto& sh : shapes)
        for (const char* tok : tokens) {
            const long want =
                opt.trials > 0 ? opt.trials / cells + (c < opt.trials % cells ? 1 : 0) : 4 * per;
            long got = 0;
            for (long t = 0; t < stride && got < want && !loop.stopped(); ++t) {
                const std::uint64_t seed = loop.seed(static_cast<std::uint64_t>(c * stride + t));
                for (const bool q_only : {false, true})
                    for (const bool inv : {true, false}) {
                        const std::string regime = std::string(sh.name) + "/" + tok + "/" +
                                                   (q_only ? "Q" : "QKV") + "/" +
                                                   (inv ? "s=1/sqrt(d)" : "s=1");
                        if (got >= want || !loop.selected(regime)) continue;
                        loop.submit(regime, seed, [sh, tok, seed, q_only, inv] {
                            Head h = base_head(sh, tok, seed);  // the same head for all 4 curves
                            h.s = logit_scale(inv ? LogitScale::inv_sqrt_d : LogitScale::one, sh.d);
                            return sweep_speca(h, q_only);
                        });
                        ++got;
                    }
            }
            ++c;
        }
    CheckRun run = loop.finish();
    run.kind = "experiment";
    run.table = speca_table(run.results);
    return run;
}

}  // namespace attnspec::proofs
