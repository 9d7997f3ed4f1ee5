// CPU side of the kappa(J) twin's Gram assembly (gpu/src/attention/jacobian_spectrum_cuda.cu):
// the factor kernel and the tiled block-column combine emulated in loops over tiles and threads
// with the same ATTNSPEC_HD functions (jacobian_spectrum_logic.hpp), the GEMMs by Eigen, against
// the CPU's jacobian_gram_outer. Planted faults (the last tile of each block column skipped, the
// J_V J_V^T term dropped) must make the emulation disagree.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "../../../gpu/src/attention/jacobian_spectrum_logic.hpp"
#include "attnspec/attention/attention.hpp"
#include "attnspec/attention/corrections.hpp"
#include "attnspec/attention/jacobian.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/gpu/attention/attention_cuda.hpp"
#include "attnspec/gpu/attention/jacobian_spectrum_cuda.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "test_support.hpp"

using namespace attnspec;
namespace gl = attnspec::gpu::gram_logic;
using Eigen::MatrixXd;

namespace {

// The twin's assembly (lower block triangle) with the emulated kernels. magnitude: the same
// formulas on absolute values (P from S (|V| + |A|)), the scale of the rounding bound.
MatrixXd emulate_gram(const Head& h, gpu::PlantedFault fault, bool magnitude) {
    const Forward<double> f = attention_forward<double>(h);
    const long N = h.N(), D = h.D(), d = h.d(), n = N * d;
    MatrixXd Fx = h.X;
    if (D > N) {
        Eigen::HouseholderQR<MatrixXd> qr(h.X.transpose());
        Fx = qr.matrixQR().topRows(N).triangularView<Eigen::Upper>().transpose();
    }
    MatrixXd X = h.X, Q = f.Q, K = f.K;
    if (magnitude) X = X.cwiseAbs(), Q = Q.cwiseAbs(), K = K.cwiseAbs(), Fx = Fx.cwiseAbs();
    MatrixXd P(n, N);
    for (long k = 0; k < N; ++k)
        for (long row = 0; row < n; ++row) {
            const long c = row / N, i = row % N;
            P(row, k) = magnitude ? f.S(i, k) * (std::abs(f.V(k, c)) + std::abs(f.A(i, c)))
                                  : gl::p_entry(f.S(i, k), f.V(k, c), f.A(i, c));
        }
    const MatrixXd Z = P * K, Y = P * Fx;
    const double s2 = h.s * h.s;
    const MatrixXd XX = s2 * X * X.transpose(), QQ = s2 * Q * Q.transpose();
    const MatrixXd SX = f.S * X, VV = SX * SX.transpose();
    MatrixXd G = MatrixXd::Zero(n, n);
    for (long cp = 0; cp < d; ++cp) {
        const long r0 = cp * N, rows = n - r0;
        G.block(r0, r0, rows, N) = Z.bottomRows(rows) * Z.middleRows(r0, N).transpose();
        MatrixXd T = MatrixXd::Zero(n, N);
        T.topRows(rows) = Y.bottomRows(rows) * Y.middleRows(r0, N).transpose();
        const long gx = (rows + gl::kTile - 1) / gl::kTile, gy = (N + gl::kTile - 1) / gl::kTile;
        for (long bx = 0; bx < gx; ++bx)
            for (long by = 0; by < gy; ++by) {
                if (!gl::tile_active(bx, by, gx, gy, fault == gpu::PlantedFault::off_by_one_tile))
                    continue;
                for (long tx = 0; tx < gl::kTile; ++tx)
                    for (long ty = 0; ty < gl::kTile; ++ty) {
                        const long r = bx * gl::kTile + tx, j = by * gl::kTile + ty;
                        if (r < rows && j < N)
                            gl::combine_entry(G.data(), n, XX.data(), QQ.data(), VV.data(),
                                              T.data(), n, N, cp, r, j,
                                              fault == gpu::PlantedFault::dropped_term);
                    }
            }
    }
    return G;
}

double lower_max_abs_diff(const MatrixXd& A, const MatrixXd& B) {
    double m = 0;
    for (long j = 0; j < A.cols(); ++j)
        for (long i = j; i < A.rows(); ++i) m = std::max(m, std::abs(A(i, j) - B(i, j)));
    return m;
}

}  // namespace

TEST_CASE("Gram tile logic: emulated assembly equals jacobian_gram_outer, faults disagree",
          "[jacobian_gram_logic]") {
    struct Case {
        long N, D, d;
        bool biases;
    };
    // wide (D > N: the R^T factor), tall (N > 3D), tile straddles (N = 31, 33, 40 > kTile)
    for (const Case c : {Case{5, 7, 3, false}, Case{33, 8, 4, true}, Case{31, 12, 2, false},
                         Case{40, 16, 2, true}}) {
        RandomSpec spec;
        spec.N = c.N, spec.D = c.D, spec.d = c.d, spec.seed = 40 + c.N;
        spec.scale = LogitScale::inv_sqrt_d;
        Head h = random_head(spec);
        apply_correction(h, CorrectionSpec::parse("svd"));
        if (c.biases) {
            Rng rng(3);
            h.b_Q = rng.gaussian(c.d, 1, 0.5), h.b_K = rng.gaussian(c.d, 1, 0.5);
        }
        const MatrixXd ref = jacobian_gram_outer(h);
        const MatrixXd mag = emulate_gram(h, gpu::PlantedFault::none, true);
        // Each entry is a sum of products of dot products of lengths <= N, D, d (S X, X X^T,
        // Q Q^T, P K, P Fx, Z Z^T, Y Y^T; the R^T factor adds a QR's backward error, O(D) u):
        // |error| <= gamma_{2N + 2D + 2d + 8} * magnitude, for each of the two evaluations.
        const double bound =
            2 * gamma_n(static_cast<double>(2 * c.N + 2 * c.D + 2 * c.d + 8)) * mag.maxCoeff();
        const double err = lower_max_abs_diff(emulate_gram(h, gpu::PlantedFault::none, false), ref);
        INFO("N " << c.N << " D " << c.D << " d " << c.d << " error " << err << " bound " << bound);
        CHECK(err <= bound);
        for (const auto f : {gpu::PlantedFault::off_by_one_tile, gpu::PlantedFault::dropped_term}) {
            const double bad = lower_max_abs_diff(emulate_gram(h, f, false), ref);
            INFO("fault " << gpu::to_string(f) << " error " << bad);
            CHECK(!(bad <= bound));
        }
    }
}

TEST_CASE("Gram tile logic: entry and tile rules", "[jacobian_gram_logic]") {
    CHECK(gl::p_entry(0.25, 3.0, 1.0) == 0.5);
    CHECK(gl::gram_entry(2, 3, 5, 7, 11, true, false) == 2 * 3 + 5 * 7 + 11);
    CHECK(gl::gram_entry(2, 3, 5, 7, 11, false, false) == 2 * 3 + 5 * 7);
    CHECK(gl::gram_entry(2, 3, 5, 7, 11, true, true) == 2 * 3 + 5 * 7);
    CHECK(gl::tile_active(1, 2, 2, 3, false));
    CHECK(!gl::tile_active(1, 2, 2, 3, true));
    CHECK(gl::tile_active(0, 2, 2, 3, true));
}

TEST_CASE("attention twins' device memory estimates: ViT-B kappa(J) under 4 GiB",
          "[jacobian_gram_logic]") {
    // The Gram matrix alone is 8 (Nd)^2 bytes; the estimate adds the factors and syevd's space.
    const double n = 197.0 * 64, gram = 8 * n * n;
    const double vit = gpu::jacobian_spectrum_device_bytes(197, 768, 64);
    CHECK(vit > gram);
    CHECK(vit < 1.1 * gram);
    CHECK(vit < 4.0 * 1024 * 1024 * 1024);  // the memory target for this head
    // SpecA at N = 4096, 12 heads x 64, fp32: all 12 heads' logits (805 MB) fit one group.
    const double specA = gpu::spec_attention_device_bytes(4096, 768, 64, 12, 4);
    CHECK(specA > 12.0 * 4096 * 4096 * 4);
    CHECK(specA < 1.2 * 12.0 * 4096 * 4096 * 4);
}
