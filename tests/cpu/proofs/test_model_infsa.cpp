// model-infsa: Q and K carry the biases; rho(Â), min R, K for 1e-6 and the fidelity cosines
// re-computed with Eigen's eigen solvers and the formulas of docs/MATH.md §3; the table over a
// small model file and its distribution line.
#include <cmath>

#include "attnspec/infsa/fidelity.hpp"
#include "attnspec/proofs/model_infsa.hpp"
#include "test_model_support.hpp"

using namespace attnspec;
using namespace attnspec::proofs;

namespace {
// Â = ReLU(Q K^T / d) / (||.||_F + 1e-6), written out here.
Eigen::MatrixXd affinity_here(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K) {
    const Eigen::MatrixXd Ap = (Q * K.transpose() / double(Q.cols())).cwiseMax(0.0);
    return Ap / (Ap.norm() + 1e-6);
}

// The Perron vector of a positive matrix B (unit, non-negative): the eigenvector of the
// eigenvalue of largest real part.
Eigen::VectorXd perron_here(const Eigen::MatrixXd& B, double* rho = nullptr) {
    Eigen::EigenSolver<Eigen::MatrixXd> es(B);
    Eigen::Index k = 0;
    es.eigenvalues().real().maxCoeff(&k);
    Eigen::VectorXd v = es.eigenvectors().col(k).real();
    if (v.sum() < 0) v = -v;
    if (rho) *rho = es.eigenvalues()[k].real();
    return v.normalized();
}

// Linear-InfSA weights a (MATH.md §3).
Eigen::VectorXd weights_here(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K) {
    const double r = std::sqrt(double(Q.cols()));
    const Eigen::MatrixXd q = Q / r, k = K / r;
    const Eigen::VectorXd e = q.rowwise().norm();
    const Eigen::VectorXd qbar = q.transpose() * e / (e.sum() + 1e-6);
    const Eigen::VectorXd s = (k * qbar).cwiseMax(0.0);
    return s / (s.sum() + 1e-6);
}

double cos_here(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    return a.dot(b) / (a.norm() * b.norm());
}

// Q, K sharing a mean direction (positive affinity, high fidelity).
void shared_mean(Eigen::MatrixXd& Q, Eigen::MatrixXd& K) {
    Q = test::fixture_matrix(7, 4, 1.0);
    K = test::fixture_matrix(7, 4, 2.0);
    Q.rowwise() += Eigen::RowVector4d(2, 1, -1, 1);
    K.rowwise() += Eigen::RowVector4d(2, 1, -1, 1);
}
}  // namespace

TEST_CASE("model-infsa: Q and K include the biases", "[model][model-infsa]") {
    Head h;
    h.X = test::fixture_matrix(5, 6, 1.0);
    h.W_Q = test::fixture_matrix(6, 4, 2.0);
    h.W_K = test::fixture_matrix(6, 4, 3.0);
    h.W_V = test::fixture_matrix(6, 4, 4.0);
    h.b_Q = Eigen::Vector4d(1, 2, 3, 4);
    h.b_K = Eigen::Vector4d(-1, 0, 1, 0.5);
    h.b_V = Eigen::Vector4d::Zero();
    Eigen::MatrixXd Q, K;
    model_qk(h, Q, K);
    const Eigen::MatrixXd ones = Eigen::MatrixXd::Ones(5, 1);
    CHECK_THAT(Q, test::IsClose(h.X * h.W_Q + ones * h.b_Q.transpose(), 1e-14));
    CHECK_THAT(K, test::IsClose(h.X * h.W_K + ones * h.b_K.transpose(), 1e-14));
}

TEST_CASE("model-infsa: rho, min R, K and the cosines re-computed independently",
          "[model][model-infsa]") {
    Eigen::MatrixXd Q, K;
    shared_mean(Q, K);
    const Eigen::RowVectorXd v = model_infsa(Q, K).instance.back().second.row(0);
    const Eigen::MatrixXd A = affinity_here(Q, K);
    double rho = 0;
    const Eigen::VectorXd left = perron_here(A.transpose(), &rho), right = perron_here(A);
    const Eigen::VectorXd a = weights_here(Q, K);
    const double gamma = 0.95;
    CHECK(v[kMiN] == 7);
    CHECK(v[kMiRho] == Approx(rho).epsilon(1e-8));
    CHECK(v[kMiRhoLo] <= rho);
    CHECK(rho <= v[kMiRhoHi]);
    const double min_R = (1.0 - gamma * A.rowwise().sum().array()).minCoeff();
    CHECK(v[kMiMinR] == Approx(min_R).epsilon(1e-12));
    CHECK(v[kMiProbabilistic] == (min_R >= 0 ? 1.0 : 0.0));
    CHECK(v[kMiCosLeft] == Approx(cos_here(a, left)).epsilon(1e-8));
    CHECK(v[kMiCosRight] == Approx(cos_here(a, right)).epsilon(1e-8));
    CHECK(v[kMiCosLeft] > 0.985);  // shared mean direction: the summary's regime
    // K: the smallest order whose bound (gamma s)^{K+1}/(1 - gamma s) reaches 1e-6, s = ||Â||_2;
    // the table uses the upper end of an enclosure of s, so K may exceed the exact order by one.
    const double s2 = Eigen::JacobiSVD<Eigen::MatrixXd>(A).singularValues()[0];
    CHECK(v[kMiNorm2Hi] >= s2);
    int K_exact = 0;
    while (std::pow(gamma * s2, K_exact + 1) / (1 - gamma * s2) > 1e-6) ++K_exact;
    CHECK(v[kMiK] >= K_exact);
    CHECK(v[kMiK] <= K_exact + 1);
}

TEST_CASE("model-infsa: zero-mean queries and keys give a low fidelity (planted)",
          "[model][model-infsa][planted]") {
    Eigen::MatrixXd Q, K;  // i.i.d. N(0, 1) entries (docs/MATH.md §3: cosine ~0.63 typically)
    draw_family("gaussian", 40, 8, 0.0, 7, Q, K);
    const Eigen::RowVectorXd v = model_infsa(Q, K).instance.back().second.row(0);
    CHECK(v[kMiCosLeft] ==
          Approx(cos_here(weights_here(Q, K), perron_here(affinity_here(Q, K).transpose())))
              .epsilon(1e-8));
    CHECK(v[kMiCosLeft] < 0.985);
}

TEST_CASE("model-infsa over a model file: every head and sentence, the distribution line",
          "[model][model-infsa]") {
    const test::ModelFixture f;
    const test::FixtureDatasets files("fixture-is", f);
    RunOptions opt;
    opt.dataset = "fixture-is";
    const CheckRun run = run_model_infsa(opt);
    const ExperimentTable& t = run.table;
    REQUIRE(t.rows() == size_t(f.layers * f.heads * 2));
    const auto& cos = test::table_column(t, "cos_left");
    long above = 0;
    double lo = 2;
    for (double c : cos) above += c >= 0.985, lo = std::min(lo, c);
    char expect[64];
    std::snprintf(expect, sizeof expect, "cos_left: min %.4g", lo);
    const std::string finding = test::table_attribute(t, "finding");
    CHECK_THAT(finding, Catch::Contains(expect));
    CHECK_THAT(finding, Catch::Contains(std::to_string(above) + " of " + std::to_string(t.rows())));
    CHECK(test::table_attribute(t, "bias_form").rfind("with biases", 0) == 0);
}
