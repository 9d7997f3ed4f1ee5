// Multi-head layers (heads share X): full-layer Jacobians against central differences of the
// concatenated forward pass, and the per-head block structure.
#include <cmath>
#include <tuple>

#include "attnspec/attention/jacobian.hpp"
#include "attnspec/base/random.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::kU;
using Eigen::Index;
using Eigen::MatrixXd;

namespace {

// Central differences of multihead_forward, step h = (3u)^(1/3) max(1, |x|) per entry; perturb
// selects X (head < 0) or head h's weights (in [W_Q, W_K, W_V] order).
MatrixXd fd_layer(const MultiHead& m, bool input) {
    const double rel = std::cbrt(3 * kU);
    const Index N = m.X.rows(), D = m.X.cols(), d = m.heads[0].W_Q.cols(), H = m.H();
    const Index ncol = input ? N * D : 3 * D * d * H;
    MatrixXd J(N * d * H, ncol);
    for (Index col = 0; col < ncol; ++col) {
        MultiHead p = m, q = m;
        MatrixXd Xp = m.X, Xq = m.X;  // X is read-only (SharedMatrix): perturb a copy
        auto entry = [&](MultiHead& x, MatrixXd& X) -> double& {
            if (input) return X.data()[col];
            const Index h = col / (3 * D * d), r = col % (3 * D * d), b = r / (D * d);
            HeadWeights& w = x.heads[static_cast<size_t>(h)];
            MatrixXd& W = b == 0 ? w.W_Q : b == 1 ? w.W_K : w.W_V;
            return W.data()[r % (D * d)];
        };
        const double x0 = entry(p, Xp), step = (x0 + rel * std::max(1.0, std::fabs(x0))) - x0;
        entry(p, Xp) = x0 + step;
        entry(q, Xq) = x0 - step;
        p.X = std::move(Xp);
        q.X = std::move(Xq);
        const MatrixXd Ap = multihead_forward(p), Aq = multihead_forward(q);
        J.col(col) = (Eigen::Map<const Eigen::VectorXd>(Ap.data(), Ap.size()) -
                      Eigen::Map<const Eigen::VectorXd>(Aq.data(), Aq.size())) /
                     (2 * step);
    }
    return J;
}

}  // namespace

TEST_CASE("multi-head: full-layer J and J_X match central differences", "[jacobian][multihead]") {
    for (auto [N, D, d, H] : {std::tuple<Index, Index, Index, Index>{4, 3, 2, 2}, {3, 5, 1, 3}}) {
        RandomSpec rs;
        rs.N = N, rs.D = D, rs.d = d, rs.H = H, rs.seed = 8, rs.scale = LogitScale::inv_sqrt_d;
        MultiHead m = random_multihead(rs);
        m.heads[1].C_Q = MatrixXd::Identity(D, d);  // a corrected head among plain ones
        const MatrixXd J = jacobian_weights(m), JX = jacobian_input(m);
        REQUIRE(J.rows() == N * d * H);
        REQUIRE(J.cols() == 3 * D * d * H);
        // Scales: per-head magnitudes (block diagonal / stacked), as in test_jacobian.cpp.
        double M2 = 0, MX2 = 0;
        for (Index h = 0; h < H; ++h) {
            M2 += jacobian_weights_magnitude(m.head(h)).squaredNorm();
            MX2 += jacobian_input_magnitude(m.head(h)).squaredNorm();
        }
        // tol_fd of test_jacobian.cpp: 16 (3u)^(2/3), empirical (measured worst 1.66) -> ~10x.
        const double tol = 16 * std::pow(3 * kU, 2.0 / 3.0);
        INFO("N D d H = " << N << " " << D << " " << d << " " << H);
        CHECK((J - fd_layer(m, false)).norm() <= tol * std::sqrt(M2));
        CHECK((JX - fd_layer(m, true)).norm() <= tol * std::sqrt(MX2));
        // Block structure: head h's rows depend only on head h's weights (exact zeros).
        for (Index h = 0; h < H; ++h)
            for (Index g = 0; g < H; ++g)
                if (g != h) CHECK(J.block(h * N * d, g * 3 * D * d, N * d, 3 * D * d).isZero(0));
        CHECK(JX.middleRows(N * d, N * d) == jacobian_input(m.head(1)));
    }
}

TEST_CASE("multi-head: layer operators match the dense layer Jacobians", "[jacobian][multihead]") {
    RandomSpec rs;
    rs.N = 5, rs.D = 4, rs.d = 2, rs.H = 3, rs.seed = 12;
    const MultiHead m = random_multihead(rs);
    const MatrixXd J = jacobian_weights(m), JX = jacobian_input(m);
    const LayerJacobianOperator op(m);
    const LayerJacobianXOperator opx(m);
    REQUIRE(op.rows() == J.rows());
    REQUIRE(op.cols() == J.cols());
    REQUIRE(opx.rows() == JX.rows());
    REQUIRE(opx.cols() == JX.cols());
    Rng rng(4);
    const Eigen::VectorXd v = rng.gaussian(J.cols(), 1), u = rng.gaussian(J.rows(), 1);
    const Eigen::VectorXd vx = rng.gaussian(JX.cols(), 1);
    double M2 = 0, MX2 = 0;
    for (Index h = 0; h < m.H(); ++h) {
        M2 += jacobian_weights_magnitude(m.head(h)).squaredNorm();
        MX2 += jacobian_input_magnitude(m.head(h)).squaredNorm();
    }
    // Route bound of test_jacobian.cpp, 4 (n + k) u |M|_F |v|, k the dense product's inner
    // dimension (Cauchy-Schwarz on the componentwise bound gamma |M||v|).
    const double n = 5 + 4 + 2;
    auto tol = [&](double k, double M, double x) { return 4 * (n + k) * kU * M * x; };
    CHECK((op * v - J * v).norm() <= tol(J.cols(), std::sqrt(M2), v.norm()));
    CHECK((op.transpose_times(u) - J.transpose() * u).norm() <=
          tol(J.rows(), std::sqrt(M2), u.norm()));
    CHECK((opx * vx - JX * vx).norm() <= tol(JX.cols(), std::sqrt(MX2), vx.norm()));
    CHECK((opx.transpose_times(u) - JX.transpose() * u).norm() <=
          tol(JX.rows(), std::sqrt(MX2), u.norm()));
}
