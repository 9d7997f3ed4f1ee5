// model-speca-lambda: kappa(J) of SpecA on a head with biases re-computed from a complex-step
// Jacobian of a forward pass written here (biases included), the saturation column, and the table
// over a small model file.
#include <cmath>
#include <complex>

#include "attnspec/proofs/model_speca_lambda.hpp"
#include "test_model_support.hpp"

using namespace attnspec;
using namespace attnspec::proofs;

namespace {
using CMat = Eigen::MatrixXcd;

// A = softmax(s Q K^T) V with Q = X Wq + 1 bq^T (likewise K, V), in complex arithmetic; the
// softmax shifts each row by the max of its real part.
CMat forward(const CMat& X, const CMat& Wq, const CMat& Wk, const CMat& Wv,
             const Eigen::VectorXd& bq, const Eigen::VectorXd& bk, const Eigen::VectorXd& bv,
             double s) {
    const Eigen::Index N = X.rows();
    const auto ones = Eigen::VectorXcd::Ones(N);
    const CMat Q = X * Wq + ones * bq.cast<std::complex<double>>().transpose();
    const CMat K = X * Wk + ones * bk.cast<std::complex<double>>().transpose();
    const CMat V = X * Wv + ones * bv.cast<std::complex<double>>().transpose();
    CMat L = s * Q * K.transpose();
    for (Eigen::Index i = 0; i < N; ++i) {
        double m = L(i, 0).real();
        for (Eigen::Index k = 1; k < N; ++k) m = std::max(m, L(i, k).real());
        for (Eigen::Index k = 0; k < N; ++k) L(i, k) = std::exp(L(i, k) - m);
        L.row(i) /= L.row(i).sum();
    }
    return L * V;
}

// J = [J_Q, J_K, J_V] (column-major vec) at W + lambda I by complex step, h = 1e-30.
Eigen::MatrixXd complex_step_J(const Head& h, double lambda) {
    const Eigen::Index D = h.D(), d = h.d(), N = h.N();
    Eigen::MatrixXd W[3] = {h.W_Q, h.W_K, h.W_V};
    for (auto& w : W)
        for (Eigen::Index k = 0; k < std::min(D, d); ++k) w(k, k) += lambda;
    Eigen::MatrixXd J(N * d, 3 * D * d);
    const CMat X = h.X.cast<std::complex<double>>();
    for (int b = 0; b < 3; ++b)
        for (Eigen::Index c = 0; c < D * d; ++c) {
            CMat P[3] = {W[0].cast<std::complex<double>>(), W[1].cast<std::complex<double>>(),
                         W[2].cast<std::complex<double>>()};
            P[b](c % D, c / D) += std::complex<double>(0, 1e-30);
            const CMat A = forward(X, P[0], P[1], P[2], h.b_Q, h.b_K, h.b_V, h.s);
            const Eigen::MatrixXd dA = A.imag() / 1e-30;
            J.col(b * D * d + c) = Eigen::Map<const Eigen::VectorXd>(dA.data(), N * d);
        }
    return J;
}

Head biased_head() {
    Head h;
    h.X = test::fixture_matrix(4, 6, 1.0);
    h.W_Q = 0.4 * test::fixture_matrix(6, 3, 2.0);
    h.W_K = 0.4 * test::fixture_matrix(6, 3, 3.0);
    h.W_V = test::fixture_matrix(6, 3, 4.0);
    h.b_Q = Eigen::Vector3d(0.3, -0.2, 0.5);
    h.b_K = Eigen::Vector3d(-0.4, 0.1, 0.2);
    h.b_V = Eigen::Vector3d(1.0, -1.0, 0.5);
    h.s = 1 / std::sqrt(3.0);
    return h;
}
}  // namespace

TEST_CASE("model-speca-lambda: kappa(J) with biases equals a complex-step Jacobian's",
          "[model][model-speca-lambda]") {
    const Head h = biased_head();
    const CheckResult r = model_speca_curve(h);
    const Eigen::MatrixXd& c = r.instance.back().second;
    REQUIRE(c.rows() == Eigen::Index(model_speca_lambdas().size()));
    for (Eigen::Index i = 0; i < c.rows(); ++i) {
        const double lambda = c(i, kScLambda);
        INFO("lambda = " << lambda);
        const double expect = test::jacobi_kappa(complex_step_J(h, lambda));
        CHECK(c(i, kScKappa) == Approx(expect).epsilon(1e-7));
        CHECK(c(i, kScKappaLo) <= c(i, kScKappa));
        CHECK(c(i, kScKappa) <= c(i, kScKappaHi));
        CHECK(c(i, kScRatio) == Approx(c(i, kScKappa) / c(0, kScKappa)).epsilon(1e-14));
        CHECK(c(i, kScLowered) == (i > 0 && c(i, kScKappaHi) < c(0, kScKappaLo) ? 1.0 : 0.0));
    }
    // The biases matter: without them kappa(J) at lambda = 0 differs.
    Head plain = h;
    plain.b_Q = plain.b_K = plain.b_V = Eigen::VectorXd();
    const double k0 = model_speca_curve(plain).instance.back().second(0, kScKappa);
    CHECK(std::abs(k0 - c(0, kScKappa)) > 1e-6 * k0);
    bool named = false;
    for (const auto& [k, v] : r.conventions)
        named |= k == "bias_form" && v.find("with biases") == 0;
    CHECK(named);
}

TEST_CASE("model-speca-lambda: large tokens saturate the softmax at lambda = 10",
          "[model][model-speca-lambda][planted]") {
    Head h = biased_head();
    h.X = h.X * 30;  // logits ~ lambda^2 |x|^2: saturated
    const Eigen::MatrixXd c = model_speca_curve(h).instance.back().second;
    const Eigen::Index last = c.rows() - 1;
    REQUIRE(c(last, kScLambda) == 10);
    CHECK(c(last, kScMaxProb) > 1 - 1e-6);
    CHECK(c(last, kScSaturated) == 1);
    CHECK(c(last, kScLowered) == 0);
}

TEST_CASE("model-speca-lambda over a model file: every head on the shortest sentence",
          "[model][model-speca-lambda]") {
    const test::ModelFixture f;
    const test::FixtureDatasets files("fixture-sl", f);
    RunOptions opt;
    opt.dataset = "fixture-sl";
    const CheckRun run = run_model_speca_lambda(opt);
    const ExperimentTable& t = run.table;
    REQUIRE(t.axis_names == std::vector<std::string>{"layer", "head", "sentence"});
    REQUIRE(t.rows() == size_t(f.layers * f.heads * model_speca_lambdas().size()));
    for (size_t i = 0; i < t.rows(); ++i) CHECK(t.axes[2][i] == "1");
    CHECK(test::table_attribute(t, "bias_form").rfind("with biases", 0) == 0);
    // --trials 3: exactly three curves, spread over the two layers (2 + 1).
    opt.trials = 3;
    const CheckRun three = run_model_speca_lambda(opt);
    REQUIRE(three.results.size() == 3);
    CHECK(three.results[1].value("layer") == 0);
    CHECK(three.results[2].value("layer") == 1);
}
