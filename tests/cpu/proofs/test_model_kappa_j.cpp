// thm3.4-model and model-kappa-J: the Gram route of thm3.4 agrees with the dense one, biases are
// dropped (the paper's form), a planted wrong factor comes back violated, and the table's numbers
// re-computed from a dense SVD of J formed by route (a) on the heads of a small model file.
#include <cmath>

#include "attnspec/attention/jacobian.hpp"
#include "attnspec/proofs/model_kappa_j.hpp"
#include "attnspec/proofs/thm_3_4_model.hpp"
#include "test_heads.hpp"
#include "test_model_support.hpp"

using namespace attnspec;
using namespace attnspec::proofs;
using attnspec::test::random_test_head;

TEST_CASE("thm3.4 by the Gram route agrees with the dense route", "[model][thm3.4-model]") {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
        const Head h = random_test_head(4, 7, 3, seed, "none", LogitScale::inv_sqrt_d);
        Thm34Options gram;
        gram.j_route = Thm34JRoute::gram;
        const CheckResult a = check_thm_3_4(h), b = check_thm_3_4(h, gram);
        CHECK(b.verdict == a.verdict);
        CHECK(b.value("kappa(J)") == Approx(a.value("kappa(J)")).epsilon(1e-8));
        CHECK(b.value("bound") == a.value("bound"));  // the same factors
        CHECK(b.value("rank(J)") == a.value("rank(J)"));
        const Comparison* c = b.comparison("bound");
        REQUIRE(c);
        CHECK(c->lhs_enc.lo <= a.value("kappa(J)"));  // the enclosure contains the dense value
        CHECK(a.value("kappa(J)") <= c->lhs_enc.hi);
    }
}

TEST_CASE("thm3.4-model drops the biases and says so", "[model][thm3.4-model]") {
    Head h = random_test_head(4, 7, 3, 4, "none", LogitScale::inv_sqrt_d);
    const CheckResult plain = check_thm_3_4_model(h);
    h.b_Q = Eigen::VectorXd::Constant(3, 2.0);
    h.b_K = Eigen::VectorXd::Constant(3, -1.0);
    h.b_V = Eigen::VectorXd::Constant(3, 0.5);
    const CheckResult biased = check_thm_3_4_model(h);
    CHECK(biased.check == "thm3.4-model");
    CHECK(biased.value("kappa(J)") == plain.value("kappa(J)"));
    CHECK(biased.value("bound") == plain.value("bound"));
    bool named = false;
    for (const auto& [k, v] : biased.conventions)
        named |= k == "bias_form" && v.find("bias-free") == 0;
    CHECK(named);
}

TEST_CASE("thm3.4-model: a planted wrong factor is violated", "[model][thm3.4-model][planted]") {
    Thm34Options o;
    o.bound_factor = 1e-9;  // kappa(J) <= 1e-9 bound: false on any head
    const CheckResult r =
        check_thm_3_4_model(random_test_head(4, 7, 3, 5, "none", LogitScale::inv_sqrt_d), o);
    CHECK(r.verdict == Verdict::violated);
    CHECK(r.comparison("bound")->lhs_enc.lo > r.comparison("bound")->rhs_enc.hi);
}

TEST_CASE("model-kappa-J: every row re-computed from a dense SVD on the shortest sentence",
          "[model][model-kappa-J]") {
    const test::ModelFixture f;  // 2 layers, 3 heads, sentences of 5 and 3 tokens, s = 0.5
    const test::FixtureDatasets files("fixture-kj", f);
    RunOptions opt;
    opt.dataset = "fixture-kj";
    const CheckRun run = run_model_kappa_j(opt);
    const ExperimentTable& t = run.table;
    CHECK(run.kind == "experiment");
    REQUIRE(t.axis_names == std::vector<std::string>{"layer", "head", "sentence", "verdict"});
    REQUIRE(t.rows() == size_t(f.layers * f.heads));  // default: the shortest sentence only
    int holds = 0;
    for (size_t i = 0; i < t.rows(); ++i) {
        const int l = std::stoi(t.axes[0][i]), hd = std::stoi(t.axes[1][i]);
        CHECK(t.axes[2][i] == "1");  // 3 tokens
        Head h;
        h.X = test::fixture_matrix(3, f.D, test::fixture_seed(l, 0, 3 + 1));
        h.W_Q = test::fixture_matrix(f.D, f.d, test::fixture_seed(l, hd, 0));
        h.W_K = test::fixture_matrix(f.D, f.d, test::fixture_seed(l, hd, 1));
        h.W_V = test::fixture_matrix(f.D, f.d, test::fixture_seed(l, hd, 2));
        h.s = f.s;
        const double kJ = test::jacobi_kappa(jacobian_weights(h));  // bias-free, dense
        INFO("layer " << l << " head " << hd);
        CHECK(test::table_column(t, "N")[i] == 3);
        CHECK(test::table_column(t, "kappa_J")[i] == Approx(kJ).epsilon(1e-8));
        CHECK(test::table_column(t, "kappa_X")[i] ==
              Approx(test::jacobi_kappa(h.X)).epsilon(1e-10));
        CHECK(test::table_column(t, "kappa_WQ")[i] ==
              Approx(test::jacobi_kappa(h.W_Q)).epsilon(1e-10));
        const double bound = test::table_column(t, "bound")[i];
        CHECK(test::table_column(t, "ratio")[i] == Approx(kJ / bound).epsilon(1e-8));
        CHECK(t.axes[3][i] == (kJ < bound ? "holds" : "violated"));
        holds += t.axes[3][i] == "holds";
    }
    CHECK_THAT(test::table_attribute(t, "finding"),
               Catch::Contains("holds " + std::to_string(holds) + ","));
    // The fixture's heads have biases: the table says they were dropped, not that there were none.
    CHECK(test::table_attribute(t, "bias_form") == "bias-free (paper form)");
    // Records carry no verdict of their own (experiments never do) and no matrices.
    for (const auto& r : run.results) {
        CHECK(r.verdict == Verdict::not_applicable);
        CHECK(r.instance.empty());
    }
}

TEST_CASE("thm3.4-model runs per layer regime and --thorough adds every sentence",
          "[model][thm3.4-model]") {
    const test::ModelFixture f;
    const test::FixtureDatasets files("fixture-t34", f);
    RunOptions opt;
    opt.dataset = "fixture-t34";
    opt.thorough = true;
    const CheckRun run = run_thm_3_4_model(opt);
    REQUIRE(run.results.size() == size_t(f.layers * f.heads * 2));
    CHECK(run.results.front().regime == "fixture-t34/L0");
    CHECK(run.results.back().regime == "fixture-t34/L1");
    CHECK(run.results.front().value("sentence") == 1);  // shortest first
    CHECK(run.results.back().value("sentence") == 0);
    CHECK(run.results.back().value("N") == 5);
    for (const auto& r : run.results)
        for (const auto& [k, v] : r.conventions)
            if (k == "bias_form") CHECK(v == "bias-free (paper form)");
    opt.thorough = false;
    opt.regimes = {"L1"};
    const CheckRun one = run_thm_3_4_model(opt);
    REQUIRE(one.results.size() == size_t(f.heads));
    for (const auto& r : one.results) CHECK(r.value("layer") == 1);
}
