// thm3.4 findings: shape and rank ratio on every record, robust / fragile violations (planted
// both ways), search records that replay from their own file, and a search bounded by
// evaluations that a seed reproduces exactly.
#include <cmath>

#include "attnspec/attention/attention.hpp"
#include "attnspec/io/h5.hpp"
#include "attnspec/proofs/registry.hpp"
#include "attnspec/proofs/thm_3_4.hpp"
#include "attnspec/report/check_records.hpp"
#include "test_heads.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::proofs;
using attnspec::test::random_test_head;

namespace {

// A small run: the d=D Gaussian regime (robust violations at seed 20251) and the search from it.
RunOptions small_run() {
    RunOptions opt;
    opt.regimes = {"d=D/gauss-0.1/s=1/gaussian", "search/d=D"};
    opt.trials = 0;
    opt.search_evals = 60;
    opt.embedded_heads = "";
    return opt;
}

bool same_record(const CheckResult& a, const CheckResult& b) {
    if (a.regime != b.regime || a.seed != b.seed || a.verdict != b.verdict ||
        a.values.size() != b.values.size() || a.instance.size() != b.instance.size())
        return false;
    for (size_t i = 0; i < a.values.size(); ++i) {
        const double x = a.values[i].second, y = b.values[i].second;
        if (a.values[i].first != b.values[i].first || !(x == y || (std::isnan(x) && std::isnan(y))))
            return false;
    }
    for (size_t i = 0; i < a.instance.size(); ++i)
        if (a.instance[i].second != b.instance[i].second) return false;
    return true;
}
}  // namespace

TEST_CASE("thm3.4 records carry N, D, d and sigma_min/sigma_max(J)", "[thm3.4]") {
    const Head h = random_test_head(4, 8, 4, 5);  // N < D
    const CheckResult r = check_thm_3_4(h);
    CHECK(r.value("N") == 4);
    CHECK(r.value("D") == 8);
    CHECK(r.value("d") == 4);
    CHECK(r.value("sigma_min/sigma_max(J)") == r.value("sigma_min(J)") / r.value("sigma_max(J)"));
    CHECK(r.value("sigma_min/sigma_max(J)") > 0);
    CHECK(std::isnan(r.value("violation_robust")));  // classified only when violated
}

TEST_CASE("thm3.4 violations are classified robust or fragile (planted both ways)",
          "[thm3.4][planted]") {
    Thm34Options planted;
    planted.bound_factor = 1e-12;  // a wrong factor: violated whatever the tolerance
    const Head ok = random_test_head(6, 5, 3, 3);
    const CheckResult robust = check_thm_3_4(ok, planted);
    REQUIRE(robust.verdict == Verdict::violated);
    REQUIRE(robust.value("sigma_min/sigma_max(J)") > 1e-6);
    CHECK(robust.value("violation_robust") == 1.0);
    CHECK(robust.note.find("robust violation") != std::string::npos);

    // W_V with sigma_min/sigma_max = 1e-10: kappa(W_V) is finite at the default tolerance but
    // infinite (a vacuous bound) at 1e-8, so the same planted violation is fragile.
    Head near = ok;
    Eigen::JacobiSVD<Eigen::MatrixXd> sv(near.W_V, Eigen::ComputeThinU | Eigen::ComputeThinV);
    Eigen::VectorXd sigma = sv.singularValues();
    sigma[sigma.size() - 1] = 1e-10 * sigma[0];
    near.W_V = sv.matrixU() * sigma.asDiagonal() * sv.matrixV().transpose();
    planted.bound_factor = 1e-20;
    const CheckResult fragile = check_thm_3_4(near, planted);
    INFO(fragile.hypotheses[0].detail << "; " << fragile.note);
    REQUIRE(fragile.verdict == Verdict::violated);
    CHECK(fragile.value("kappa(W_V)") > 1e9);
    CHECK(fragile.value("violation_robust") == 0.0);
    CHECK(fragile.note.find("fragile violation") != std::string::npos);

    // The reported input: the random N > D kappa-1e3 violations sit on J with sigma_min/sigma_max
    // below 1e-8, so none of them may be classified robust.
    RunOptions opt;
    opt.regimes = {"N>D/kappa-1e3/s=1/sqrt(d)/gaussian"};
    opt.search_evals = 0;
    opt.embedded_heads = "";
    long near_singular = 0;
    for (const auto& r : run_thm_3_4(opt).results) {
        if (r.verdict != Verdict::violated) continue;
        REQUIRE(!std::isnan(r.value("violation_robust")));
        if (r.value("sigma_min/sigma_max(J)") < 1e-8) {
            ++near_singular;
            CHECK(r.value("violation_robust") == 0.0);
        }
    }
    CHECK(near_singular > 0);
}

TEST_CASE("thm3.4 search: constrained, within its regime filter, and replayable from a file",
          "[thm3.4]") {
    const CheckRun run = run_thm_3_4(small_run());
    const CheckResult* found = nullptr;
    for (const auto& r : run.results) {
        CHECK(r.regime.find("search/N<=D") == std::string::npos);  // the filter did not name it
        if (r.regime.rfind("search/", 0) != 0) continue;
        CHECK(r.value("sigma_min/sigma_max(J)") >= kThm34MinSigmaRatio);
        for (const auto& s : run.results)  // its own seed, not its start's
            if (s.regime.rfind("search/", 0) != 0) CHECK(s.seed != r.seed);
        if (r.verdict == Verdict::violated && !found) found = &r;
    }
    REQUIRE(found != nullptr);
    CHECK(found->value("violation_robust") == 1.0);

    const std::string path = test::temp_dir() + "/search.h5";
    Provenance prov;
    prov.seed = found->seed;
    write_instance_file(path, *found, prov);
    const H5Reader file(path);
    const CheckResult back =
        replay_record(*find_check("thm3.4"), file, find_replay_record(file, "thm3.4"));
    CHECK(back.verdict == found->verdict);
    CHECK(back.comparison("bound")->ratio == found->comparison("bound")->ratio);
    CHECK(back.value("kappa(J)") == found->value("kappa(J)"));
    CHECK(back.seed == found->seed);
    CHECK(back.regime == found->regime);
}

TEST_CASE("thm3.4 search is bounded by evaluations: one seed, identical runs", "[thm3.4]") {
    RunOptions opt = small_run();
    opt.regimes.push_back("search/N<=D(4,8,4)");
    const CheckRun a = run_thm_3_4(opt), b = run_thm_3_4(opt);
    REQUIRE(a.results.size() == b.results.size());
    size_t searched = 0;
    for (size_t i = 0; i < a.results.size(); ++i) {
        INFO("record " << i << " regime " << a.results[i].regime);
        CHECK(same_record(a.results[i], b.results[i]));
        searched += a.results[i].regime.rfind("search/", 0) == 0;
    }
    CHECK(searched >= 2);  // both searches ran
    CHECK(a.search_effort == b.search_effort);
    CHECK(a.search_effort.find("60 evaluations") != std::string::npos);
    CHECK(a.search_effort.find("N <= D") != std::string::npos);
}

TEST_CASE("thm3.4 search options: --search-evals 0 and the deprecated --search-budget 0",
          "[thm3.4]") {
    RunOptions opt;
    CHECK(thm_3_4_search_evals(opt) == 3600);
    opt.thorough = true;
    CHECK(thm_3_4_search_evals(opt) == 7200);
    opt.search_budget_s = 0;
    CHECK(thm_3_4_search_evals(opt) == 0);
    opt.search_evals = 10;
    CHECK(thm_3_4_search_evals(opt) == 10);
    opt.search_evals = -2;
    CHECK(test::error_of([&] { check_run_options(opt); }).code() == ExitCode::Usage);
    opt.search_evals = -1;
    opt.search_seconds = -1;
    CHECK(test::error_of([&] { check_run_options(opt); }).code() == ExitCode::Usage);
}
