// CPU side of the SpecA twin (gpu/src/attention/attention_cuda.cu): the grid of the fused
// row softmax emulated in a loop over threads with the same ATTNSPEC_HD functions
// (attention_logic.hpp), and the whole multi-head forward emulated with them, against the CPU
// reference (row_softmax, multihead_forward). Planted faults (the last tile skipped, the
// correction C dropped) must make the emulation disagree.
#include <Eigen/Dense>
#include <cmath>
#include <vector>

#include "../../../gpu/src/attention/attention_logic.hpp"
#include "attnspec/attention/attention.hpp"
#include "attnspec/attention/corrections.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/gpu/attention/attention_cuda.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "test_support.hpp"

using namespace attnspec;
namespace sl = attnspec::gpu::softmax_logic;

namespace {

// One thread block on one row: each pass gives a partial per thread, the tree combines them
// level by level (a level's writes touch t < stride, its reads t + stride >= stride, so the
// sequential loop equals the parallel step). In place, as the kernel.
template <class T>
void emulate_softmax_row(T* row, long n, int width, bool skip_last_tile) {
    const long tiles = sl::num_tiles(n, width, skip_last_tile);
    std::vector<T> buf(static_cast<size_t>(width));
    for (int t = 0; t < width; ++t) buf[t] = sl::thread_max(row, n, width, t, tiles);
    for (int s = width / 2; s > 0; s /= 2)
        for (int t = 0; t < width; ++t) sl::tree_step_max(buf.data(), s, t);
    const T m = buf[0];
    for (int t = 0; t < width; ++t) buf[t] = sl::thread_sum_exp(row, n, width, t, tiles, m);
    for (int s = width / 2; s > 0; s /= 2)
        for (int t = 0; t < width; ++t) sl::tree_step_sum(buf.data(), s, t);
    const T inv_sum = T(1) / buf[0];
    for (int t = 0; t < width; ++t) sl::normalise(row, row, n, width, t, tiles, m, inv_sum);
}

// The twin's forward with the emulated kernels in scalar T (inputs rounded to T, as the twin
// uploads them): W + C per element, P = 1 b^T + X (W + C), the transposed logits s K_h Q_h^T,
// each column through the emulated softmax, A_h = (L_h^T)^T V_h.
template <class T>
Eigen::MatrixXd emulate_forward(const MultiHead& m, int width, gpu::PlantedFault fault) {
    using M = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
    const long N = m.X.rows(), d = m.heads[0].W_Q.cols(), H = m.H();
    const M X = m.X.cast<T>();
    Eigen::MatrixXd out(N, H * d);
    for (long h = 0; h < H; ++h) {
        const HeadWeights& w = m.heads[static_cast<size_t>(h)];
        auto proj = [&](const Eigen::MatrixXd& W, const Eigen::MatrixXd& C,
                        const Eigen::VectorXd& b) {
            const M Wt = W.cast<T>(), Ct = C.size() ? M(C.cast<T>()) : M(M::Zero(W.rows(), d));
            M We = Wt;
            for (long k = 0; k < W.size(); ++k)
                We.data()[k] = sl::effective_weight(Wt.data()[k], Ct.data()[k],
                                                    fault == gpu::PlantedFault::dropped_term);
            M P = M::Zero(N, d);
            if (b.size()) P.rowwise() += b.cast<T>().transpose();
            P.noalias() += X * We;
            return P;
        };
        const M Q = proj(w.W_Q, w.C_Q, w.b_Q), K = proj(w.W_K, w.C_K, w.b_K);
        const M V = proj(w.W_V, w.C_V, w.b_V);
        M Lt = static_cast<T>(m.s) * (K * Q.transpose());
        for (long i = 0; i < N; ++i)
            emulate_softmax_row(Lt.col(i).data(), N, width,
                                fault == gpu::PlantedFault::off_by_one_tile);
        out.middleCols(h * d, d) = (Lt.transpose() * V).template cast<double>();
    }
    return out;
}

}  // namespace

TEST_CASE("softmax tile logic: emulated grid equals row_softmax across tile boundaries",
          "[softmax_logic]") {
    Rng rng(11);
    for (const int width : {32, 256}) {
        for (const long n : {1L, 31L, 32L, 33L, 255L, 256L, 257L, 1000L}) {
            Mat<double> L(1, n);
            for (long k = 0; k < n; ++k) L(0, k) = 8 * rng.normal();
            const Mat<double> ref = row_softmax<double>(L);
            std::vector<double> row(L.data(), L.data() + n);
            emulate_softmax_row(row.data(), n, width, false);
            // Each entry: exp (1 ulp), a sum of n terms in a different order (gamma_{n-1} each
            // side), one multiply / divide: 2 gamma_{n+3} relative, both evaluations.
            const double tol = 2 * gamma_n(static_cast<double>(n + 3));
            double worst = 0;
            for (long k = 0; k < n; ++k)
                worst = std::max(worst, std::abs(row[k] - ref(0, k)) / ref(0, k));
            INFO("width " << width << " n " << n << " worst relative error " << worst);
            CHECK(worst <= tol);
            // The skipped last tile leaves some entries as raw logits.
            std::vector<double> bad(L.data(), L.data() + n);
            emulate_softmax_row(bad.data(), n, width, true);
            double bad_worst = 0;
            for (long k = 0; k < n; ++k)
                bad_worst = std::max(bad_worst, std::abs(bad[k] - ref(0, k)) / ref(0, k));
            CHECK(!(bad_worst <= tol));
        }
    }
}

TEST_CASE("softmax tile logic in float: emulated grid within the fp32 bound", "[softmax_logic]") {
    Rng rng(12);
    for (const long n : {33L, 257L, 4096L}) {
        std::vector<float> row(static_cast<size_t>(n));
        Mat<double> L(1, n);
        for (long k = 0; k < n; ++k) {
            row[k] = static_cast<float>(6 * rng.normal());
            L(0, k) = row[k];  // the same (float) logits in double
        }
        const Mat<double> ref = row_softmax<double>(L);
        emulate_softmax_row(row.data(), n, 256, false);
        const double u32 = std::numeric_limits<float>::epsilon() / 2;
        // fp32: exp(x - m) with x - m rounded (|x - m| u32 relative, |x - m| <= 2 max|L|), the
        // sum gamma_{n+3}(u32); fp64 reference negligible.
        const double span = 2 * L.cwiseAbs().maxCoeff();
        const double tol = 2 * (gamma_n(static_cast<double>(n + 3), u32) + span * u32);
        double worst = 0;
        for (long k = 0; k < n; ++k)
            worst = std::max(worst, std::abs(row[k] - ref(0, k)) / ref(0, k));
        INFO("n " << n << " worst " << worst << " tolerance " << tol);
        CHECK(worst <= tol);
    }
}

TEST_CASE("tree reduction is exact for the max and fixed-order for the sum", "[softmax_logic]") {
    std::vector<double> buf = {3, -1, 7.5, 2, 7.25, 0, -9, 7.5};
    std::vector<double> copy = buf;
    for (int s = 4; s > 0; s /= 2)
        for (int t = 0; t < 8; ++t) sl::tree_step_max(buf.data(), s, t);
    CHECK(buf[0] == 7.5);
    // Sum: ((b0 + b4) + (b2 + b6)) + ((b1 + b5) + (b3 + b7)), the tree's order.
    for (int s = 4; s > 0; s /= 2)
        for (int t = 0; t < 8; ++t) sl::tree_step_sum(copy.data(), s, t);
    CHECK(copy[0] == ((3.0 + 7.25) + (7.5 + -9.0)) + ((-1.0 + 0.0) + (2.0 + 7.5)));
    CHECK(sl::num_tiles(257, 256, false) == 2);
    CHECK(sl::num_tiles(257, 256, true) == 1);
    CHECK(sl::num_tiles(256, 256, false) == 1);
}

TEST_CASE("SpecA emulated kernels equal multihead_forward, planted faults disagree",
          "[softmax_logic]") {
    struct Case {
        long N, D, d, H;
        bool biases;
    };
    for (const Case c :
         {Case{31, 16, 8, 2, false}, Case{33, 64, 16, 3, true}, Case{257, 32, 8, 2, true}}) {
        const MultiHead m = gpu::spec_attention_instance(c.N, c.D, c.d, c.H, 5 + c.N, c.biases);
        const Eigen::MatrixXd ref = multihead_forward(m);
        // Both evaluations in double: the shared bound at u = fp64.
        const gpu::SpecAttentionTolerance tol = gpu::spec_attention_tolerance(m, kUnitRoundoff);
        INFO("N " << c.N << " D " << c.D << " d " << c.d << " H " << c.H << " tolerance " << tol.abs
                  << " (" << tol.reason << ")");
        const double err =
            (emulate_forward<double>(m, 256, gpu::PlantedFault::none) - ref).cwiseAbs().maxCoeff();
        INFO("error " << err);
        CHECK(err <= tol.abs);
        for (const auto f : {gpu::PlantedFault::dropped_term, gpu::PlantedFault::off_by_one_tile}) {
            const double bad = (emulate_forward<double>(m, 256, f) - ref).cwiseAbs().maxCoeff();
            INFO("fault " << gpu::to_string(f) << " error " << bad);
            CHECK(!(bad <= tol.abs));
        }
    }
}

TEST_CASE("SpecA emulated in float stays within the fp32 tolerance gpu-check uses",
          "[softmax_logic]") {
    const double u32 = std::numeric_limits<float>::epsilon() / 2;
    for (const long N : {33L, 257L}) {
        const MultiHead m = gpu::spec_attention_instance(N, 96, 32, 2, 21 + N, true);
        const Eigen::MatrixXd ref = multihead_forward(m);
        const gpu::SpecAttentionTolerance tol = gpu::spec_attention_tolerance(m, u32);
        const double err =
            (emulate_forward<float>(m, 256, gpu::PlantedFault::none) - ref).cwiseAbs().maxCoeff();
        INFO("N " << N << " error " << err << " tolerance " << tol.abs << " scale " << tol.scale);
        CHECK(err <= tol.abs);
        CHECK(err > 0);  // float really ran
        const double bad = (emulate_forward<float>(m, 256, gpu::PlantedFault::dropped_term) - ref)
                               .cwiseAbs()
                               .maxCoeff();
        CHECK(!(bad <= tol.abs));
    }
}

TEST_CASE("spec_attention tolerance grows with the unit roundoff", "[softmax_logic]") {
    const MultiHead m = gpu::spec_attention_instance(32, 24, 8, 2, 3, true);
    const auto t64 = gpu::spec_attention_tolerance(m, kUnitRoundoff);
    const auto t32 = gpu::spec_attention_tolerance(m, std::numeric_limits<float>::epsilon() / 2);
    CHECK(t64.scale > 0);
    CHECK(t32.scale == t64.scale);
    CHECK(t32.abs > 1e6 * t64.abs / 4);  // u ratio 2^29 on the twin's half
    CHECK(!t32.reason.empty());
}
