// InfSA CPU reference: closed forms (N = 1, 2, diagonal Â, rank-one QK^T), Neumann kernel products,
// truncation bound/order, centralities and absorbing leak, CW Perron enclosures, bad inputs.
#include <cmath>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/infsa/affinity.hpp"
#include "attnspec/infsa/centrality.hpp"
#include "attnspec/infsa/fidelity.hpp"
#include "attnspec/infsa/linear_infsa.hpp"
#include "attnspec/infsa/neumann.hpp"
#include "attnspec/infsa/perron.hpp"
#include "attnspec/infsa/relu_kernel.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::IsClose;
using attnspec::test::kU;

namespace {

// Forward error of an LU-based inverse/solve of M = I - gamma Â: <= c n u kappa(M) (Higham 14.1);
// kappa(M) <= (1 + gamma)/(1 - gamma ||Â||_2) <= 40 at gamma = 0.95; c = 8 (a bound, not
// fitted) -> measured worst ratio 4e-3 of this tolerance in these tests -> 250x headroom.
double lu_tol(Eigen::Index n, double gamma) {
    return 8 * double(n + 1) * kU * (1 + gamma) / (1 - gamma);
}

}  // namespace

TEST_CASE("affinity: N = 1 closed form and Neumann scalar", "[infsa]") {
    Eigen::MatrixXd q(1, 3), k(1, 3);
    q << 1, 2, 3;
    k << 0.5, 1, -0.25;
    const double s = (0.5 + 2 - 0.75) / 3.0;  // q.k / d_h
    const Affinity A = affinity(q, k);
    const double a = s / (s + 1e-6);
    CHECK_THAT(A.A_hat, IsClose(Eigen::MatrixXd::Constant(1, 1, a), 4 * kU));  // 3 roundings
    const NeumannKernel nk(A.A_hat, 0.95);
    CHECK_THAT(nk.kernel(),
               IsClose(Eigen::MatrixXd::Constant(1, 1, 1 / (1 - 0.95 * a)), lu_tol(1, 0.95)));
    const PerronResult p = perron(A.A_hat);
    CHECK(p.rho_enc.contains(A.A_hat(0, 0)));
}

TEST_CASE("affinity: N = 2 closed-form inverse and spectral radius", "[infsa]") {
    Eigen::MatrixXd Ah(2, 2);
    Ah << 0.1, 0.5, 0.3, 0.2;
    const double g = 0.9;
    const NeumannKernel nk(Ah, g);
    const double a = 1 - g * 0.1, b = -g * 0.5, c = -g * 0.3, d = 1 - g * 0.2, det = a * d - b * c;
    Eigen::MatrixXd inv(2, 2);
    inv << d / det, -b / det, -c / det, a / det;
    CHECK_THAT(nk.kernel(), IsClose(inv, lu_tol(2, g)));
    const double tr = 0.3, dt = 0.1 * 0.2 - 0.5 * 0.3;
    const double rho = (tr + std::sqrt(tr * tr - 4 * dt)) / 2;
    const PerronResult p = perron(Ah);
    CHECK(p.converged);
    CHECK(p.rho_enc.contains(rho));
    // the exact left Perron vector of [[a b],[c d]]: (A^T - rho) v = 0 -> v ~ (c, rho - a)
    Eigen::Vector2d v(0.3, rho - 0.1);
    CHECK(cosine(p.vec, v) >= 1 - 64 * kU);
}

TEST_CASE("diagonal Â: kernel, closure, Katz, truncation equality case", "[infsa]") {
    const Eigen::Index n = 5;
    const Eigen::MatrixXd I = Eigen::MatrixXd::Identity(n, n);
    const Affinity A = affinity(I, I);  // QK^T/d = I/5, ||.||_F = 1/sqrt 5
    const double a = (1.0 / n) / (1 / std::sqrt(double(n)) + 1e-6);
    CHECK_THAT(A.A_hat, IsClose(a * I, 8 * kU));
    const double g = 0.95;
    const NeumannKernel nk(A.A_hat, g);
    CHECK_THAT(nk.kernel(), IsClose(I / (1 - g * a), lu_tol(n, g)));
    const Eigen::MatrixXd V = Rng(7).gaussian(n, 3);
    CHECK_THAT(nk.closure_times(V), IsClose(V * (g * a / (1 - g * a)), lu_tol(n, g)));
    const Centralities c = centralities(A.A_hat, nk);
    const Eigen::VectorXd katz = Eigen::VectorXd::Constant(n, g * a / (1 - g * a));
    CHECK_THAT(Eigen::MatrixXd(c.katz_in), IsClose(katz, lu_tol(n, g)));
    CHECK_THAT(Eigen::MatrixXd(c.katz_out), IsClose(katz, lu_tol(n, g)));
    CHECK(c.probabilistic);
    CHECK(c.left.rho_enc.contains(a));
    // ||N - N_K||_2 = (g a)^{K+1}/(1 - g a): the bound is attained.
    const Interval s2 = norm2_enclosure(A.A_hat);
    CHECK(s2.contains(a));
    for (int K : {0, 1, 3, 7}) {
        const Eigen::MatrixXd E = nk.kernel() - neumann_truncated(A.A_hat, g, K);
        const double exact = std::pow(g * a, K + 1) / (1 - g * a);
        CHECK_THAT(E, IsClose(exact * I, 8 * (K + 2) * lu_tol(n, g)));
        CHECK(truncation_bound(g, s2.hi, K) >= exact);
    }
}

TEST_CASE("rank-one QK^T: Sherman-Morrison kernel, Perron vectors, Linear-InfSA exact", "[infsa]") {
    const Eigen::Index N = 33, d = 8;
    Rng rng(11);
    Eigen::VectorXd al(N), be(N), u = rng.gaussian(d, 1);
    for (Eigen::Index i = 0; i < N; ++i) al[i] = rng.uniform(0.5, 2), be[i] = rng.uniform(0.5, 2);
    const Eigen::MatrixXd Q = al * u.transpose(), K = be * u.transpose();
    const Affinity A = affinity(Q, K);
    const double c = A.A_hat(0, 0) / (al[0] * be[0]);
    CHECK_THAT(A.A_hat, IsClose(c * al * be.transpose(), 16 * kU * d));
    const double g = 0.95, t = g * c * be.dot(al);
    const NeumannKernel nk(A.A_hat, g);
    const Eigen::MatrixXd Nsm =
        Eigen::MatrixXd::Identity(N, N) + g * c * al * be.transpose() / (1 - t);
    CHECK_THAT(nk.kernel(), IsClose(Nsm, lu_tol(N, g)));
    const Centralities cc = centralities(A.A_hat, nk);
    CHECK(cc.left.rho_enc.contains(c * be.dot(al)));
    CHECK(cosine(cc.left.vec, be) >= 1 - 64 * kU);   // left Perron vector ~ beta (keys)
    CHECK(cosine(cc.right.vec, al) >= 1 - 64 * kU);  // right ~ alpha (queries)
    CHECK(cosine(cc.katz_in, be) >= 1 - 64 * kU);
    // Linear-InfSA weights a ~ s_j ~ beta_j: fidelity exactly 1 in this case.
    CHECK(cosine(linear_infsa_weights(Q, K), be) >= 1 - 64 * kU);
}

TEST_CASE("Neumann products by solves agree with the explicit kernel", "[infsa]") {
    for (Eigen::Index n : {31, 32, 33}) {
        Eigen::MatrixXd Q, K;
        draw_family("gaussian", n, 16, 0, 100 + n, Q, K);
        const Affinity A = affinity(Q, K);
        const double g = 0.95;
        const NeumannKernel nk(A.A_hat, g);
        const Eigen::MatrixXd N = nk.kernel(), V = Rng(n).gaussian(n, 4);
        const Eigen::MatrixXd C = N - Eigen::MatrixXd::Identity(n, n);
        CHECK_THAT(nk.closure_times(V), IsClose(C * V, lu_tol(n, g)));
        CHECK_THAT(nk.closure_transpose_times(V), IsClose(C.transpose() * V, lu_tol(n, g)));
        CHECK_THAT(nk.solve_transpose(V), IsClose(N.transpose() * V, lu_tol(n, g)));
        const NeumannInvariants inv = neumann_invariants(nk, A.A_hat, N);
        CHECK(inv.residual <= inv.residual_bound);
        CHECK(inv.min_diag_minus_1 >= -inv.entry_tol);
        CHECK(inv.min_entry >= -inv.entry_tol);
    }
}

TEST_CASE("truncation order reaches its target and the bound holds", "[infsa]") {
    const double g = 0.9, s = 0.8;
    for (double target : {1e-2, 1e-6, 1e-12}) {
        const int K = truncation_order(g, s, target);
        CHECK(truncation_bound(g, s, K) <= target);
        if (K > 0) CHECK(truncation_bound(g, s, K - 1) > target);
    }
    CHECK(truncation_order(0.9, 1.2, 1e-3) == -1);
    CHECK(std::isinf(truncation_bound(0.9, 1.2, 3)));
}

TEST_CASE("absorbing chain: leak can be negative under Frobenius normalisation", "[infsa]") {
    // Shared mean direction: A+ close to rank one with equal rows, ||A||_F ~ N * entry, so each
    // row sum of gamma Â is ~ gamma sqrt(N) * ... > 1 for large enough N: the reading fails.
    Eigen::MatrixXd Q, K;
    draw_family("shared-mean", 64, 16, 3.0, 5, Q, K);
    const Affinity A = affinity(Q, K);
    const NeumannKernel nk(A.A_hat, 0.95);
    const Centralities c = centralities(A.A_hat, nk);
    CHECK(c.min_leak < 0);
    CHECK_FALSE(c.probabilistic);
    // Row-stochastic softmax affinity: leak is exactly 1 - gamma >= 0.
    AffinityOptions so;
    so.kind = AffinityKind::softmax;
    const Affinity S = affinity(Q, K, so);
    const Centralities cs = centralities(S.A_hat, NeumannKernel(S.A_hat, 0.95));
    CHECK(cs.probabilistic);
    CHECK_THAT(Eigen::MatrixXd(cs.expected_steps),
               IsClose(Eigen::VectorXd::Constant(64, 1 / 0.05), lu_tol(64, 0.95)));
}

TEST_CASE("matrix-free CW enclosure matches the dense Perron pair", "[infsa]") {
    for (Eigen::Index n : {31, 64, 65}) {
        Eigen::MatrixXd Q, K;
        draw_family("gaussian", n, 16, 0, 7 + n, Q, K);
        const ReluKernelOp op(Q, K, 16);  // tiles straddle n
        const Interval F = op.frobenius();
        const Affinity A = affinity(Q, K);
        CHECK(F.contains(A.frob_plus));
        const PerronResult mf = perron(op);
        const PerronResult de = perron(A.A_hat);
        // rho(Â) = rho(A+) / (||A+||_F + eps)
        const Interval rho_hat = {mf.rho_enc.lo / (F.hi + 1e-6), mf.rho_enc.hi / (F.lo + 1e-6)};
        CHECK(rho_hat.lo <= de.rho_enc.hi);
        CHECK(de.rho_enc.lo <= rho_hat.hi);
        CHECK(mf.converged);
        // both vectors within their residual/gap error estimates of v (proofs/infsa_fidelity.md)
        const double verr = mf.vec_error + de.vec_error;
        CHECK((mf.vec - de.vec).norm() <= verr);
        const Fidelity fm = fidelity_matrix_free(Q, K, 0.95, 1e-6, true);
        const Fidelity fd = fidelity_dense(Q, K, 0.95);
        CHECK(std::abs(fm.cos_left - fd.cos_left) <= fm.left.vec_error + fd.left.vec_error);
        CHECK(std::abs(fm.cos_right - fd.cos_right) <= fm.right.vec_error + fd.right.vec_error);
    }
}

TEST_CASE("bad inputs give clear errors", "[infsa]") {
    const Eigen::MatrixXd Q = Eigen::MatrixXd::Ones(4, 3), K3 = Eigen::MatrixXd::Ones(3, 3);
    CHECK(test::code_of([&] { affinity(Q, K3); }) == ExitCode::DataError);
    CHECK(test::code_of([&] { affinity(Eigen::MatrixXd(0, 3), Eigen::MatrixXd(0, 3)); }) ==
          ExitCode::DataError);
    Eigen::MatrixXd Qn = Q;
    Qn(1, 1) = NAN;
    CHECK(test::code_of([&] { affinity(Qn, Q); }) == ExitCode::DataError);
    const Affinity A = affinity(Q, Q);
    CHECK(test::code_of([&] { NeumannKernel(A.A_hat, 1.0); }) == ExitCode::DataError);
    CHECK(test::code_of([&] { NeumannKernel(A.A_hat, 0.0); }) == ExitCode::DataError);
    // gamma rho >= 1 with a given (unnormalised) affinity: refused.
    CHECK(test::code_of([&] { NeumannKernel(Eigen::MatrixXd::Constant(3, 3, 1.0), 0.5); }) ==
          ExitCode::DataError);
    CHECK(test::code_of([&] { NeumannKernel(-A.A_hat, 0.5); }) == ExitCode::DataError);
    AffinityOptions small;
    small.max_bytes = 64;
    CHECK(test::code_of([&] { affinity(Q, Q, small); }) == ExitCode::DataError);
    CHECK(test::code_of([&] { draw_family("nope", 4, 2, 0, 1, Qn, Qn); }) == ExitCode::Usage);
}

TEST_CASE("Perron enclosure on a reducible matrix (a zero column)", "[infsa]") {
    // Column 1 is zero: rho(B) = rho of the 2 x 2 block on {0, 2} (block triangular).
    Eigen::MatrixXd B(3, 3);
    B << 0.5, 0, 0.2, 0.1, 0, 0.3, 0.4, 0, 0.1;
    const double tr = 0.6, dt = 0.05 - 0.08;
    const double rho = (tr + std::sqrt(tr * tr - 4 * dt)) / 2;
    for (bool left : {true, false}) {
        PerronOptions o;
        o.left = left;
        const PerronResult p = perron(B, o);
        CHECK(p.rho_enc.contains(rho));
        CHECK(p.rho_enc.hi - p.rho_enc.lo <= 1e-10 * rho);  // the requested width (default)
    }
}
