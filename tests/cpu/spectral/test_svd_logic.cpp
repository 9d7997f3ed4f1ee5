// CPU-side logic of the SVD twin (gpu/src/spectral/svd_logic.hpp and _common.cpp): the
// per-element R extraction of the batched QR path emulated over its grid, the batch count with
// the planted off-by-one, the row the planted dropped term zeroes, the batched path choice, and
// the svd_with hook the twin runs through.
#include <Eigen/QR>
#include <Eigen/SVD>
#include <cmath>
#include <utility>
#include <vector>

#include "../../../gpu/src/spectral/svd_logic.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/gpu/spectral/svd_cuda.hpp"
#include "attnspec/spectral/svd.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::error_of;
using attnspec::test::kU;

namespace {

// The device grid of extract_r, as a CPU loop over every thread index.
std::vector<double> extract_all(const std::vector<double>& qr, long m, long n, long batch) {
    std::vector<double> R(static_cast<std::size_t>(batch * n * n), -1.0);
    for (long t = 0; t < batch * n * n; ++t)
        gpu::svd_logic::extract_r(qr.data(), R.data(), m, n, t);
    return R;
}

// `batch` Householder QR outputs (LAPACK layout: R on and above the diagonal, reflectors below).
std::vector<double> qr_outputs(const std::vector<Eigen::MatrixXd>& Ms) {
    std::vector<double> out;
    for (const auto& M : Ms) {
        const Eigen::MatrixXd f = Eigen::HouseholderQR<Eigen::MatrixXd>(M).matrixQR();
        out.insert(out.end(), f.data(), f.data() + f.size());
    }
    return out;
}

}  // namespace

TEST_CASE("svd_cusolver logic: extract_r gives each matrix's R and sigma(R) = sigma(M)",
          "[svd_cusolver][gpu_logic]") {
    const long m = 384, n = 32, batch = 3;
    std::vector<Eigen::MatrixXd> Ms;
    for (long b = 0; b < batch; ++b)
        Ms.push_back(Rng(100 + static_cast<std::uint64_t>(b))
                         .with_spectrum(m, n, geometric_spectrum(n, 1.0, 1e6)));
    const std::vector<double> qr = qr_outputs(Ms);
    const std::vector<double> R = extract_all(qr, m, n, batch);
    for (long b = 0; b < batch; ++b) {
        const Eigen::Map<const Eigen::MatrixXd> Rb(R.data() + b * n * n, n, n);
        const Eigen::Map<const Eigen::MatrixXd> QRb(qr.data() + b * m * n, m, n);
        const Eigen::MatrixXd upper = QRb.topRows(n).triangularView<Eigen::Upper>();
        CHECK(Rb == upper);  // exact: a copy and zeros
        const Eigen::VectorXd sr = Eigen::JacobiSVD<Eigen::MatrixXd>(Rb).singularValues();
        const Eigen::VectorXd sm = geometric_spectrum(n, 1.0, 1e6);
        // Householder QR and Jacobi SVD both backward stable: Weyl with c sqrt(n) u sigma_max,
        // c = 4 m (the QR's column-length constant, Higham Thm 19.4) -> about 2e-11 here;
        // measured about 1e-15.
        const double tol = 4.0 * m * std::sqrt(double(n)) * kU;
        CHECK((sr - sm).cwiseAbs().maxCoeff() <= tol);
    }
}

TEST_CASE("svd_cusolver logic: the planted off-by-one leaves the last R zero, and is seen",
          "[svd_cusolver][gpu_logic]") {
    const long m = 40, n = 5, batch = 4;
    std::vector<Eigen::MatrixXd> Ms;
    for (long b = 0; b < batch; ++b) Ms.push_back(Rng(7 + std::uint64_t(b)).gaussian(m, n));
    const std::vector<double> qr = qr_outputs(Ms);
    CHECK(gpu::svd_logic::batch_processed(batch, false) == batch);
    const long done = gpu::svd_logic::batch_processed(batch, true);
    REQUIRE(done == batch - 1);
    std::vector<double> R(static_cast<std::size_t>(batch * n * n), 0.0);  // zeroed, as on device
    for (long t = 0; t < done * n * n; ++t) gpu::svd_logic::extract_r(qr.data(), R.data(), m, n, t);
    const Eigen::Map<const Eigen::MatrixXd> last(R.data() + (batch - 1) * n * n, n, n);
    const Eigen::Map<const Eigen::MatrixXd> first(R.data(), n, n);
    CHECK(last.norm() == 0);
    CHECK(first.norm() > 0);
    CHECK(gpu::svd_logic::batch_processed(0, true) == 0);
}

TEST_CASE("svd_cusolver logic: the planted dropped term zeroes the last row, and is seen",
          "[svd_cusolver][gpu_logic]") {
    CHECK(gpu::svd_logic::dropped_row(31, false) == -1);
    CHECK(gpu::svd_logic::dropped_row(31, true) == 30);
    CHECK(gpu::svd_logic::dropped_row(0, true) == -1);
    // two packed 4 x 3 matrices: only row 3 of each is zeroed
    std::vector<double> M(24, 1.0);
    gpu::svd_logic::drop_row(M.data(), 4, 3, 2, 3);
    for (long t = 0; t < 24; ++t) CHECK(M[std::size_t(t)] == (t % 4 == 3 ? 0.0 : 1.0));
    // gpu-check's single cases (square, tall and wide): the faulted sigma misses the check's
    // Weyl tolerance 2 x 32 sqrt(r) u (relative to sigma_max) by orders of magnitude
    for (const auto& [m, n] : {std::pair{31L, 31L}, std::pair{64L, 31L}, std::pair{31L, 64L}}) {
        const Eigen::MatrixXd A = Rng(11).gaussian(m, n);
        Eigen::MatrixXd B = A;
        gpu::svd_logic::drop_row(B.data(), m, n, 1, gpu::svd_logic::dropped_row(m, true));
        const Eigen::VectorXd sa = Eigen::JacobiSVD<Eigen::MatrixXd>(A).singularValues();
        const Eigen::VectorXd sb = Eigen::JacobiSVD<Eigen::MatrixXd>(B).singularValues();
        const double tol = 2 * 32 * std::sqrt(double(std::min(m, n))) * kU;
        INFO(m << "x" << n << ": " << (sa - sb).cwiseAbs().maxCoeff() / sa[0] << " vs " << tol);
        CHECK((sa - sb).cwiseAbs().maxCoeff() / sa[0] > 1e6 * tol);
    }
}

TEST_CASE("svd_cusolver logic: batched path by shape and vectors", "[svd_cusolver][gpu_logic]") {
    using gpu::BatchedSvdPath;
    CHECK(gpu::batched_svd_path(32, 32, false) == BatchedSvdPath::gesvdj_batched);
    CHECK(gpu::batched_svd_path(31, 32, true) == BatchedSvdPath::gesvdj_batched);
    CHECK(gpu::batched_svd_path(33, 33, true) == BatchedSvdPath::loop);
    CHECK(gpu::batched_svd_path(384, 32, true) == BatchedSvdPath::qr_gesvdj_batched);
    CHECK(gpu::batched_svd_path(32, 384, true) == BatchedSvdPath::qr_gesvdj_batched);
    CHECK(gpu::batched_svd_path(384, 32, false) == BatchedSvdPath::loop);
    CHECK(gpu::batched_svd_path(384, 33, true) == BatchedSvdPath::loop);
    CHECK(gpu::batched_svd_path(0, 5, true) == BatchedSvdPath::loop);
    CHECK(std::string(gpu::to_string(BatchedSvdPath::qr_gesvdj_batched)) ==
          "geqrfBatched + gesvdjBatched");
}

TEST_CASE("svd_with: a backend's error is covered by the CPU enclosure, a bad backend is a bug",
          "[svd_cusolver][gpu_logic]") {
    const long m = 20, n = 12;
    const Eigen::MatrixXd M = Rng(5).with_spectrum(m, n, geometric_spectrum(n, 2.0, 1e3));
    SvdOptions o;
    const SvdResult c = svd(M, o);  // rigorous: the exact sigma_i(M) lies in [c.lo, c.hi]
    const auto jacobi = [](const Eigen::MatrixXd& A, SvdResult& out, double planted) {
        Eigen::JacobiSVD<Eigen::MatrixXd> j(A, Eigen::ComputeThinU | Eigen::ComputeThinV);
        out.sigma = j.singularValues();
        out.sigma[0] += planted;
        out.U = j.matrixU();
        out.V = j.matrixV();
        out.method = planted != 0 ? "planted" : "eigen-jacobi";
    };
    // A backend whose sigma_1 is off by 1e-6 (a planted error far above rounding). Weyl alone
    // (no refinement): the residual ||M - U S V^T|| grows by it, so the enclosure still holds
    // the exact value: it must meet the clean one at every index.
    SvdOptions weyl_only = o;
    weyl_only.refine = false;
    const SvdResult s = svd_with(
        M, weyl_only,
        [&](const Eigen::Ref<const Eigen::MatrixXd>& A, SvdResult& out) { jacobi(A, out, 1e-6); });
    CHECK(s.method == "planted");
    CHECK(s.residual >= 0.9e-6);
    CHECK(s.sigma[0] > c.hi[0]);  // the planted value itself is outside the clean enclosure
    for (long i = 0; i < n; ++i) {
        CHECK(s.lo[i] <= c.hi[i]);
        CHECK(c.lo[i] <= s.hi[i]);
    }
    // With refinement the Rayleigh quotient of (u, v) replaces the planted value.
    const SvdResult r = svd_with(
        M, o,
        [&](const Eigen::Ref<const Eigen::MatrixXd>& A, SvdResult& out) { jacobi(A, out, 1e-6); });
    CHECK(r.sigma[0] >= c.lo[0]);
    CHECK(r.sigma[0] <= c.hi[0]);
    // Same backend, exact: svd()'s own result, enclosure included.
    const SvdResult t = svd_with(
        M, o,
        [&](const Eigen::Ref<const Eigen::MatrixXd>& A, SvdResult& out) { jacobi(A, out, 0); });
    CHECK(t.sigma == c.sigma);
    CHECK(t.hi == c.hi);
    CHECK(t.lo == c.lo);
    const Error e = error_of([&] {
        svd_with(M, o, [](const Eigen::Ref<const Eigen::MatrixXd>&, SvdResult& out) {
            out.sigma.resize(3);
        });
    });
    CHECK(e.code() == ExitCode::Internal);
}

TEST_CASE("svd_with: the backend is handed M itself, or M scaled by a power of two",
          "[svd_cusolver][gpu_logic]") {
    SvdOptions o;
    o.values_only = true;
    const Eigen::MatrixXd M = Rng(9).gaussian(6, 4);
    const double* seen = nullptr;
    svd_with(M, o, [&](const Eigen::Ref<const Eigen::MatrixXd>& A, SvdResult& out) {
        seen = A.data();
        out.sigma = Eigen::JacobiSVD<Eigen::MatrixXd>(A).singularValues();
    });
    CHECK(seen == M.data());  // no copy: svd_batched relies on this to use its batched result
    const Eigen::MatrixXd big = M * std::ldexp(1.0, 600);
    double amax = 0;
    const SvdResult s =
        svd_with(big, o, [&](const Eigen::Ref<const Eigen::MatrixXd>& A, SvdResult& out) {
            seen = A.data();
            amax = A.cwiseAbs().maxCoeff();
            out.sigma = Eigen::JacobiSVD<Eigen::MatrixXd>(A).singularValues();
        });
    CHECK(seen != big.data());
    CHECK(amax >= 1.0);
    CHECK(amax < 2.0);
    const Eigen::VectorXd ref = Eigen::JacobiSVD<Eigen::MatrixXd>(M).singularValues();
    CHECK((s.sigma / std::ldexp(1.0, 600) - ref).cwiseAbs().maxCoeff() <= 8 * kU * ref[0]);
}

TEST_CASE(
    "svd_cusolver logic: wide matrices are packed transposed and their factors swapped "
    "back",
    "[svd_cusolver][gpu_logic]") {
    for (auto [m, n] : std::vector<std::pair<long, long>>{{7, 4}, {4, 7}, {5, 5}}) {
        const std::vector<Eigen::MatrixXd> Ms{Rng(21).gaussian(m, n), Rng(22).gaussian(m, n)};
        const std::vector<double> host = gpu::pack_tall(Ms);
        const long p = std::max(m, n), q = std::min(m, n);
        REQUIRE(host.size() == 2u * std::size_t(p * q));
        for (std::size_t b = 0; b < 2; ++b) {
            const Eigen::Map<const Eigen::MatrixXd> packed(host.data() + b * p * q, p, q);
            CHECK(packed == (m < n ? Eigen::MatrixXd(Ms[b].transpose()) : Ms[b]));
            // What gesvdjBatched returns for the packed matrix: full U (p x p), V (q x q).
            Eigen::JacobiSVD<Eigen::MatrixXd> j(packed, Eigen::ComputeFullU | Eigen::ComputeFullV);
            const Eigen::MatrixXd& Uf = j.matrixU();
            const Eigen::MatrixXd& Vf = j.matrixV();
            Eigen::MatrixXd U, V;
            gpu::thin_factors(Uf.data(), Vf.data(), p, q, m < n, U, V);
            REQUIRE(U.rows() == m);
            REQUIRE(V.rows() == n);
            REQUIRE(U.cols() == q);
            REQUIRE(V.cols() == q);
            // M = U S V^T to rounding: Jacobi SVD backward error, c q u ||M||_F with c = 16
            // (assumed, about 1e-14 here); a swap left undone fails by O(||M||).
            const Eigen::MatrixXd R = U * j.singularValues().asDiagonal() * V.transpose();
            CHECK((Ms[b] - R).norm() <= 16.0 * q * kU * Ms[b].norm());
        }
    }
    const Error e = error_of([] {
        gpu::pack_tall({Eigen::MatrixXd::Zero(3, 2), Eigen::MatrixXd::Zero(2, 3)});
    });
    CHECK(e.code() == ExitCode::DataError);
}
