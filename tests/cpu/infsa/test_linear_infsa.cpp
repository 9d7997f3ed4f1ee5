// Linear-InfSA: streaming vs literal agree to rounding, degenerate inputs, float32 heads kernel.
#include <cmath>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/infsa/fidelity.hpp"
#include "attnspec/infsa/linear_infsa.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::kU;

namespace {

// Both forms evaluate the same sums in different orders: each sum of N terms is within
// gamma_N of the exact one in absolute terms of the |terms| (Higham 3.1), so
// |p_a - p_b| <= c (N + d) u * kq * ks * ||p||, kq = sum e|q~| / |sum e q~| and ks likewise for
// s v (the conditioning of the two cancelling sums). c = 4: 2 implementations x 2 sweeps ->
// measured worst ratio 0.021 (N = 1) -> 48x headroom.
double agree_tol(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, const Eigen::MatrixXd& V,
                 const LinearInfsaResult& r) {
    const double c = 1 / std::sqrt(double(Q.cols()));
    const Eigen::MatrixXd Qt = Q * c;
    const Eigen::VectorXd e = Qt.rowwise().norm();
    const double kq =
        (Qt.cwiseAbs().transpose() * e).norm() / std::max((Qt.transpose() * e).norm(), 1e-300);
    const Eigen::VectorXd s = ((K * r.q_bar) * c).cwiseMax(0.0);
    const double ks =
        (V.cwiseAbs().transpose() * s).norm() / std::max((V.transpose() * s).norm(), 1e-300);
    const double n = double(Q.rows() + Q.cols());
    return 4 * n * kU * kq * ks;
}

}  // namespace

TEST_CASE("Linear-InfSA: streaming and literal forms agree to rounding", "[linear_infsa]") {
    for (Eigen::Index N : {1, 2, 31, 32, 33, 500})
        for (const char* fam : {"gaussian", "shared-mean", "independent-means"}) {
            Eigen::MatrixXd Q, K;
            draw_family(fam, N, 16, 1.0, 77 + N, Q, K);
            const Eigen::MatrixXd V = Rng(N).gaussian(N, 16);
            const LinearInfsaResult r = linear_infsa(Q, K, V);
            const LinearInfsaLiteral L = linear_infsa_literal(Q, K, V);
            const double tol = agree_tol(Q, K, V, r);
            INFO(fam << " N=" << N);
            const double scale = std::max(r.p.norm(), 1e-300);
            for (Eigen::Index i : {Eigen::Index(0), N - 1})
                CHECK((L.out.row(i).transpose() - r.p).norm() <= tol * scale);
            CHECK((linear_infsa_weights(Q, K) - L.a).norm() <= tol * std::max(L.a.norm(), 1e-300));
        }
}

TEST_CASE("Linear-InfSA: closed form for N = 1", "[linear_infsa]") {
    Eigen::MatrixXd q(1, 4), k(1, 4), v(1, 4);
    q << 1, 0, 0, 0;
    k << 2, 0, 0, 0;
    v << 1, 2, 3, 4;
    // q~ = q/2, e = 1/2, q_bar = (1/4)/(1/2 + eps) e_1, s = q_bar . k~ = (1/4)/(1/2+eps),
    // a = s/(s + eps), p = gamma a v.
    const double eps = 1e-6, s = 0.25 / (0.5 + eps), a = s / (s + eps);
    const LinearInfsaResult r = linear_infsa(q, k, v);
    CHECK((r.p - 0.95 * a * v.row(0).transpose()).norm() <= 8 * kU * r.p.norm());
}

TEST_CASE("Linear-InfSA: degenerate inputs give p = 0", "[linear_infsa]") {
    const Eigen::MatrixXd V = Rng(3).gaussian(8, 4);
    const LinearInfsaResult z = linear_infsa(Eigen::MatrixXd::Zero(8, 4), Rng(4).gaussian(8, 4), V);
    CHECK(z.degenerate);
    CHECK(z.p.isZero(0));
    // every score negative: keys opposite to the common query direction
    Eigen::MatrixXd Q = Eigen::MatrixXd::Ones(8, 4), K = -Eigen::MatrixXd::Ones(8, 4);
    const LinearInfsaResult n = linear_infsa(Q, K, V);
    CHECK(n.degenerate);
    CHECK(n.p.isZero(0));
    CHECK(linear_infsa_weights(Q, K).isZero(0));
    CHECK(linear_infsa_literal(Q, K, V).out.isZero(0));
}

TEST_CASE("Linear-InfSA float32 heads agree with the double reference", "[linear_infsa]") {
    const long H = 3, N = 1000, d = 16;
    std::vector<float> Q(H * N * d), K(Q.size()), V(Q.size()), P(H * d);
    std::vector<Eigen::MatrixXd> Qd, Kd, Vd;
    for (long h = 0; h < H; ++h) {
        Eigen::MatrixXd q, k;
        draw_family("shared-mean", N, d, 1.0, 10 + h, q, k);
        const Eigen::MatrixXd v = Rng(20 + h).gaussian(N, d);
        for (long i = 0; i < N; ++i)
            for (long l = 0; l < d; ++l) {
                const size_t o = size_t(h * N * d + i * d + l);
                Q[o] = float(q(i, l)), K[o] = float(k(i, l)), V[o] = float(v(i, l));
                q(i, l) = Q[o], k(i, l) = K[o];
            }
        Eigen::MatrixXd vv(N, d);
        for (long i = 0; i < N; ++i)
            for (long l = 0; l < d; ++l) vv(i, l) = V[size_t(h * N * d + i * d + l)];
        Qd.push_back(q), Kd.push_back(k), Vd.push_back(vv);
    }
    linear_infsa_heads_f32(Q.data(), K.data(), V.data(), H, N, d, {}, P.data(), 2);
    for (long h = 0; h < H; ++h) {
        const Eigen::VectorXd p = linear_infsa(Qd[h], Kd[h], Vd[h]).p;
        Eigen::VectorXd pf(d);
        for (long l = 0; l < d; ++l) pf[l] = P[size_t(h * d + l)];
        // float sums inside 256-token blocks (same float inputs in both): probabilistic rounding
        // model (Higham & Mary 2019) sqrt(256 + d) u_f per sum, c = 16 for the three chained sums
        // (q_bar, s, s v), conditioning ~1 for shared-mean -> measured worst 0.022 -> 45x.
        const double uf = std::ldexp(1.0, -24);
        CHECK((pf - p).norm() <= 16 * std::sqrt(256.0 + d) * uf * p.norm());
    }
    const LinearInfsaOptions bad{1.5, 1e-6};
    CHECK_THROWS_AS(linear_infsa_heads_f32(Q.data(), K.data(), V.data(), H, N, d, bad, P.data()),
                    Error);
    CHECK_THROWS_AS(linear_infsa(Qd[0], Kd[0], Eigen::MatrixXd(N, d + 1)), Error);
}
