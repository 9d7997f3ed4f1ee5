// Lemma 3.7 (Weyl) and the Thm 3.8 checks (thm3.8, thm3.8-sufficient, thm3.8-trained,
// thm3.8-above-sigma1): closed forms, not_applicable, planted violations, the strict relation.
#include "attnspec/attention/corrections.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/proofs/thm_3_8.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::proofs;

namespace {
Eigen::MatrixXd diag2(double a, double b) {
    Eigen::MatrixXd W = Eigen::MatrixXd::Zero(2, 2);
    W(0, 0) = a;
    W(1, 1) = b;
    return W;
}
}  // namespace

TEST_CASE("Relation::lt is strict: equality refutes it", "[thm3.8]") {
    auto c =
        compare("c", "a", 1.0, Interval::point(1.0), Relation::lt, "b", 1.0, Interval::point(1.0));
    CHECK(c.verdict == Verdict::violated);  // 1 < 1 is false (le would say holds)
    CHECK(std::string(to_string(Relation::lt)) == "<");
    c = compare("c", "a", 1.0, Interval::around(1.0, 0.1), Relation::lt, "b", 2.0,
                Interval::around(2.0, 0.1));
    CHECK(c.verdict == Verdict::holds);
    c = compare("c", "a", 1.0, Interval::around(1.0, 0.6), Relation::lt, "b", 2.0,
                Interval::around(2.0, 0.6));
    CHECK(c.verdict == Verdict::inconclusive);
}

TEST_CASE("W = diag(-9.9, 1), lambda = 10: lambda > sigma_1 alone does not give a decrease",
          "[thm3.8]") {
    const Eigen::MatrixXd W = diag2(-9.9, 1);
    // W + 10 I = diag(0.1, 11): kappa 110 > kappa(W) = 9.9 although lambda > sigma_1 = 9.9.
    auto above = check_thm_3_8_above_sigma1(W, 10.0);
    CHECK(above.verdict == Verdict::violated);
    CHECK(above.comparison("decrease")->rel == Relation::lt);
    CHECK_THAT(above.value("kappa(W+lambda I)"), Catch::Matchers::WithinRel(110.0, 64 * test::kU));
    CHECK(above.value("sufficient_met") == 0.0);
    // The proved bound holds (kappa <= (10 + 9.9)/(10 - 9.9) = 199) and the sufficient condition
    // kappa(W) > 199 fails, so thm3.8-sufficient does not apply.
    auto p = check_thm_3_8(W, 10.0);
    CHECK(p.verdict == Verdict::holds);
    CHECK_THAT(p.value("weyl_bound"), Catch::Matchers::WithinRel(199.0, 1e3 * test::kU));
    CHECK(check_thm_3_8_sufficient(W, 10.0).verdict == Verdict::not_applicable);
}

TEST_CASE("thm3.8-sufficient: decrease on an ill-conditioned W, and its planted violation",
          "[thm3.8][planted]") {
    const Eigen::MatrixXd W = diag2(1, 1e-3);  // kappa(W) = 1000 > (10 + 1)/(10 - 1)
    auto s = check_thm_3_8_sufficient(W, 10.0);
    CHECK(s.verdict == Verdict::holds);
    REQUIRE(s.comparison("decrease") != nullptr);
    CHECK(s.comparison("decrease")->rel == Relation::lt);
    CHECK_THAT(s.value("kappa(W+lambda I)"),  // kappa(W + 10 I) = 11 / 10.001 exactly
               Catch::Matchers::WithinRel(11.0 / 10.001, 64 * test::kU));
    // Planted: the right side scaled to 1e-3 kappa(W) = 1 < 1.0999: must be violated.
    CHECK(check_thm_3_8_sufficient(W, 10.0, 1e-3).verdict == Verdict::violated);
    // lambda <= sigma_1: not applicable, never violated
    CHECK(check_thm_3_8_sufficient(diag2(5, 1e-3), 3.0).verdict == Verdict::not_applicable);
}

TEST_CASE("thm3.8-trained: ||W|| <= 1, lambda >= 2 fails only where kappa(W) is small",
          "[thm3.8][planted]") {
    // kappa(W) = 1: W + 2I = diag(2.99, 1.01), kappa 2.96 > 1 (decrease fails), <= 3 (bound holds)
    auto f = check_thm_3_8_trained(diag2(0.99, -0.99), 2.0);
    CHECK(f.verdict == Verdict::violated);
    CHECK(f.comparison("decrease")->verdict == Verdict::violated);
    CHECK(f.comparison("bound")->verdict == Verdict::holds);
    // kappa(W) = 100: W + 2I = diag(2.9, 2.009), kappa 1.44 < 100 and <= 3
    auto h = check_thm_3_8_trained(diag2(0.9, 0.009), 2.0);
    CHECK(h.verdict == Verdict::holds);
    // Planted: the bound scaled by 0.3 (0.9 < 1.44) must be violated, the decrease still holds.
    auto planted = check_thm_3_8_trained(diag2(0.9, 0.009), 2.0, 0.3);
    CHECK(planted.comparison("bound")->verdict == Verdict::violated);
    CHECK(planted.comparison("decrease")->verdict == Verdict::holds);
    // Hypotheses: ||W|| > 1 or lambda < 2 -> not_applicable
    CHECK(check_thm_3_8_trained(diag2(2, 1), 10.0).verdict == Verdict::not_applicable);
    CHECK(check_thm_3_8_trained(diag2(0.9, 0.009), 1.5).verdict == Verdict::not_applicable);
}

TEST_CASE("thm3.8 hypotheses: not_applicable is not violated", "[thm3.8]") {
    const Eigen::MatrixXd W = diag2(5, 1);
    CHECK(check_thm_3_8(W, 3.0).verdict == Verdict::not_applicable);  // lambda <= sigma_1
    CHECK(check_thm_3_8_above_sigma1(W, 3.0).verdict == Verdict::not_applicable);
    for (double bad : {-1.0, std::nan("")}) {
        CHECK_THROWS_AS(check_thm_3_8(W, bad), Error);
        CHECK_THROWS_AS(check_thm_3_8_sufficient(W, bad), Error);
        CHECK_THROWS_AS(check_thm_3_8_trained(W, bad), Error);
        CHECK_THROWS_AS(check_thm_3_8_above_sigma1(W, bad), Error);
    }
}

TEST_CASE("planted violations flip thm3.8 and lemma3.7", "[thm3.8][planted]") {
    const Eigen::MatrixXd W = diag2(1, 1e-3);
    // Weyl bound: W = diag(1, 0.5), lambda = 2 -> kappa(W+2I) = 3/2.5 = 1.2, bound 3.
    // A bound scaled by 0.3 (0.9 < 1.2) must be violated.
    const Eigen::MatrixXd W2 = diag2(1, 0.5);
    CHECK(check_thm_3_8(W2, 2.0, 0.3).verdict == Verdict::violated);
    CHECK(check_thm_3_8(W2, 2.0, 1.0).verdict == Verdict::holds);
    // Weyl is attained by E = lambda I on a diagonal W >= 0: a factor 0.5 must be violated.
    const Eigen::MatrixXd E = lambda_correction(2, 2, 3.0);
    CHECK(check_lemma_3_7(W, E, 1.0).verdict == Verdict::holds);
    CHECK(check_lemma_3_7(W, E, 0.5).verdict == Verdict::violated);
}

TEST_CASE("lemma3.7, thm3.8 and thm3.8-sufficient runs hold on every applicable instance",
          "[thm3.8]") {
    RunOptions opt;
    opt.seed = 77;
    auto lem = run_lemma_3_7(opt);
    CHECK(lem.count(Verdict::violated) == 0);
    CHECK(lem.count(Verdict::holds) == static_cast<int>(lem.results.size()));
    auto thm = run_thm_3_8(opt);
    CHECK(thm.count(Verdict::violated) == 0);
    CHECK(thm.count(Verdict::not_applicable) > 0);  // the sweep reaches lambda <= sigma_1
    CHECK(thm.count(Verdict::holds) > 0);
    auto suf = run_thm_3_8_sufficient(opt);
    CHECK(suf.count(Verdict::violated) == 0);
    CHECK(suf.count(Verdict::inconclusive) == 0);
    CHECK(suf.count(Verdict::holds) > 0);
}

TEST_CASE("thm3.8-above-sigma1 is refuted, and only where the sufficient condition fails",
          "[thm3.8]") {
    RunOptions opt;
    opt.seed = 77;
    auto run = run_thm_3_8_above_sigma1(opt);
    int anti = 0;
    for (const auto& r : run.results) {
        if (r.verdict != Verdict::violated) continue;
        anti += r.regime.find("anti-aligned") != std::string::npos;
        INFO(r.regime << " kappa(W) " << r.value("kappa(W)") << " bound " << r.value("weyl_bound"));
        CHECK(r.value("sufficient_met") == 0.0);  // else thm3.8-sufficient would be refuted
    }
    CHECK(anti > 0);
}

TEST_CASE("thm3.8-trained: the bound always holds, decreases fail only for kappa(W) < 3",
          "[thm3.8]") {
    RunOptions opt;
    opt.seed = 77;
    auto run = run_thm_3_8_trained(opt);
    int failed = 0, applicable = 0;
    for (const auto& r : run.results) {
        if (r.verdict == Verdict::not_applicable) continue;
        ++applicable;
        CHECK(r.comparison("bound")->verdict == Verdict::holds);
        if (r.comparison("decrease")->verdict != Verdict::violated) continue;
        ++failed;
        INFO(r.regime << " kappa(W) " << r.value("kappa(W)"));
        CHECK(r.value("kappa(W)") < 3.0);
        CHECK(r.regime.rfind("kW[3", 0) != 0);
    }
    CHECK(applicable > 200);
    CHECK(failed > 0);
}
