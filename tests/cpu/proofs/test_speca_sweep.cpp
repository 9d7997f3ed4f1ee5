// specA-sweep, an experiment: the curve of one head, saturation, and the run's table with its
// four axes (lambda x token scale x placement x logit scale).
#include <set>

#include "attnspec/base/errors.hpp"
#include "attnspec/proofs/speca_sweep.hpp"
#include "test_heads.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::proofs;
using attnspec::test::random_test_head;

TEST_CASE("specA-sweep records one curve per head, with no verdict", "[specA]") {
    const Head h = random_test_head(6, 5, 3, 4);
    auto r = sweep_speca(h, false);
    CHECK(r.verdict == Verdict::not_applicable);  // an experiment tests no claim
    CHECK(r.comparisons.empty());
    REQUIRE(r.instance.back().first == "sweep");
    const Eigen::MatrixXd& sweep = r.instance.back().second;
    CHECK(sweep.rows() == static_cast<Eigen::Index>(speca_lambdas().size()));
    CHECK(sweep(0, 0) == 0.0);
    // lambda = 0 is the plain head whatever the placement
    auto q = sweep_speca(h, true);
    CHECK(q.value("kappa(J_0)") == r.value("kappa(J_0)"));
    CHECK(q.value("kappa(J_10)") != r.value("kappa(J_10)"));
    CHECK_THROWS_AS(sweep_speca(h, false, {0.0, -1.0}), Error);
}

TEST_CASE("specA-sweep: raw tokens scaled by 30 saturate the softmax at lambda = 10", "[specA]") {
    // logits grow like lambda^2 ||x||^2 with Q, K and V corrected: J_Q, J_K vanish and kappa(J)
    // cannot be lowered; with unit-norm rows (||x|| = 1) and s = 1/sqrt(d) it is not saturated.
    Head big = random_test_head(6, 5, 3, 4);
    big.X = big.X * 30;
    auto s = sweep_speca(big, false);
    CHECK(s.value("saturated_at_10") == 1.0);
    CHECK(s.value("lowered_at_10") == 0.0);
    Head unit = random_test_head(6, 5, 3, 4);
    unit.X = unit.X.rowwise().normalized();
    unit.s = 1 / std::sqrt(3.0);
    CHECK(sweep_speca(unit, true).value("saturated_at_10") == 0.0);
}

TEST_CASE("specA-sweep run: an experiment whose table has the four axes", "[specA]") {
    RunOptions opt;
    opt.seed = 5;
    opt.trials = 48;  // one head per (shape, tokens), each under 2 placements x 2 scales
    auto run = run_speca_sweep(opt);
    CHECK(run.kind == "experiment");
    const ExperimentTable& t = run.table;
    REQUIRE(t.axis_names == std::vector<std::string>{"tokens", "placement", "scale", "lambda"});
    std::vector<std::set<std::string>> seen(4);
    for (size_t a = 0; a < 4; ++a) seen[a].insert(t.axes[a].begin(), t.axes[a].end());
    CHECK(seen[0] == std::set<std::string>{"layernorm", "unit-norm", "raw"});
    CHECK(seen[1] == std::set<std::string>{"QKV", "Q"});
    CHECK(seen[2] == std::set<std::string>{"s=1", "s=1/sqrt(d)"});
    CHECK(seen[3].size() == speca_lambdas().size());
    CHECK(t.rows() == 3 * 2 * 2 * speca_lambdas().size());
    // every cell counts every curve of its (tokens, placement, scale): 4 shapes x 1 head
    for (double n : t.values[0]) CHECK(n == 4.0);
    CHECK(run.results.size() == 48);
}
