// Jacobian routes on shapes that straddle Eigen/BLAS block sizes (31, 32, 33; tall and wide),
// with corrections and both logit scales. Same tolerances and reasons as
// tests/cpu/attention/test_jacobian.cpp (proofs/jacobian_routes.md): 4 n u |M| for routes and
// operators, 8 n u |M| for complex step.
#include <tuple>

#include "attnspec/attention/jacobian.hpp"
#include "attnspec/base/random.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::kU;
using Eigen::Index;
using Eigen::MatrixXd;

TEST_CASE("routes agree on block-straddling shapes", "[jacobian][slow]") {
    const std::tuple<Index, Index, Index, const char*, LogitScale> cases[] = {
        {33, 31, 8, "none", LogitScale::one},
        {31, 33, 9, "svd", LogitScale::inv_sqrt_d},
        {32, 17, 1, "lambda:2", LogitScale::one},
        {9, 64, 33, "none", LogitScale::inv_sqrt_d}};
    for (auto [N, D, d, corr, sc] : cases) {
        RandomSpec rs;
        rs.N = N, rs.D = D, rs.d = d, rs.seed = 77, rs.scale = sc, rs.token_dist = "layernorm";
        Head h = random_head(rs);
        apply_correction(h, CorrectionSpec::parse(corr));
        const double n = static_cast<double>(N + D + d);
        INFO("N D d = " << N << " " << D << " " << d << " correction " << corr);
        const MatrixXd J = jacobian_weights(h), M = jacobian_weights_magnitude(h);
        CHECK((J - jacobian_weights_forward_mode(h)).norm() <= 4 * n * kU * M.norm());
        CHECK((J - jacobian_weights_complex_step(h)).norm() <= 8 * n * kU * M.norm());
        const MatrixXd JX = jacobian_input(h), MX = jacobian_input_magnitude(h);
        CHECK((JX - jacobian_input_forward_mode(h)).norm() <= 4 * n * kU * MX.norm());
        CHECK((JX - jacobian_input_complex_step(h)).norm() <= 8 * n * kU * MX.norm());
        // Operators against dense on a batch of random vectors: componentwise bound
        // gamma (|M||v|), with the dense product's own inner dimension (cols or rows) added to n.
        const JacobianOperator op(h);
        Rng rng(3);
        const MatrixXd Vs = rng.gaussian(op.cols(), 3), Us = rng.gaussian(op.rows(), 3);
        for (Index k = 0; k < 3; ++k) {
            const double nv = n + static_cast<double>(op.cols()),
                         nu = n + static_cast<double>(op.rows());
            CHECK((op * Vs.col(k) - J * Vs.col(k)).norm() <=
                  4 * nv * kU * (M * Vs.col(k).cwiseAbs()).norm());
            CHECK((op.transpose_times(Us.col(k)) - J.transpose() * Us.col(k)).norm() <=
                  4 * nu * kU * (M.transpose() * Us.col(k).cwiseAbs()).norm());
        }
        const MatrixXd G = jacobian_gram_outer(h);
        CHECK((G - J * J.transpose()).norm() <= 4 * (n + 3.0 * D * d) * kU * M.squaredNorm());
    }
}
