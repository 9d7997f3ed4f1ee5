// Jacobians of one attention head: vec convention on a hand-computed 2x2 case, the literal
// Kronecker form of Thm 3.3, the two routes, complex step, central differences (tolerances and
// their reasons at the top), operators and Gram matrix. Proof notes: proofs/jacobian_routes.md.
#include <cmath>
#include <complex>
#include <tuple>

#include "attnspec/attention/jacobian.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "jacobian_tolerances.hpp"
#include "test_heads.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::kU;
using attnspec::test::random_test_head;
using attnspec::test::tol_complex_step;
using attnspec::test::tol_fd;
using attnspec::test::tol_routes;
using Eigen::Index;
using Eigen::MatrixXd;

namespace {

double nsum(const Head& h) { return static_cast<double>(h.N() + h.D() + h.d()); }

MatrixXd kron(const MatrixXd& A, const MatrixXd& B) {
    MatrixXd K(A.rows() * B.rows(), A.cols() * B.cols());
    for (Index i = 0; i < A.rows(); ++i)
        for (Index j = 0; j < A.cols(); ++j)
            K.block(i * B.rows(), j * B.cols(), B.rows(), B.cols()) = A(i, j) * B;
    return K;
}

// T_{m,n}: T vec(M) = vec(M^T) for M m x n, built from its action on the basis.
MatrixXd commutation(Index m, Index n) {
    MatrixXd T(m * n, m * n);
    for (Index k = 0; k < m * n; ++k) {
        MatrixXd E = MatrixXd::Zero(m, n);
        E.data()[k] = 1;
        const MatrixXd Et = E.transpose();
        T.col(k) = Eigen::Map<const Eigen::VectorXd>(Et.data(), m * n);
    }
    return T;
}

}  // namespace

TEST_CASE("vec convention: J on a hand-computed 2x2 head", "[jacobian]") {
    // W_Q = 0 -> L = 0, S = 1/2 (uniform), Lambda(p) = (1/4)[1 -1; -1 1]. With W_K = diag(1,3),
    // W_V = diag(1,2), X = [1 2; 3 4]: K_1 - K_2 = (-2,-6), V_1 - V_2 = (-2,-4), so
    // G[c][b] = sum_k S_ik (V_kc - A_ic) K_kb = (1/4)(V_1-V_2)_c (K_1-K_2)_b = [1 3; 2 6] and
    // J_Q[(i,c),(a,b)] = X_ia G[c][b]; rows i + 2c, columns a + 2b (column-major vec).
    Head h;
    h.X = (MatrixXd(2, 2) << 1, 2, 3, 4).finished();
    h.W_Q = MatrixXd::Zero(2, 2);
    h.W_K = Eigen::Vector2d(1, 3).asDiagonal();
    h.W_V = Eigen::Vector2d(1, 2).asDiagonal();
    MatrixXd JQ(4, 4), JV(4, 4);
    JQ << 1, 2, 3, 6,  //
        3, 4, 9, 12,   //
        2, 4, 6, 12,   //
        6, 8, 18, 24;
    // J_V = I_2 (x) S X, S X = [2 3; 2 3].
    JV << 2, 3, 0, 0,  //
        2, 3, 0, 0,    //
        0, 0, 2, 3,    //
        0, 0, 2, 3;
    const MatrixXd J = jacobian_weights(h);
    const double tol = tol_routes(6) * jacobian_weights_magnitude(h).norm();
    CHECK((J.leftCols(4) - JQ).norm() <= tol);
    CHECK(J.middleCols(4, 4).norm() <= tol);  // J_K = s (Q (x) ...) with Q = X W_Q = 0
    CHECK((J.rightCols(4) - JV).norm() <= tol);
    // The same numbers from the complex-step witness: the convention is not self-referential.
    CHECK((jacobian_weights_complex_step(h) - J).norm() <=
          tol_complex_step(6) * jacobian_weights_magnitude(h).norm());
    // A planted transposition of the vec order (row-major vec) is caught.
    MatrixXd bad = JQ;
    bad.row(1).swap(bad.row(2));
    CHECK((J.leftCols(4) - bad).norm() > tol);
}

TEST_CASE("T_{m,n} is defined by its action and matches vec(M^T)", "[jacobian]") {
    MatrixXd M(2, 3);
    M << 1, 2, 3, 4, 5, 6;
    const MatrixXd T = commutation(2, 3);
    const Eigen::VectorXd v = T * Eigen::Map<const Eigen::VectorXd>(M.data(), 6);
    const MatrixXd Mt = M.transpose();
    CHECK(v == Eigen::Map<const Eigen::VectorXd>(Mt.data(), 6));
}

TEST_CASE("structured route equals the literal Kronecker form of Thm 3.3", "[jacobian]") {
    for (auto [N, D, d] : {std::tuple<Index, Index, Index>{3, 4, 2}, {5, 2, 3}, {4, 3, 1}}) {
        for (LogitScale sc : {LogitScale::one, LogitScale::inv_sqrt_d}) {
            const Head h = random_test_head(N, D, d, 7, "none", sc);
            const auto f = attention_forward<double>(h);
            const MatrixXd Lam = SoftmaxJacobian(f.S).dense();
            const MatrixXd left = kron(f.V.transpose(), MatrixXd::Identity(N, N));
            // J_Q = s (V^T (x) I_N) Lambda (X W_K (x) X); J_K = s (...) Lambda (X (x) X W_Q)
            // T_{D,d}
            const MatrixXd JQ = h.s * left * Lam * kron(f.K, h.X);
            const MatrixXd JK = h.s * left * Lam * kron(h.X, f.Q) * commutation(D, d);
            const MatrixXd JV = kron(MatrixXd::Identity(d, d), f.S * h.X);
            MatrixXd Jlit(N * d, 3 * D * d);
            Jlit << JQ, JK, JV;
            const MatrixXd J = jacobian_weights(h);
            INFO("N D d = " << N << " " << D << " " << d);
            CHECK((J - Jlit).norm() <= tol_routes(nsum(h)) * jacobian_weights_magnitude(h).norm());
            // J_X = (W_V^T (x) S) + s (V^T (x) I_N) Lambda [(K W_Q^T (x) I_N) + (I_N (x) Q W_K^T)
            // T_{N,D}]
            const MatrixXd IN = MatrixXd::Identity(N, N);
            const MatrixXd JXlit = kron(h.W_V.transpose(), f.S) +
                                   h.s * left * Lam *
                                       (kron(f.K * h.W_Q.transpose(), IN) +
                                        kron(IN, f.Q * h.W_K.transpose()) * commutation(N, D));
            CHECK((jacobian_input(h) - JXlit).norm() <=
                  tol_routes(nsum(h)) * jacobian_input_magnitude(h).norm());
        }
    }
}

TEST_CASE("routes, complex step and central differences agree on a grid of shapes", "[jacobian]") {
    const std::tuple<Index, Index, Index> shapes[] = {
        {5, 3, 2}, {3, 6, 2}, {4, 5, 1}, {6, 6, 3}, {2, 2, 2}};
    for (auto [N, D, d] : shapes)
        for (const char* corr : {"none", "lambda:2", "svd", "lambda:10"})
            for (LogitScale sc : {LogitScale::one, LogitScale::inv_sqrt_d}) {
                const Head h =
                    random_test_head(N, D, d, 11 + N, corr, sc, N % 2 ? "layernorm" : "gaussian");
                INFO("N D d = " << N << " " << D << " " << d << ", correction " << corr
                                << ", s = " << h.s);
                const double n = nsum(h);
                const MatrixXd J = jacobian_weights(h), JX = jacobian_input(h);
                const double M = jacobian_weights_magnitude(h).norm();
                const double MX = jacobian_input_magnitude(h).norm();
                CHECK((J - jacobian_weights_forward_mode(h)).norm() <= tol_routes(n) * M);
                CHECK((JX - jacobian_input_forward_mode(h)).norm() <= tol_routes(n) * MX);
                CHECK((J - jacobian_weights_complex_step(h)).norm() <= tol_complex_step(n) * M);
                CHECK((JX - jacobian_input_complex_step(h)).norm() <= tol_complex_step(n) * MX);
                if (std::string(corr) != "lambda:10") {  // saturated: see tol_fd
                    CHECK((J - jacobian_weights_central_fd(h)).norm() <= tol_fd() * M);
                    CHECK((JX - jacobian_input_central_fd(h)).norm() <= tol_fd() * MX);
                }
            }
}

TEST_CASE("jacobian_weights_block returns the column blocks of J", "[jacobian]") {
    const Head h = random_test_head(4, 3, 2, 6, "svd");
    const MatrixXd J = jacobian_weights(h);
    const Index Dd = h.D() * h.d();
    CHECK(jacobian_weights_block(h, WeightBlock::Q) == J.leftCols(Dd));
    CHECK(jacobian_weights_block(h, WeightBlock::K) == J.middleCols(Dd, Dd));
    CHECK(jacobian_weights_block(h, WeightBlock::V) == J.rightCols(Dd));
}

TEST_CASE("a planted error in one entry flips the route comparison", "[jacobian]") {
    const Head h = random_test_head(4, 3, 2, 5);
    MatrixXd J = jacobian_weights(h);
    const double tol = tol_routes(nsum(h)) * jacobian_weights_magnitude(h).norm();
    const MatrixXd Jc = jacobian_weights_complex_step(h);
    CHECK((J - Jc).norm() <= tol);
    J(3, 7) += 1e3 * tol;
    CHECK((J - Jc).norm() > tol);
}

TEST_CASE("SpecA: the Jacobian with respect to W is J evaluated at W + C", "[jacobian]") {
    Head h = random_test_head(4, 5, 2, 3, "lambda:2");
    Head e = h.effective();
    CHECK_FALSE(e.corrected());
    CHECK(e.W_Q == h.W_Q + h.C_Q);
    CHECK(jacobian_weights(h) == jacobian_weights(e));
    // Corrections change the point: J differs from the uncorrected head's.
    Head plain = h;
    apply_correction(plain, CorrectionSpec::parse("none"));
    CHECK((jacobian_weights(plain) - jacobian_weights(h)).norm() >
          1e-3 * jacobian_weights(h).norm());
}

TEST_CASE("matrix-free operators: J v, J^T u match dense J and are adjoint", "[jacobian]") {
    for (auto [N, D, d] : {std::tuple<Index, Index, Index>{6, 4, 3}, {3, 7, 2}, {5, 5, 1}}) {
        const Head h = random_test_head(N, D, d, 21, "svd", LogitScale::inv_sqrt_d);
        const double n = nsum(h);
        const JacobianOperator op(h);
        const JacobianXOperator opx(h);
        const MatrixXd J = jacobian_weights(h), JX = jacobian_input(h);
        const MatrixXd M = jacobian_weights_magnitude(h), MX = jacobian_input_magnitude(h);
        REQUIRE(op.rows() == N * d);
        REQUIRE(op.cols() == 3 * D * d);
        REQUIRE(opx.cols() == N * D);
        Rng rng(99);
        const Eigen::VectorXd v = rng.gaussian(op.cols(), 1), u = rng.gaussian(op.rows(), 1);
        const Eigen::VectorXd vx = rng.gaussian(opx.cols(), 1);
        // |J v - (J v)_computed| <= gamma (|M| |v|) <= tol |M|_F |v| (Cauchy-Schwarz), with the
        // dense product's inner dimension (cols or rows) added to n.
        const double nc = n + static_cast<double>(op.cols()),
                     nr = n + static_cast<double>(op.rows());
        const double ncx = n + static_cast<double>(opx.cols());
        CHECK((op * v - J * v).norm() <= tol_routes(nc) * M.norm() * v.norm());
        CHECK((op.transpose_times(u) - J.transpose() * u).norm() <=
              tol_routes(nr) * M.norm() * u.norm());
        CHECK((opx * vx - JX * vx).norm() <= tol_routes(ncx) * MX.norm() * vx.norm());
        CHECK((opx.transpose_times(u) - JX.transpose() * u).norm() <=
              tol_routes(nr) * MX.norm() * u.norm());
        // Adjointness <J v, u> = <v, J^T u>: both sides within gamma_n |u|^T M |v| of the exact
        // value, plus the dot products' own rounding.
        const double adj = tol_routes(n + static_cast<double>(op.cols())) *
                           (u.cwiseAbs().transpose() * M * v.cwiseAbs())(0);
        CHECK(std::fabs((op * v).dot(u) - v.dot(op.transpose_times(u))) <= adj);
        const double adjx = tol_routes(n + static_cast<double>(opx.cols())) *
                            (u.cwiseAbs().transpose() * MX * vx.cwiseAbs())(0);
        CHECK(std::fabs((opx * vx).dot(u) - vx.dot(opx.transpose_times(u))) <= adjx);
    }
}

TEST_CASE("J J^T and J_X J_X^T from factors equal the dense Gram matrices", "[jacobian]") {
    for (auto [N, D, d] : {std::tuple<Index, Index, Index>{5, 3, 2}, {3, 8, 3}, {4, 4, 1}}) {
        const Head h =
            random_test_head(N, D, d, 31, N == 4 ? "svd" : "none", LogitScale::one, "layernorm");
        const MatrixXd J = jacobian_weights(h), M = jacobian_weights_magnitude(h);
        const MatrixXd G = jacobian_gram_outer(h);
        // Entry error <= (errors of the factors ~ route bound) + gemm over 3Dd terms:
        // gamma_{n + 3Dd} (M M^T) -> 4 (n + 3Dd) u |M|_F^2 -> measured worst 0.010 (n + 3Dd) u
        // |M|_F^2 (J_X: 0.044 (n + ND) u |M_X|_F^2) over 84 instances -> headroom > 90x.
        const double tol = tol_routes(nsum(h) + 3.0 * D * d) * M.squaredNorm();
        INFO("N D d = " << N << " " << D << " " << d);
        CHECK((G - J * J.transpose()).norm() <= tol);
        CHECK(G == G.transpose());
        // J_X J_X^T: same bound with the inner dimension N D of J_X J_X^T.
        const MatrixXd JX = jacobian_input(h), MX = jacobian_input_magnitude(h);
        const MatrixXd GX = jacobian_x_gram_outer(h);
        CHECK((GX - JX * JX.transpose()).norm() <=
              tol_routes(nsum(h) + 1.0 * N * D) * MX.squaredNorm());
        CHECK(GX == GX.transpose());
        // Planted: a relative error of 1e-6 on the diagonal is caught.
        MatrixXd bad = GX;
        bad.diagonal() *= 1 + 1e-6;
        CHECK((bad - JX * JX.transpose()).norm() >
              tol_routes(nsum(h) + 1.0 * N * D) * MX.squaredNorm());
    }
}

TEST_CASE("softmax Jacobian: blocks, action and singular values", "[jacobian]") {
    const Head h = random_test_head(4, 3, 2, 2);
    const MatrixXd S = attention_forward<double>(h).S;
    const SoftmaxJacobian Lam(S);
    const MatrixXd dense = Lam.dense();
    Rng rng(5);
    const MatrixXd dL = rng.gaussian(4, 4);
    const MatrixXd dS = Lam.apply(dL);
    const Eigen::VectorXd ref = dense * Eigen::Map<const Eigen::VectorXd>(dL.data(), 16);
    CHECK((Eigen::Map<const Eigen::VectorXd>(dS.data(), 16) - ref).norm() <=
          tol_routes(8) * dL.norm());
    // Singular values: union of the block spectra; compare with a dense SVD of the N^2 x N^2 form.
    const Eigen::VectorXd sv = softmax_jacobian_singular_values(S);
    const Eigen::VectorXd ref_sv = Eigen::JacobiSVD<MatrixXd>(dense).singularValues();
    // Weyl + backward-stable eigensolvers: |sigma_i - sigma_i'| <= c N u |Lambda|_2, |Lambda|_2
    // <= 1.
    CHECK((sv - ref_sv).cwiseAbs().maxCoeff() <= tol_routes(16));
    // Rank N(N-1): exactly N singular values at rounding level.
    CHECK(sv[16 - 4 - 1] > 1e3 * tol_routes(16));
    CHECK(sv.tail(4).cwiseAbs().maxCoeff() <= tol_routes(16));
}

TEST_CASE("bad input is refused with DataError before allocating", "[jacobian]") {
    Head h = random_test_head(3, 4, 2, 1);
    Head bad = h;
    bad.W_K = MatrixXd::Zero(3, 2);
    CHECK_THROWS_AS(jacobian_weights(bad), Error);
    bad = h;
    bad.X.modify([](MatrixXd& X) { X(1, 1) = std::nan(""); });
    try {
        jacobian_weights(bad);
        FAIL("NaN accepted");
    } catch (const Error& e) {
        CHECK(e.code() == ExitCode::DataError);
        CHECK(std::string(e.what()).find("NaN") != std::string::npos);
    }
    bad = h;
    bad.s = 0;
    CHECK_THROWS_AS(jacobian_input(bad), Error);
    bad = h;
    bad.C_V = MatrixXd::Zero(2, 2);
    CHECK_THROWS_AS(JacobianOperator(bad), Error);
    try {
        jacobian_weights(h, /*max_bytes=*/100);
        FAIL("oversized J accepted");
    } catch (const Error& e) {
        CHECK(e.code() == ExitCode::DataError);
        CHECK(std::string(e.what()).find("would need") != std::string::npos);
    }
    // Logits beyond the double range are refused, not turned into NaN.
    bad = h;
    bad.X = bad.X * 1e160;
    CHECK_THROWS_WITH(jacobian_weights(bad), Catch::Contains("overflow"));
    // The matrix-free state refuses N x N workspaces above the limit before allocating them.
    Head big;
    big.X = MatrixXd::Ones(30000, 1);
    big.W_Q = big.W_K = big.W_V = MatrixXd::Ones(1, 1);
    CHECK_THROWS_WITH(JacobianOperator(big), Catch::Contains("would need"));
    CHECK_THROWS_AS(CorrectionSpec::parse("lambda:-1"), Error);
    CHECK_THROWS_AS(CorrectionSpec::parse("foo"), Error);
}

TEST_CASE("forward pass in long double and complex<long double> (extended-precision witness)",
          "[jacobian]") {
    const Head h = random_test_head(5, 4, 3, 13, "lambda:2", LogitScale::inv_sqrt_d);
    using LD = long double;
    using CLD = std::complex<long double>;
    const Head e = h.effective();
    const auto fd = attention_forward<double>(h);
    const auto fl = attention_forward<LD>(h);
    // Forward pass: |A - A_ld| <= gamma_n |S||V| entrywise; S, V >= their magnitudes' scale.
    const double n = nsum(h);
    const MatrixXd Al = fl.A.cast<double>();
    CHECK((fd.A - Al).norm() <=
          tol_routes(n) * (fd.S * (e.X.cwiseAbs() * e.W_V.cwiseAbs())).norm());
    // Complex step in complex<long double>: J with error ~ n u_ld, a reference ~2^-11 more
    // accurate than double; route (a) must be within one route's bound 2 n u |M| of it.
    const Index Dd = h.D() * h.d(), Nd = h.N() * h.d();
    MatrixXd Jref(Nd, 3 * Dd);
    const long double step = 1e-30L;
    for (Index col = 0; col < 3 * Dd; ++col) {
        Mat<CLD> X = e.X.cast<CLD>(), WQ = e.W_Q.cast<CLD>(), WK = e.W_K.cast<CLD>(),
                 WV = e.W_V.cast<CLD>();
        Mat<CLD>* W[3] = {&WQ, &WK, &WV};
        W[col / Dd]->data()[col % Dd] += CLD(0, step);
        const Mat<CLD> A = attention_forward<CLD>(X, WQ, WK, WV, CLD(e.s)).A;
        for (Index k = 0; k < Nd; ++k)
            Jref(k, col) = static_cast<double>(A.data()[k].imag() / step);
    }
    const MatrixXd J = jacobian_weights(h);
    CHECK((J - Jref).norm() <= 0.5 * tol_routes(n) * jacobian_weights_magnitude(h).norm());
}

TEST_CASE("softmax block eigenvalues: closed forms to high relative accuracy", "[jacobian]") {
    // Relative tolerance 4 N u: normalisation (N u) + root of g from the nearer pole, each of the
    // <= N terms with relative error <= 3u, bisection to the last bit -> measured worst 0.76 N u
    // over these closed forms and 12 more (p down to 1e-300) -> headroom 5x.
    using LD = long double;
    // N = 2: nonzero eigenvalue 2 p1 p2, even for a saturated row (p2 = 1e-20).
    for (double p2 : {0.7, 1e-20}) {
        const Eigen::Vector2d p(1.0, p2);
        const LD t = LD(1) + LD(p2), q1 = LD(1) / t, q2 = LD(p2) / t;
        const double exact = static_cast<double>(2 * q1 * q2);
        const Eigen::VectorXd ev = softmax_block_eigenvalues(p);
        REQUIRE(ev.size() == 2);
        CHECK(ev[0] == 0);
        CHECK(std::fabs(ev[1] - exact) <= tol_routes(2) * exact);
        CHECK_FALSE(std::fabs(ev[1] * (1 + 1e-12) - exact) <= tol_routes(2) * exact);  // planted
    }
    // N = 3: nonzero eigenvalues solve x^2 - T x + P = 0, T = 2 (p1p2 + p1p3 + p2p3),
    // P = 3 p1 p2 p3 (sums of principal minors; no cancellation in T).
    const Eigen::Vector3d p(1.0, 1e-10, 3e-13);
    const LD t = LD(p[0]) + LD(p[1]) + LD(p[2]);
    const LD q[3] = {LD(p[0]) / t, LD(p[1]) / t, LD(p[2]) / t};
    const LD T = 2 * (q[0] * q[1] + q[0] * q[2] + q[1] * q[2]), P = 3 * q[0] * q[1] * q[2];
    const LD hi = (T + std::sqrt(T * T - 4 * P)) / 2, lo = P / hi;
    const Eigen::VectorXd ev = softmax_block_eigenvalues(p);
    CHECK(ev[0] == 0);
    CHECK(std::fabs(ev[1] - static_cast<double>(lo)) <= tol_routes(3) * static_cast<double>(lo));
    CHECK(std::fabs(ev[2] - static_cast<double>(hi)) <= tol_routes(3) * static_cast<double>(hi));
    // Ties and zeros: p = (1/4, 1/4, 1/2, 0) -> {0, 0, 1/4, 3/8} exactly (g = 0 at 3/8).
    const Eigen::VectorXd e4 = softmax_block_eigenvalues(Eigen::Vector4d(0.25, 0.25, 0.5, 0));
    CHECK(e4 == Eigen::Vector4d(0, 0, 0.25, 0.375));
    // Against the dense eigensolver on random rows (absolute accuracy of the dense one).
    const MatrixXd S = attention_forward<double>(random_test_head(9, 5, 3, 4)).S;
    const Eigen::VectorXd a = softmax_jacobian_singular_values(S);
    const Eigen::VectorXd b = softmax_jacobian_singular_values(S, LambdaEigenMethod::dense);
    CHECK((a - b).cwiseAbs().maxCoeff() <= tol_routes(9));
    CHECK_THROWS_AS(softmax_block_eigenvalues(Eigen::Vector2d(0.5, -0.1)), Error);
}
