// Lemma 3.7 (Weyl) and Thm 3.8: closed forms, not_applicable, planted violations.
#include "attnspec/attention/corrections.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/proofs/thm_3_8.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::proofs;

TEST_CASE("MATH.md counterexample W = diag(-9.9, 1), lambda = 10", "[thm3.8]") {
    Eigen::MatrixXd W(2, 2);
    W << -9.9, 0, 0, 1;
    // W + 10 I = diag(0.1, 11): kappa 110 > kappa(W) = 9.9 although lambda > sigma_1 = 9.9.
    auto inf = check_thm_3_8_informal(W, 10.0);
    CHECK(inf.verdict == Verdict::violated);
    CHECK_THAT(inf.value("kappa(W+lambda I)"), Catch::Matchers::WithinRel(110.0, 64 * test::kU));
    CHECK(inf.value("condition_met") == 1.0);
    // The proved form holds: kappa <= (10 + 9.9)/(10 - 9.9) = 199, and no decrease is guaranteed.
    auto p = check_thm_3_8(W, 10.0);
    CHECK(p.verdict == Verdict::holds);
    CHECK_THAT(p.value("weyl_bound"), Catch::Matchers::WithinRel(199.0, 1e3 * test::kU));
    CHECK(p.comparison("guaranteed_decrease") == nullptr);
}

TEST_CASE("thm3.8 guaranteed decrease on an ill-conditioned small W", "[thm3.8]") {
    Eigen::MatrixXd W(2, 2);
    W << 1, 0, 0, 1e-3;  // kappa(W) = 1000; lambda = 10: bound 11/9 < 1000 -> decrease guaranteed
    auto p = check_thm_3_8(W, 10.0);
    CHECK(p.verdict == Verdict::holds);
    REQUIRE(p.comparison("guaranteed_decrease") != nullptr);
    CHECK(p.comparison("guaranteed_decrease")->verdict == Verdict::holds);
    // kappa(W + 10 I) = 11 / 10.001 exactly
    CHECK_THAT(p.value("kappa(W+lambda I)"),
               Catch::Matchers::WithinRel(11.0 / 10.001, 64 * test::kU));
}

TEST_CASE("thm3.8 hypotheses: not_applicable is not violated", "[thm3.8]") {
    Eigen::MatrixXd W(2, 2);
    W << 5, 0, 0, 1;
    CHECK(check_thm_3_8(W, 3.0).verdict == Verdict::not_applicable);           // lambda <= sigma_1
    CHECK(check_thm_3_8_informal(W, 1.5).verdict == Verdict::not_applicable);  // lambda < 2
    CHECK_THROWS_AS(check_thm_3_8(W, -1.0), Error);                            // lambda < 0 refused
}

TEST_CASE("planted violations flip thm3.8 and lemma3.7", "[thm3.8][planted]") {
    Eigen::MatrixXd W(2, 2);
    W << 1, 0, 0, 1e-3;
    // Weyl bound tight case: W = diag(1, 0.5), lambda = 2 -> kappa(W+2I) = 3/2.5 = 1.2, bound 3.
    // A bound scaled by 0.3 (0.9 < 1.2) must be violated.
    Eigen::MatrixXd W2(2, 2);
    W2 << 1, 0, 0, 0.5;
    CHECK(check_thm_3_8(W2, 2.0, 0.3).verdict == Verdict::violated);
    CHECK(check_thm_3_8(W2, 2.0, 1.0).verdict == Verdict::holds);
    // Weyl is attained by E = lambda I on a diagonal W >= 0: a factor 0.5 must be violated.
    const Eigen::MatrixXd E = lambda_correction(2, 2, 3.0);
    CHECK(check_lemma_3_7(W, E, 1.0).verdict == Verdict::holds);
    CHECK(check_lemma_3_7(W, E, 0.5).verdict == Verdict::violated);
}

TEST_CASE("lemma3.7 and thm3.8 runs hold on every applicable instance", "[thm3.8]") {
    RunOptions opt;
    opt.seed = 77;
    auto lem = run_lemma_3_7(opt);
    CHECK(lem.count(Verdict::violated) == 0);
    CHECK(lem.count(Verdict::holds) == static_cast<int>(lem.results.size()));
    auto thm = run_thm_3_8(opt);
    CHECK(thm.count(Verdict::violated) == 0);
    CHECK(thm.count(Verdict::not_applicable) > 0);  // the sweep reaches lambda <= sigma_1
    CHECK(thm.count(Verdict::holds) > 0);
    // The informal claim is refuted on the anti-aligned family, with the sufficient condition met.
    auto inf = run_thm_3_8_informal(opt);
    bool refuted_with_condition = false;
    for (const auto& r : inf.results)
        refuted_with_condition |= r.verdict == Verdict::violated && r.value("condition_met") == 1.0;
    CHECK(refuted_with_condition);
}
