// model-weights-kappa: every column re-computed from Eigen's JacobiSVD, the Weyl bound column, a
// planted weight where lambda I hurts (helped = 0) and one where it helps, and the run over a
// small model file written by the test.
#include <cmath>

#include "attnspec/proofs/model_weights_kappa.hpp"
#include "test_model_support.hpp"

using namespace attnspec;
using namespace attnspec::proofs;

using test::jacobi_kappa;

TEST_CASE("model-weights-kappa rows match an independent SVD", "[model][model-weights-kappa]") {
    const Eigen::MatrixXd W = test::fixture_matrix(9, 4, 3.0);
    const Eigen::MatrixXd rows = weight_kappa_rows(W);
    const auto& corr = model_weight_corrections();
    REQUIRE(rows.rows() == Eigen::Index(corr.size()));
    const Eigen::VectorXd s = Eigen::JacobiSVD<Eigen::MatrixXd>(W).singularValues();
    const double k0 = s[0] / s[3];
    for (Eigen::Index i = 0; i < rows.rows(); ++i) {
        INFO(corr[size_t(i)]);
        CHECK(rows(i, kWkSigma1) == Approx(s[0]).epsilon(1e-12));
        CHECK(rows(i, kWkSigmaMin) == Approx(s[3]).epsilon(1e-12));
        CHECK(rows(i, kWkBefore) == Approx(k0).epsilon(1e-12));
        double after = k0, lambda = std::nan("");
        if (corr[size_t(i)].rfind("lambda:", 0) == 0) {
            lambda = std::stod(corr[size_t(i)].substr(7));
            Eigen::MatrixXd shifted = W;
            for (Eigen::Index k = 0; k < 4; ++k) shifted(k, k) += lambda;
            after = jacobi_kappa(shifted);
        } else if (corr[size_t(i)] == "svd") {
            after = 2 * s[0] / (s[0] + s[3]);  // Thm 3.5: sigma_i + sigma_1
        }
        CHECK(rows(i, kWkAfter) == Approx(after).epsilon(1e-10));
        CHECK(rows(i, kWkRatio) == Approx(after / k0).epsilon(1e-10));
        CHECK(rows(i, kWkHelped) == (after < k0 - 1e-9 * k0 ? 1.0 : 0.0));
        if (std::isnan(lambda)) {
            CHECK(std::isnan(rows(i, kWkLambda)));
            CHECK(std::isnan(rows(i, kWkWeylBound)));
            CHECK(rows(i, kWkWeylApplies) == 0);
        } else {
            CHECK(rows(i, kWkLambda) == lambda);
        }
    }
}

TEST_CASE(
    "model-weights-kappa: the Weyl bound column is (lambda + s1)/(lambda - s1) when "
    "lambda > s1 and holds",
    "[model][model-weights-kappa]") {
    // sigma_1 = 1.5: lambda 0.5 and 1 are below it (no bound), 2 and 10 above it.
    Eigen::MatrixXd W = Eigen::MatrixXd::Zero(5, 3);
    W(0, 0) = 1.5, W(1, 1) = -0.2, W(2, 2) = 0.05;
    W(3, 0) = 0.01;
    const Eigen::MatrixXd rows = weight_kappa_rows(W);
    const double s1 = Eigen::JacobiSVD<Eigen::MatrixXd>(W).singularValues()[0];
    const auto& corr = model_weight_corrections();
    for (Eigen::Index i = 0; i < rows.rows(); ++i) {
        if (corr[size_t(i)].rfind("lambda:", 0) != 0) continue;
        const double lambda = rows(i, kWkLambda);
        INFO("lambda = " << lambda);
        if (lambda > s1) {
            CHECK(rows(i, kWkWeylApplies) == 1);
            CHECK(rows(i, kWkWeylBound) == Approx((lambda + s1) / (lambda - s1)).epsilon(1e-12));
            CHECK(rows(i, kWkAfter) <= rows(i, kWkWeylBound));
        } else {
            CHECK(rows(i, kWkWeylApplies) == 0);
            CHECK(std::isnan(rows(i, kWkWeylBound)));
        }
    }
}

TEST_CASE("model-weights-kappa: a planted weight where lambda = 10 hurts shows helped = 0",
          "[model][model-weights-kappa][planted]") {
    // diag(-9.9, 1): W + 10 I = diag(0.1, 11), kappa 110 > 9.9.
    Eigen::MatrixXd hurt = Eigen::MatrixXd::Zero(2, 2);
    hurt(0, 0) = -9.9, hurt(1, 1) = 1;
    const Eigen::MatrixXd r = weight_kappa_rows(hurt);
    const Eigen::Index at10 = 4;
    REQUIRE(model_weight_corrections()[size_t(at10)] == "lambda:10");
    CHECK(r(at10, kWkAfter) == Approx(110).epsilon(1e-12));
    CHECK(r(at10, kWkHelped) == 0);
    CHECK(r(at10, kWkDecided) == 1);  // proved worse
    // diag(10, 0.1): W + 10 I = diag(20, 10.1), kappa 1.98 < 100: helped, proved.
    Eigen::MatrixXd helps = Eigen::MatrixXd::Zero(2, 2);
    helps(0, 0) = 10, helps(1, 1) = 0.1;
    const Eigen::MatrixXd g = weight_kappa_rows(helps);
    CHECK(g(at10, kWkHelped) == 1);
    CHECK(g(at10, kWkDecided) == 1);
}

TEST_CASE(
    "model-weights-kappa over a model file: one row per layer, head, matrix and "
    "correction, values from the file's weights",
    "[model][model-weights-kappa]") {
    const test::ModelFixture f;
    const test::FixtureDatasets files("fixture-wk", f);
    RunOptions opt;
    opt.dataset = "fixture-wk";
    const CheckRun run = run_model_weights_kappa(opt);
    CHECK(run.kind == "experiment");
    const ExperimentTable& t = run.table;
    REQUIRE(t.rows() == size_t(f.layers * f.heads * 3 * 6));
    REQUIRE(t.axis_names == std::vector<std::string>{"layer", "head", "matrix", "correction"});
    long helped = 0;
    for (size_t i = 0; i < t.rows(); ++i) {
        const int l = std::stoi(t.axes[0][i]), h = std::stoi(t.axes[1][i]);
        const int m = t.axes[2][i] == "Q" ? 0 : t.axes[2][i] == "K" ? 1 : 2;
        const Eigen::MatrixXd W = test::fixture_matrix(f.D, f.d, test::fixture_seed(l, h, m));
        CHECK(test::table_column(t, "kappa_before")[i] == Approx(jacobi_kappa(W)).epsilon(1e-10));
        helped += t.axes[3][i] == "lambda:10" && test::table_column(t, "helped")[i] > 0;
    }
    // The finding counts what the rows say.
    const std::string finding = test::table_attribute(t, "finding");
    CHECK_THAT(finding, Catch::Contains("lambda:10 helps " + std::to_string(helped) + ","));
    CHECK_THAT(finding, Catch::Contains("of " + std::to_string(f.layers * f.heads * 3)));
    CHECK(test::table_attribute(t, "kappa").rfind("strict", 0) == 0);
}
