// The Jacobian analysis behind `attnspec jacobian` (attention/jacobian_analysis.hpp): per-head
// norms are those of the dense closed form, the layer norm exists only for heads sharing X, the
// plan refuses oversized J naming the parameter, and the sink sees J only when it is stored.
#include <cmath>

#include "attnspec/attention/jacobian.hpp"
#include "attnspec/attention/jacobian_analysis.hpp"
#include "attnspec/base/errors.hpp"
#include "test_support.hpp"

using namespace attnspec;
using Catch::Matchers::WithinRel;

namespace {
std::vector<Head> layer_heads(Eigen::Index H, std::uint64_t seed) {
    RandomSpec rs;
    rs.N = 5, rs.D = 4, rs.d = 2, rs.H = H, rs.seed = seed;
    const MultiHead m = random_multihead(rs);
    std::vector<Head> out;
    for (Eigen::Index h = 0; h < H; ++h) out.push_back(m.head(h));
    return out;
}
// ||J||_F^2 = sum of the block norms squared: the same n = J.size() squares summed in two orders.
// Each sum carries relative error <= n u (Higham, recursive summation), halved by the square root:
// the two norms differ by at most (n + 2) u relative. Measured: 0 on these instances.
double block_sum_tol(const Eigen::MatrixXd& J) {
    return (static_cast<double>(J.size()) + 2) * test::kU;
}
}  // namespace

TEST_CASE("jacobian analysis: norms of the closed form, blocks and the layer", "[jacobian]") {
    const std::vector<Head> heads = layer_heads(2, 11);
    std::vector<Eigen::MatrixXd> seen;
    JacobianOptions opt;
    const JacobianAnalysis a = analyse_jacobians(
        heads, true, opt,
        [&](std::size_t, const HeadJacobian&, const Eigen::MatrixXd& J) { seen.push_back(J); });
    REQUIRE(a.heads.size() == 2);
    REQUIRE(seen.size() == 2);
    CHECK(a.plan.dense);
    CHECK(a.plan.store);
    CHECK(a.plan.why_not_stored.empty());
    double layer2 = 0;
    for (std::size_t h = 0; h < 2; ++h) {
        const Eigen::MatrixXd J = jacobian_weights(heads[h]);
        const HeadJacobian& r = a.heads[h];
        CHECK(seen[h] == J);
        CHECK(r.rows == J.rows());
        CHECK(r.cols == J.cols());
        CHECK(r.frobenius == J.norm());  // the same computation: identical bits
        CHECK(r.max_abs == J.cwiseAbs().maxCoeff());
        REQUIRE(r.has_blocks);
        const double b2 = r.frobenius_blocks[0] * r.frobenius_blocks[0] +
                          r.frobenius_blocks[1] * r.frobenius_blocks[1] +
                          r.frobenius_blocks[2] * r.frobenius_blocks[2];
        CHECK_THAT(std::sqrt(b2), WithinRel(r.frobenius, block_sum_tol(J)));
        CHECK_FALSE(r.has_spectrum);
        layer2 += r.frobenius * r.frobenius;
    }
    CHECK(a.frobenius_layer == std::sqrt(layer2));
    CHECK(a.seconds == a.heads[0].seconds + a.heads[1].seconds);

    // Heads with their own X form no layer: no layer norm.
    const JacobianAnalysis own = analyse_jacobians(heads, false, opt);
    CHECK(std::isnan(own.frobenius_layer));
    CHECK(own.heads[1].frobenius == a.heads[1].frobenius);
}

TEST_CASE("jacobian analysis: J_X, store limit and the sink", "[jacobian]") {
    const std::vector<Head> heads = layer_heads(1, 3);
    JacobianOptions opt;
    opt.wrt = JacobianWrt::input;
    opt.store_bytes = 0;
    bool called = false;
    const JacobianAnalysis a = analyse_jacobians(
        heads, true, opt, [&](std::size_t h, const HeadJacobian& r, const Eigen::MatrixXd& J) {
            called = true;
            CHECK(h == 0);
            CHECK(J.size() == 0);  // not stored
            CHECK(r.frobenius == jacobian_input(heads[0]).norm());
        });
    CHECK(called);
    CHECK_FALSE(a.plan.store);
    CHECK(a.plan.why_not_dense.empty());
    CHECK(a.plan.why_not_stored.find("store_bytes") != std::string::npos);
    CHECK(a.heads[0].rows == 5 * 2);
    CHECK(a.heads[0].cols == 5 * 4);
    CHECK_FALSE(a.heads[0].has_blocks);
    CHECK(std::string(jacobian_symbol(opt.wrt)) == "J_X");
}

TEST_CASE("jacobian analysis: limits name their parameter, spectrum without dense J",
          "[jacobian]") {
    const std::vector<Head> heads = layer_heads(1, 5);
    JacobianOptions opt;
    opt.max_bytes = 16;
    try {
        plan_jacobians(heads, opt);
        FAIL("a dense J above max_bytes must be refused");
    } catch (const Error& e) {
        CHECK(e.code() == ExitCode::DataError);
        CHECK(e.parameter() == "max_bytes");
        CHECK(std::string(e.what()).find("would need") != std::string::npos);
    }
    opt.spectrum = true;  // the spectrum needs no dense J: it is skipped, not refused
    const JacobianAnalysis a = analyse_jacobians(heads, true, opt);
    CHECK_FALSE(a.plan.dense);
    CHECK_FALSE(a.plan.store);
    CHECK_FALSE(a.plan.why_not_dense.empty());
    CHECK_FALSE(a.plan.why_not_stored.empty());
    CHECK(std::isnan(a.heads[0].max_abs));
    CHECK_FALSE(a.heads[0].has_blocks);
    REQUIRE(a.heads[0].has_spectrum);
    // ||J||_F without J: from the full Gram spectrum, equal to the dense J's norm.
    JacobianOptions dense_opt;
    const JacobianAnalysis d = analyse_jacobians(heads, true, dense_opt);
    CHECK(std::abs(a.heads[0].frobenius - d.heads[0].frobenius) <= 1e-12 * d.heads[0].frobenius);
    CHECK(std::abs(a.frobenius_layer - d.frobenius_layer) <= 1e-12 * d.frobenius_layer);
    // Extremal mode knows only the ends of the spectrum: ||J||_F from the trace of J J^T.
    opt.svd.mode = LargeSvdMode::extremal;
    const double fe = analyse_jacobians(heads, true, opt).heads[0].frobenius;
    CHECK(std::abs(fe - d.heads[0].frobenius) <= 1e-12 * d.heads[0].frobenius);
    CHECK(a.heads[0].spectrum.rows == 10);
    CHECK(a.heads[0].spectrum.max.sigma > 0);
    opt.store_bytes = -1;
    try {
        plan_jacobians(heads, opt);
        FAIL("a negative store limit must be refused");
    } catch (const Error& e) {
        CHECK(e.parameter() == "store_bytes");
    }
}
