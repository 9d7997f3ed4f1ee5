// infsa/neumann_analysis and infsa/fidelity_table: the results `attnspec neumann` / `fidelity`
// report, compared with the building blocks they compose, and their parameter errors.
#include <cmath>
#include <limits>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/infsa/affinity.hpp"
#include "attnspec/infsa/fidelity.hpp"
#include "attnspec/infsa/fidelity_table.hpp"
#include "attnspec/infsa/neumann.hpp"
#include "attnspec/infsa/neumann_analysis.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::error_of;

namespace {

Eigen::MatrixXd small_affinity(Eigen::Index n) {
    Eigen::MatrixXd Q, K;
    draw_family("shared-mean", n, 8, 1.0, 21, Q, K);
    return affinity(Q, K).A_hat;
}

}  // namespace

TEST_CASE("analyze_neumann: table, invariants and closure match the building blocks", "[infsa]") {
    const Eigen::MatrixXd A = small_affinity(24);
    const Eigen::MatrixXd V = Rng(3).gaussian(24, 2);
    NeumannAnalysisOptions opt;
    opt.gamma = 0.9;
    opt.orders = {0, 3, 9};
    const NeumannAnalysis a = analyze_neumann(A, opt, V);
    CHECK(a.n == 24);
    CHECK(a.gamma == 0.9);
    REQUIRE(a.truncation.size() == 3);
    for (const auto& r : a.truncation) CHECK(r.holds());
    CHECK(a.truncation[1].K == 3);
    CHECK(a.truncation[1].bound == truncation_bound(0.9, a.norms.norm2.hi, 3));
    CHECK(a.K_for_target == truncation_order(0.9, a.norms.norm2.hi, opt.target));
    CHECK(a.invariants.residual <= a.invariants.residual_bound);
    // Same computation as the kernel's own closure: bit-identical.
    const NeumannKernel nk(A, 0.9);
    CHECK(a.closure_times_V == nk.closure_times(V));
    CHECK(a.centralities.katz_in == nk.closure_transpose_times(Eigen::VectorXd::Ones(24)));
    CHECK(analyze_neumann(A, opt).closure_times_V.size() == 0);
}

TEST_CASE("analyze_neumann: parameter errors name the parameter", "[infsa]") {
    const Eigen::MatrixXd A = small_affinity(10);
    NeumannAnalysisOptions opt;
    opt.gamma = 1.5;
    Error e = error_of([&] { analyze_neumann(A, opt); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(e.parameter() == "gamma");
    CHECK(std::string(e.what()) == "gamma = 1.5 must lie in (0, 1)");
    CHECK(error_of([&] { check_neumann_options(opt); }).parameter() == "gamma");  // without Â
    opt.gamma = 0.9;
    opt.target = 0;
    CHECK(error_of([&] { analyze_neumann(A, opt); }).parameter() == "target");
    opt.target = 1e-6;
    opt.orders = {2, -1};
    CHECK(error_of([&] { analyze_neumann(A, opt); }).parameter() == "K");
    opt.orders = {2};
    const Eigen::MatrixXd V = Eigen::MatrixXd::Ones(9, 1);
    CHECK(error_of([&] { analyze_neumann(A, opt, V); }).code() == ExitCode::DataError);
}

TEST_CASE("fidelity_stats: order statistics ignore NaN", "[infsa]") {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    FidelityStats s = fidelity_stats({3.0, nan, 1.0, 2.0});
    CHECK(s.count == 3);
    CHECK(s.min == 1.0);
    CHECK(s.median == 2.0);
    CHECK(s.mean == 2.0);
    CHECK(s.max == 3.0);
    s = fidelity_stats({4.0, 1.0});
    CHECK(s.median == 2.5);
    s = fidelity_stats({nan});
    CHECK(s.count == 0);
    CHECK(std::isnan(s.median));
}

TEST_CASE("fidelity_table: records in instance order, groups per (family, N)", "[infsa]") {
    FidelitySpec spec;
    spec.families = {"gaussian", "shared-mean"};
    spec.Ns = {16, 20};
    spec.d_h = 4;
    spec.draws = 2;
    spec.heads = 1;
    long calls = 0;
    spec.progress = [&](long done) { CHECK(done == ++calls); };
    const FidelityTable t = fidelity_table(spec);
    CHECK(calls == fidelity_instance_count(spec));
    REQUIRE(t.records.size() == 8);
    REQUIRE(t.groups.size() == 4);
    CHECK(t.groups[1].family == "gaussian");
    CHECK(t.groups[1].N == 20);
    CHECK(t.groups[1].records == std::vector<std::size_t>{2, 3});
    // Record 5 replays from its seed alone.
    const FidelityRecord& r = t.records[5];
    CHECK(r.seed == instance_seed(spec.seed, 5));
    Eigen::MatrixXd Q, K;
    draw_family(r.family, r.N, spec.d_h, spec.mu, r.seed, Q, K);
    CHECK(fidelity_dense(Q, K, spec.gamma, spec.eps).cos_left == r.f.cos_left);
    const FidelityStats& s = t.groups[2].stats[0];
    CHECK(s.count == 2);
    CHECK(s.min == std::min(t.records[4].f.cos_left, t.records[5].f.cos_left));
}

TEST_CASE("fidelity_table: given blocks and spec errors", "[infsa]") {
    FidelitySpec spec;
    Eigen::MatrixXd Q, K;
    draw_family("gaussian", 12, 6, 0, 4, Q, K);
    const std::vector<Eigen::MatrixXd> Qs{Q.leftCols(3), Q.rightCols(3)};
    const std::vector<Eigen::MatrixXd> Ks{K.leftCols(3), K.rightCols(3)};
    spec.matrix_free = true;
    const FidelityTable t = fidelity_table(Qs, Ks, spec);
    REQUIRE(t.records.size() == 2);
    CHECK(t.records[1].family == "input");
    CHECK(t.records[1].head == 1);
    CHECK(std::isnan(t.records[1].f.cos_katz_in));  // matrix-free: Katz skipped
    REQUIRE(t.groups.size() == 1);
    CHECK(t.groups[0].stats[2].count == 0);

    spec.matrix_free = false;
    spec.Ns = {100000};  // dense 3 * 8 N^2 bytes > 8 GiB
    Error e = error_of([&] { fidelity_table(spec); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(e.parameter() == "matrix_free");
    spec.Ns = {16};
    spec.families = {"bogus"};
    e = error_of([&] { fidelity_table(spec); });
    CHECK(e.code() == ExitCode::Usage);
    CHECK(e.parameter() == "family");
    spec.families = {"gaussian"};
    spec.gamma = 1.0;
    CHECK(error_of([&] { fidelity_table(spec); }).parameter() == "gamma");
}
