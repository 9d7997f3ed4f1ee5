// Biases b_Q, b_K, b_V (docs/MATH.md §2, "Biases"): the forward pass adds 1 b^T to Q, K, V; every
// Jacobian route (closed forms, forward mode, operators, Gram matrices, the spectral engine)
// agrees with complex-step and central-difference derivatives of the biased forward pass; b_V
// moves A but no Jacobian, b_K moves nothing, b_Q moves J; dropping the biases (the planted wrong
// implementation) is caught.
// Tolerances: jacobian_tolerances.hpp with n = N + D + d + 1 (the bias is one more term of each
// entry of Q, K, V; proofs/jacobian_routes.md, "Tolerances and why").
#include <cmath>
#include <tuple>

#include "attnspec/attention/jacobian.hpp"
#include "attnspec/attention/jacobian_spectrum.hpp"
#include "attnspec/base/check.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/interval_ops.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/io/h5.hpp"
#include "attnspec/proofs/attention_instances.hpp"
#include "attnspec/proofs/registry.hpp"
#include "attnspec/proofs/thm_3_3.hpp"
#include "attnspec/report/check_records.hpp"
#include "attnspec/spectral/svd.hpp"
#include "jacobian_tolerances.hpp"
#include "test_heads.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::kU;
using attnspec::test::tol_complex_step;
using attnspec::test::tol_fd;
using attnspec::test::tol_routes;
using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

// A random head with biases of the given scale (entries N(0, bias_scale^2)); s = 1/sqrt(d) keeps
// the logits of order one so that the softmax is not saturated (central differences apply).
Head biased_head(Index N, Index D, Index d, std::uint64_t seed, double bias_scale = 1.0,
                 const std::string& corr = "none") {
    Head h = test::random_test_head(N, D, d, seed, corr, LogitScale::inv_sqrt_d);
    Rng rng(seed + 1000);
    h.b_Q = rng.gaussian(d, 1, bias_scale).col(0);
    h.b_K = rng.gaussian(d, 1, bias_scale).col(0);
    h.b_V = rng.gaussian(d, 1, bias_scale).col(0);
    return h;
}

Head without_biases(Head h) {
    h.b_Q.resize(0), h.b_K.resize(0), h.b_V.resize(0);
    return h;
}

// n of the running-error bound for a biased head.
double nsum(const Head& h) { return static_cast<double>(h.N() + h.D() + h.d() + 1); }

bool overlaps(Interval a, Interval b) {
    const Interval c = iv::intersect(a, b);
    return c.lo <= c.hi;
}

const std::tuple<Index, Index, Index> kShapes[] = {{6, 4, 3}, {3, 7, 2}, {5, 5, 1}, {7, 3, 3}};

}  // namespace

TEST_CASE("biases: the forward pass computes Q = X W_Q + 1 b_Q^T and its kin", "[bias]") {
    const Head h = biased_head(5, 4, 3, 1, 1.0, "lambda:2");
    const Forward<double> f = attention_forward<double>(h);
    const MatrixXd ones = MatrixXd::Ones(h.N(), 1);
    // Independent evaluation: weights W + C, then the biases as rank-one terms.
    const MatrixXd Q = h.X * (h.W_Q + h.C_Q) + ones * h.b_Q.transpose();
    const MatrixXd K = h.X * (h.W_K + h.C_K) + ones * h.b_K.transpose();
    const MatrixXd V = h.X * (h.W_V + h.C_V) + ones * h.b_V.transpose();
    const double u = 16 * nsum(h) * kU;
    CHECK((f.Q - Q).norm() <= u * Q.norm());
    CHECK((f.K - K).norm() <= u * K.norm());
    CHECK((f.V - V).norm() <= u * V.norm());
    MatrixXd E = (h.s * Q * K.transpose()).array().exp().matrix();  // logits of order one
    for (Index i = 0; i < E.rows(); ++i) E.row(i) /= E.row(i).sum();
    CHECK((f.A - E * V).norm() <= u * (E * V.cwiseAbs()).norm());
    // The bias-free pass differs (the biases are used, not only stored).
    const Forward<double> f0 = attention_forward<double>(without_biases(h));
    CHECK((f.A - f0.A).norm() > 1e-3 * f.A.norm());
}

TEST_CASE(
    "biases: effective() keeps them, MultiHead::head copies them, multihead_forward uses "
    "them",
    "[bias]") {
    const Head h = biased_head(4, 5, 2, 2, 1.0, "svd");
    const Head e = h.effective();
    CHECK(e.b_Q == h.b_Q);
    CHECK(e.b_K == h.b_K);
    CHECK(e.b_V == h.b_V);
    CHECK(e.biased());
    CHECK_FALSE(without_biases(h).biased());
    MultiHead m;
    m.X = h.X, m.s = h.s;
    m.heads.push_back({h.W_Q, h.W_K, h.W_V, h.C_Q, h.C_K, h.C_V, h.b_Q, h.b_K, h.b_V});
    const Head h2 = biased_head(4, 5, 2, 3);
    m.heads.push_back({h2.W_Q, h2.W_K, h2.W_V, {}, {}, {}, h2.b_Q, h2.b_K, h2.b_V});
    CHECK(m.head(0).b_K == h.b_K);
    CHECK(m.head(1).b_V == h2.b_V);
    const MatrixXd out = multihead_forward(m);
    CHECK(out.leftCols(2) == attention_forward<double>(h).A);
    Head h2x = h2;
    h2x.X = h.X;
    CHECK(out.rightCols(2) == attention_forward<double>(h2x).A);
}

TEST_CASE("biases: validate() refuses a wrong length or NaN, naming the bias", "[bias]") {
    using attnspec::test::error_of;
    Head h = biased_head(4, 3, 2, 4);
    h.b_K = VectorXd::Ones(3);
    Error e = error_of([&] { h.validate("probe"); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(std::string(e.what()) == "probe: b_K has length 3, expected d = 2");
    h.b_K = VectorXd::Ones(2);
    h.b_V(1) = std::nan("");
    e = error_of([&] { h.validate("probe"); });
    CHECK(std::string(e.what()) == "probe: b_V contains NaN or Inf");
    h.b_V.resize(0);  // empty = no bias: valid
    CHECK_NOTHROW(h.validate());
    MultiHead m;
    m.X = h.X;
    m.heads.push_back({h.W_Q, h.W_K, h.W_V, {}, {}, {}, VectorXd::Zero(5), {}, {}});
    e = error_of([&] { m.validate(); });
    CHECK(std::string(e.what()) == "multi-head input, head 0: b_Q has length 5, expected d = 2");
}

TEST_CASE("biases: J_Q, J_K, J_V and J_X match complex step and central differences", "[bias]") {
    for (const auto& [N, D, d] : kShapes)
        for (const char* corr : {"none", "lambda:2"}) {
            const Head h = biased_head(N, D, d, 10 + N, 1.0, corr);
            INFO("N D d = " << N << " " << D << " " << d << ", correction " << corr);
            const double n = nsum(h);
            const MatrixXd J = jacobian_weights(h), M = jacobian_weights_magnitude(h);
            const MatrixXd JX = jacobian_input(h), MX = jacobian_input_magnitude(h);
            const MatrixXd Jcs = jacobian_weights_complex_step(h);
            const MatrixXd JXcs = jacobian_input_complex_step(h);
            // Every block separately (Q, K through the biased K, Q; V unchanged).
            const Index Dd = D * d;
            for (int b = 0; b < 3; ++b) {
                INFO("block "
                     << "QKV"[b]);
                CHECK((J.middleCols(b * Dd, Dd) - Jcs.middleCols(b * Dd, Dd)).norm() <=
                      tol_complex_step(n) * M.middleCols(b * Dd, Dd).norm());
            }
            CHECK((JX - JXcs).norm() <= tol_complex_step(n) * MX.norm());
            CHECK((J - jacobian_weights_central_fd(h)).norm() <= tol_fd() * M.norm());
            CHECK((JX - jacobian_input_central_fd(h)).norm() <= tol_fd() * MX.norm());
            // Route (b), forward mode, on the same biased state.
            CHECK((J - jacobian_weights_forward_mode(h)).norm() <= tol_routes(n) * M.norm());
            CHECK((JX - jacobian_input_forward_mode(h)).norm() <= tol_routes(n) * MX.norm());
        }
}

TEST_CASE("biases: J is the bias-free J of the augmented head [X 1], W stacked over b^T",
          "[bias]") {
    // docs/MATH.md §2: Q = X W_Q + 1 b_Q^T = [X 1] [W_Q; b_Q^T]. The augmented head is bias-free
    // (the paper's code path); its J restricted to the first D rows of each weight is J.
    for (const auto& [N, D, d] : kShapes) {
        const Head h = biased_head(N, D, d, 50 + N, 2.0, "lambda:2");
        const Head e = h.effective();
        Head a;
        a.s = h.s;
        MatrixXd X(N, D + 1);
        X << e.X, MatrixXd::Ones(N, 1);
        a.X = std::move(X);
        for (auto [W, Wb, b] : {std::tuple{&a.W_Q, &e.W_Q, &e.b_Q},
                                {&a.W_K, &e.W_K, &e.b_K},
                                {&a.W_V, &e.W_V, &e.b_V}}) {
            MatrixXd Wa(D + 1, d);
            Wa << *Wb, b->transpose();
            *W = std::move(Wa);
        }
        REQUIRE_FALSE(a.biased());
        const MatrixXd Ja = jacobian_weights(a), Ma = jacobian_weights_magnitude(a);
        MatrixXd Jr(N * d, 3 * D * d);  // columns (block, a + D b) of J <- (block, a + (D+1) b)
        for (Index blk = 0; blk < 3; ++blk)
            for (Index bb = 0; bb < d; ++bb)
                Jr.middleCols(blk * D * d + bb * D, D) =
                    Ja.middleCols(blk * (D + 1) * d + bb * (D + 1), D);
        INFO("N D d = " << N << " " << D << " " << d);
        CHECK((jacobian_weights(h) - Jr).norm() <= tol_routes(nsum(h)) * Ma.norm());
    }
}

TEST_CASE("biases: b_V moves A by 1 b_V^T, b_K moves nothing, neither changes a Jacobian",
          "[bias]") {
    for (const auto& [N, D, d] : kShapes) {
        const Head h = biased_head(N, D, d, 20 + N, 3.0);
        Head hv = h, hk = h, hq = h;
        hv.b_V.resize(0), hk.b_K.resize(0), hq.b_Q.resize(0);
        INFO("N D d = " << N << " " << D << " " << d);
        const double n = nsum(h);
        const Forward<double> f = attention_forward<double>(h);
        // A = S (X W_V + 1 b_V^T) = S X W_V + 1 b_V^T since S 1 = 1: the output moves by 1 b_V^T.
        const MatrixXd dA = f.A - attention_forward<double>(hv).A;
        const MatrixXd shift = MatrixXd::Ones(N, 1) * h.b_V.transpose();
        CHECK(dA.norm() > 0.5 * shift.norm());
        CHECK((dA - shift).norm() <= 16 * n * kU * (shift.norm() + dA.norm()));
        // b_K adds s Q b_K to every logit of row i: softmax is shift invariant, so S and A do not
        // move. What does move is rounding: each logit carries <= gamma_{d+1} Lmag (Lmag = s |Q|
        // (|K| + 1 |b_K|^T)^T), a row of S then moves by <= 2 gamma Lmag in l1, A by that times
        // max |V| per entry, plus the products' own rounding -> tolerance with factor 4.
        const double Lmag = h.s * (f.Q.cwiseAbs() * f.K.cwiseAbs().transpose()).maxCoeff();
        const double gam = (d + 1) * kU;
        const double tol_A = 4 * (2 * gam * Lmag * f.V.cwiseAbs().maxCoeff() *
                                      std::sqrt(static_cast<double>(N * d)) +
                                  n * kU * f.A.norm());
        CHECK((f.A - attention_forward<double>(hk).A).norm() <= tol_A);
        // No Jacobian moves with b_V or b_K (docs/MATH.md §2: dS 1 = 0, P^c 1 = 0). Both sides
        // computed; the routes' bound with S perturbed as above (relative 2 gamma Lmag).
        const MatrixXd M = jacobian_weights_magnitude(h), MX = jacobian_input_magnitude(h);
        const double tJ = tol_routes(n) * (1 + 2 * Lmag) * M.norm();
        const double tJX = tol_routes(n) * (1 + 2 * Lmag) * MX.norm();
        const MatrixXd J = jacobian_weights(h), JX = jacobian_input(h);
        for (const Head* o : {&hv, &hk}) {
            CHECK((J - jacobian_weights(*o)).norm() <= tJ);
            CHECK((JX - jacobian_input(*o)).norm() <= tJX);
        }
        // Planted: the same comparisons catch b_Q (it enters S, J_K and J_X through Q).
        CHECK((f.A - attention_forward<double>(hq).A).norm() > 1e3 * tol_A);
        CHECK((J - jacobian_weights(hq)).norm() > 1e3 * tJ);
        CHECK((JX - jacobian_input(hq)).norm() > 1e3 * tJX);
    }
}

TEST_CASE("biases: operators and Gram matrices agree with dense J and J_X", "[bias]") {
    for (const auto& [N, D, d] : kShapes) {
        const Head h = biased_head(N, D, d, 30 + N, 2.0, "svd");
        INFO("N D d = " << N << " " << D << " " << d);
        const double n = nsum(h);
        const MatrixXd J = jacobian_weights(h), M = jacobian_weights_magnitude(h);
        const MatrixXd JX = jacobian_input(h), MX = jacobian_input_magnitude(h);
        const JacobianOperator op(h);
        const JacobianXOperator opx(h);
        Rng rng(7);
        const VectorXd v = rng.gaussian(op.cols(), 1), u = rng.gaussian(op.rows(), 1);
        const VectorXd vx = rng.gaussian(opx.cols(), 1);
        const double nc = n + static_cast<double>(op.cols()), nr = n + static_cast<double>(N * d);
        const double ncx = n + static_cast<double>(opx.cols());
        CHECK((op * v - J * v).norm() <= tol_routes(nc) * M.norm() * v.norm());
        CHECK((op.transpose_times(u) - J.transpose() * u).norm() <=
              tol_routes(nr) * M.norm() * u.norm());
        CHECK((opx * vx - JX * vx).norm() <= tol_routes(ncx) * MX.norm() * vx.norm());
        CHECK((opx.transpose_times(u) - JX.transpose() * u).norm() <=
              tol_routes(nr) * MX.norm() * u.norm());
        const MatrixXd G = jacobian_gram_outer(h), GX = jacobian_x_gram_outer(h);
        const double tg = tol_routes(n + 3.0 * D * d) * M.squaredNorm();
        const double tgx = tol_routes(n + 1.0 * N * D) * MX.squaredNorm();
        CHECK((G - J * J.transpose()).norm() <= tg);
        CHECK((GX - JX * JX.transpose()).norm() <= tgx);
        // Planted: the Gram matrices of the bias-free head are far outside these tolerances.
        const Head h0 = without_biases(h);
        CHECK((jacobian_gram_outer(h0) - J * J.transpose()).norm() > 1e3 * tg);
        CHECK((jacobian_x_gram_outer(h0) - JX * JX.transpose()).norm() > 1e3 * tgx);
    }
}

TEST_CASE("biases: sigma and kappa of the spectral engine equal a dense SVD of J", "[bias]") {
    // Same target as the bias-free engine test (tests/cpu/spectral/test_operator_spectrum.cpp).
    const Tolerance tol{"kappa_rel_biased_structured_vs_dense", 1e-6,
                        "issue target for the structured path; measured < 1e-12"};
    for (auto [N, D, d] :
         {std::tuple<Index, Index, Index>{8, 6, 4}, {12, 10, 3}, {16, 8, 5}, {24, 12, 2}}) {
        const Head h = biased_head(N, D, d, 40 + N, 3.0);
        const MatrixXd J = jacobian_weights(h);
        const SvdResult ds = svd(J, SvdMethod::gesdd);
        const Kappa dk = kappa(ds, J.rows(), J.cols(), KappaConvention::strict);
        REQUIRE(std::isfinite(dk.value));
        for (LargeSvdMode mode : {LargeSvdMode::full, LargeSvdMode::extremal}) {
            LargeSvdOptions o;
            o.mode = mode;
            const OperatorSpectrum s = jacobian_spectrum(h, o);
            INFO(N << "," << D << "," << d << " " << to_string(mode) << " kappa " << s.strict.value
                   << " dense " << dk.value);
            CHECK(std::fabs(s.strict.value - dk.value) / dk.value <= tol.value);
            CHECK(std::fabs(s.max.sigma - dk.sigma_max) / dk.sigma_max <= tol.value);
            CHECK(std::fabs(s.min.sigma - dk.sigma_min) / dk.sigma_min <= tol.value);
            CHECK(overlaps(s.strict.enclosure, dk.enclosure));
        }
        // Planted wrong implementation (biases ignored): kappa of the bias-free J is off by far
        // more than the tolerance, and its enclosure excludes the biased kappa.
        const MatrixXd J0 = jacobian_weights(without_biases(h));
        const Kappa k0 =
            kappa(svd(J0, SvdMethod::gesdd), J0.rows(), J0.cols(), KappaConvention::strict);
        INFO("kappa with biases " << dk.value << ", biases dropped " << k0.value);
        CHECK(std::fabs(k0.value - dk.value) / dk.value > 1e3 * tol.value);
        CHECK_FALSE(overlaps(k0.enclosure, dk.enclosure));
    }
}

TEST_CASE("biases: a check record stores them with shape (d,) and replays with them", "[bias]") {
    // A head with biases reaches the checks from an input file (verify's embedded heads); its
    // record must replay the same head, biases included.
    const Head h = biased_head(5, 4, 2, 60, 2.0);
    const CheckResult res = proofs::check_thm_3_3(h);
    CHECK(res.verdict == Verdict::holds);
    const std::string path = attnspec::test::temp_dir() + "/bias_record.h5";
    write_instance_file(path, res, Provenance{});
    const H5Reader file(path);
    const std::string group = find_replay_record(file, "thm3.3");
    CHECK(file.shape(group + "/instance/b_Q") == std::vector<hsize_t>{2});
    const Head back = proofs::stored_head(file, group);
    CHECK(back.b_Q == h.b_Q);
    CHECK(back.b_K == h.b_K);
    CHECK(back.b_V == h.b_V);
    CHECK(jacobian_weights(back) == jacobian_weights(h));
    const CheckResult again = proofs::replay_record(*proofs::find_check("thm3.3"), file, group);
    CHECK(again.value("worst_ratio") == res.value("worst_ratio"));
    // Planted: a replay without the biases is a different head (J_Q, J_K move).
    CHECK((jacobian_weights(without_biases(back)) - jacobian_weights(h)).norm() >
          1e-3 * jacobian_weights(h).norm());
}
