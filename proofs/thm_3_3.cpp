// thm3.3: closed-form Jacobian blocks against the complex-step witness (proofs/thm_3_3.md).
// Symbols: J_a (route (a), Thm 3.3 closed forms), J_cs (complex step, h = 1e-30), M (running-error
// magnitude of the same formulas on absolute values), n = N + D + d.
#include "attnspec/proofs/thm_3_3.hpp"

#include <cmath>
#include <limits>

#include "attention_run.hpp"
#include "attnspec/attention/jacobian.hpp"
#include "attnspec/base/rounding.hpp"

namespace attnspec::proofs {

namespace {
constexpr double kU = kUnitRoundoff;
// complex step: rounding of the complex forward pass (complex multiply <= sqrt(5) u) on top of
// the real route's gamma_{n+3}: 8 n u ||M||_F; measured worst 0.22 n u
// (tests/cpu/attention/test_jacobian.cpp)
// -> headroom 36x.
double tol_cs(double n) { return 8 * n * kU; }

Comparison block_comparison(const std::string& name, const Eigen::MatrixXd& Ja,
                            const Eigen::MatrixXd& Jcs, const Eigen::MatrixXd& M, double n) {
    const double diff = (Ja - Jcs).norm();
    const double tol = tol_cs(n) * M.norm();
    // Both sides of `diff <= tol` are evaluated in floating point with relative error far below
    // the 36x headroom; they are compared as points.
    return compare(name, "||J_a - J_cs||_F", diff, Interval::point(diff), Relation::le,
                   "8 n u ||M||_F", tol, Interval::point(tol), /*attainable=*/true);
}
}  // namespace

CheckResult check_thm_3_3(const Head& h, const JacobianFn& closed_form) {
    h.validate("thm3.3");
    const double n = static_cast<double>(h.N() + h.D() + h.d());
    const Eigen::Index Dd = h.D() * h.d();
    const Eigen::MatrixXd Ja = closed_form ? closed_form(h) : jacobian_weights(h);
    const Eigen::MatrixXd Jcs = jacobian_weights_complex_step(h);
    const Eigen::MatrixXd M = jacobian_weights_magnitude(h);
    CheckResult res;
    res.check = "thm3.3";
    res.claim = "J_Q, J_K, J_V (Thm 3.3 closed forms) and J_X equal their complex-step derivatives";
    res.conventions = {{"vec", "column-major"},
                       {"J", "[J_Q, J_K, J_V] at effective weights W + C"},
                       {"witness", "complex step, h = 1e-30"}};
    res.tolerances = {{"tol_cs", tol_cs(n),
                       "x ||M||_F: gamma_{n+3} per route, complex multiply <= sqrt(5) u -> 8 n u; "
                       "measured worst 0.22 n u -> headroom 36x"}};
    const char* names[] = {"J_Q", "J_K", "J_V"};
    for (int b = 0; b < 3; ++b)
        res.comparisons.push_back(block_comparison(names[b], Ja.middleCols(b * Dd, Dd),
                                                   Jcs.middleCols(b * Dd, Dd),
                                                   M.middleCols(b * Dd, Dd), n));
    res.comparisons.push_back(block_comparison(
        "J_X", jacobian_input(h), jacobian_input_complex_step(h), jacobian_input_magnitude(h), n));
    double worst = 0;
    for (const auto& c : res.comparisons) worst = std::max(worst, c.ratio);
    // Headline: the worst block, normalised by its tolerance (<= 1 means every block agrees).
    res.comparisons.push_back(compare("worst_block", "max_b ||J_a - J_cs||_F / tol_b", worst,
                                      Interval::point(worst), Relation::le, "1", 1.0,
                                      Interval::point(1.0), /*attainable=*/true));
    res.values = {
        {"N", double(h.N())}, {"D", double(h.D())}, {"d", double(h.d())}, {"worst_ratio", worst}};
    store_head(res, h);
    res.finalize();
    return res;
}

CheckRun run_thm_3_3(const RunOptions& opt) {
    CheckRun run = run_attention_check(
        opt, "thm3.3", "closed-form J blocks and J_X = complex-step derivatives", "worst_block", 2,
        [](const Head& h) { return check_thm_3_3(h); });
    return run;
}

}  // namespace attnspec::proofs
