// What `attnspec jacobian --svd` forms (attention/jacobian_analysis.hpp, issue 13 "the user's path
// is the engine's path"): with the spectrum, dense J is formed only to be kept (store, or at most
// store_bytes), never because the engine needs it; store keeps it whatever its size.
#include <cmath>

#include "attnspec/attention/jacobian.hpp"
#include "attnspec/attention/jacobian_analysis.hpp"
#include "attnspec/base/errors.hpp"
#include "test_support.hpp"

using namespace attnspec;

namespace {
std::vector<Head> one_head() {
    RandomSpec rs;
    rs.N = 12, rs.D = 6, rs.d = 3, rs.seed = 2;  // J: 36 x 54, 15552 bytes
    return {random_head(rs)};
}
}  // namespace

TEST_CASE("jacobian plan: the spectrum forms no dense J above the store limit", "[engine]") {
    const std::vector<Head> heads = one_head();
    const double bytes = jacobian_weights_bytes(12, 6, 3);
    JacobianOptions opt;
    opt.spectrum = true;
    opt.store_bytes = bytes / 2;  // J is above the limit: not formed, whatever max_bytes allows
    bool saw_j = false;
    const JacobianAnalysis a = analyse_jacobians(
        heads, true, opt,
        [&](std::size_t, const HeadJacobian&, const Eigen::MatrixXd& J) { saw_j = J.size() > 0; });
    CHECK_FALSE(a.plan.dense);
    CHECK_FALSE(a.plan.store);
    CHECK_FALSE(saw_j);
    CHECK(a.plan.why_not_dense.find("not needed") != std::string::npos);
    CHECK(std::isnan(a.heads[0].max_abs));  // no J was formed to measure
    REQUIRE(a.heads[0].has_spectrum);
    CHECK(a.heads[0].spectrum.max.sigma > 0);

    // store: J is formed and handed to the sink whatever the limit, with the same spectrum.
    opt.store = true;
    Eigen::MatrixXd kept;
    const JacobianAnalysis s = analyse_jacobians(
        heads, true, opt,
        [&](std::size_t, const HeadJacobian&, const Eigen::MatrixXd& J) { kept = J; });
    CHECK(s.plan.dense);
    CHECK(s.plan.store);
    REQUIRE(kept.rows() == 36);
    CHECK(kept == jacobian_weights(heads[0]));
    CHECK(s.heads[0].spectrum.strict.value == a.heads[0].spectrum.strict.value);

    // store above max_bytes is refused before any work, naming the budget.
    opt.max_bytes = bytes / 2;
    try {
        plan_jacobians(heads, opt);
        FAIL("store with J above max_bytes must be refused");
    } catch (const Error& e) {
        CHECK(e.code() == ExitCode::DataError);
        CHECK(e.parameter() == "max_bytes");
    }
    // A small J (within both limits) is formed and kept with the spectrum: its norms come free.
    JacobianOptions small;
    small.spectrum = true;
    const JacobianAnalysis m = analyse_jacobians(heads, true, small);
    CHECK(m.plan.dense);
    CHECK(m.plan.store);
    CHECK(m.heads[0].has_blocks);
    // Without the spectrum J is always formed (its norms need it), kept only under the limit.
    JacobianOptions norms;
    norms.store_bytes = bytes / 2;
    const JacobianPlan p = plan_jacobians(heads, norms);
    CHECK(p.dense);
    CHECK_FALSE(p.store);
}
