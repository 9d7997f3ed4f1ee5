// The real-model runs: which units a selector and the run options give, the errors of a missing,
// malformed or out-of-range selection, and one integration run on the committed minilm-l6.
#include <cmath>

#include "attnspec/proofs/model_infsa.hpp"
#include "attnspec/proofs/model_run.hpp"
#include "attnspec/proofs/model_weights_kappa.hpp"
#include "attnspec/proofs/registry.hpp"
#include "attnspec/proofs/thm_3_4_model.hpp"
#include "test_model_support.hpp"

using namespace attnspec;
using namespace attnspec::proofs;

TEST_CASE("model plan: layers as regimes, sentences shortest first, selector parts kept",
          "[model]") {
    test::ModelFixture f;
    f.n_tokens = {5, 3, 4};
    const test::FixtureDatasets files("fixture-plan", f);
    RunOptions opt;
    opt.dataset = "fixture-plan";
    const ModelPlan p = model_plan(opt, "x", true);
    REQUIRE(p.regimes == std::vector<std::string>{"fixture-plan/L0", "fixture-plan/L1"});
    REQUIRE(p.units[0].size() == 9);
    CHECK(p.units[0][0].sentence == 1);
    CHECK(p.units[0][3].sentence == 2);
    CHECK(p.units[0][6].sentence == 0);
    CHECK(p.units[0][7].head == 1);
    CHECK(p.units[0][6].n_tokens == 5);
    CHECK(heads_per_sentence(p) == 3);
    opt.dataset = "fixture-plan:1:2";
    const ModelPlan q = model_plan(opt, "x", true);
    REQUIRE(q.regimes == std::vector<std::string>{"fixture-plan/L1"});
    REQUIRE(q.units[0].size() == 3);
    CHECK(q.units[0][0].head == 2);
    CHECK(heads_per_sentence(q) == 1);
}

TEST_CASE("model runs refuse a missing, malformed or out-of-range dataset", "[model]") {
    const test::FixtureDatasets files("fixture-err");
    RunOptions opt;
    CHECK(test::error_of([&] { run_model_infsa(opt); }).code() == ExitCode::Usage);
    opt.dataset = "fixture-err:x";
    CHECK(test::error_of([&] { run_model_infsa(opt); }).code() == ExitCode::Usage);
    opt.dataset = "no-such-dataset";
    CHECK(test::error_of([&] { check_run_options(opt); }).code() == ExitCode::NoInput);
    opt.dataset = "fixture-err:7";
    const Error e = test::error_of([&] { run_model_infsa(opt); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK_THAT(std::string(e.what()), Catch::Contains("layer 7 out of range"));
    opt.dataset = "fixture-err:0:0:1";  // weights only: a sentence makes no sense
    CHECK(test::error_of([&] { run_model_weights_kappa(opt); }).code() == ExitCode::Usage);
    opt.dataset = "fixture-err";
    opt.regimes = {"L9"};
    CHECK(test::error_of([&] { run_model_infsa(opt); }).code() == ExitCode::Usage);
}

TEST_CASE("model runs: --trials N runs N units, a spent time budget none", "[model]") {
    const test::FixtureDatasets files("fixture-trials");
    RunOptions opt;
    opt.dataset = "fixture-trials";
    opt.trials = 5;
    CHECK(run_model_infsa(opt).results.size() == 5);
    opt.trials = 100;  // more than the 12 units: every unit once
    CHECK(run_model_infsa(opt).results.size() == 12);
    opt.trials = 0;
    opt.time_budget_s = 1e-9;
    const CheckRun none = run_thm_3_4_model(opt);
    CHECK(none.results.size() <= 1);
}

TEST_CASE("the registry lists the real-model analysis and --all skips it without a dataset",
          "[model]") {
    for (const char* name : {"model-weights-kappa", "thm3.4-model", "model-kappa-J",
                             "model-speca-lambda", "model-infsa"}) {
        const CheckInfo* c = find_check(name);
        REQUIRE(c);
        CHECK(c->needs_dataset);
        CHECK(c->kind ==
              (std::string(name) == "thm3.4-model" ? CheckKind::theorem : CheckKind::experiment));
    }
}

TEST_CASE("integration: one head of the committed minilm-l6 through each analysis",
          "[model][minilm]") {
    REQUIRE(default_model_dataset() == "minilm-l6");
    const DatasetInfo info = find_dataset("minilm-l6");
    CHECK(info.D == 384);
    CHECK(info.d == 32);
    CHECK(info.s == Approx(1 / std::sqrt(32.0)));
    RunOptions opt;
    opt.dataset = "minilm-l6:3:7";
    const CheckRun w = run_model_weights_kappa(opt);
    REQUIRE(w.table.rows() == 3 * 6);
    for (double k : test::table_column(w.table, "kappa_before")) CHECK(std::isfinite(k));
    const CheckRun t = run_thm_3_4_model(opt);  // the shortest sentence
    REQUIRE(t.results.size() == 1);
    CHECK(t.results[0].value("N") ==
          double(*std::min_element(info.n_tokens.begin(), info.n_tokens.end())));
    CHECK(t.results[0].value("D") == 384);
    CHECK(t.results[0].verdict != Verdict::inconclusive);
    opt.dataset = "minilm-l6:3:7:0";
    const CheckRun i = run_model_infsa(opt);
    REQUIRE(i.table.rows() == 1);
    const double c = test::table_column(i.table, "cos_left")[0];
    CHECK(c > 0);
    CHECK(c <= 1 + 1e-12);
}
