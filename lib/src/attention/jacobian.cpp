// Route (a): the Thm 3.3 closed forms, structured. With P^c = rows of (W_V^T X^T (x) I_N) Lambda,
// P^c_ik = S_ik (V_kc - A_ic) (Lambda applied one softmax row at a time):
//   J_Q[(i,c),(a,b)] = s X_ia (P^c K)_ib      row (i,c) = vec of the outer product X_i^T g_ic
//   J_K[(i,c),(a,b)] = s Q_ib (P^c X)_ia      (the T_{D,d} swaps the roles of a and b)
//   J_V[(i,c),(a,b)] = delta_bc (S X)_ia      (I_d (x) S X)
//   J_X[(i,c),(m,a)] = S_im W_V[a,c] + s P^c_im (Q W_K^T)_ia + delta_im s (P^c K W_Q^T)_ia
// Rows are i + N c and columns a + D b (or m + N a): column-major vec. Derivation in
// proofs/jacobian_routes.md. Also: multi-head assembly.
#include "attnspec/attention/jacobian.hpp"

#include <algorithm>
#include <functional>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/spectral/engine_progress.hpp"
#include "jacobian_state.hpp"

namespace attnspec {

using Eigen::Index;
using Eigen::MatrixXd;
using Eigen::VectorXd;
using VMap = Eigen::Map<VectorXd>;

double jacobian_weights_bytes(Index N, Index D, Index d) {
    return 8.0 * static_cast<double>(N) * d * 3.0 * static_cast<double>(D) * d;
}
double jacobian_input_bytes(Index N, Index D, Index d) {
    return 8.0 * static_cast<double>(N) * d * static_cast<double>(N) * D;
}
double jacobian_gram_bytes(Index N, Index d) {
    return 8.0 * static_cast<double>(N) * d * static_cast<double>(N) * d;
}

namespace {

// Writes block b of J into columns starting at `out` (leading dimension Nd); one progress unit
// per column group bb (when given).
void fill_weight_block(const AttentionState& st, WeightBlock b, double* out,
                       opspec::StageProgress* prog = nullptr) {
    const Index N = st.N, D = st.D, d = st.d, Nd = N * d;
    std::vector<MatrixXd> F(static_cast<size_t>(d));  // Z_c = P^c K or Y_c = P^c X
    MatrixXd SX;
    if (b == WeightBlock::V) {
        SX.noalias() = st.S * st.X;
    } else {
        for (Index c = 0; c < d; ++c)
            F[c].noalias() = st.P(c) * (b == WeightBlock::Q ? st.K : st.X);
    }
    for (Index bb = 0; bb < d; ++bb)
        for (Index a = 0; a < D; ++a) {
            double* col = out + (a + D * bb) * Nd;
            for (Index c = 0; c < d; ++c) {
                VMap seg(col + c * N, N);
                switch (b) {
                    case WeightBlock::Q:
                        seg = st.s * st.X.col(a).cwiseProduct(F[c].col(bb));
                        break;
                    case WeightBlock::K:
                        seg = st.s * st.Q.col(bb).cwiseProduct(F[c].col(a));
                        break;
                    case WeightBlock::V:
                        if (c == bb)
                            seg = SX.col(a);
                        else
                            seg.setZero();
                        break;
                }
            }
            if (prog && a + 1 == D) prog->update(prog->done() + 1);
        }
}

}  // namespace

MatrixXd jacobian_weights(const Head& h, double max_bytes, const EngineProgressFn& progress) {
    const AttentionState st(h);
    const Index Dd = st.D * st.d, Nd = st.N * st.d;
    refuse_dense(Nd, 3 * Dd, max_bytes, "dense J");
    MatrixXd J(Nd, 3 * Dd);
    opspec::StageProgress prog(progress, "forming", "column groups", 3 * st.d);
    for (int b = 0; b < 3; ++b)
        fill_weight_block(st, static_cast<WeightBlock>(b), J.data() + b * Dd * Nd, &prog);
    prog.finish();
    return J;
}

MatrixXd jacobian_weights_magnitude(const Head& h, double max_bytes) {
    const AttentionState st(h, /*magnitude=*/true);
    const Index Dd = st.D * st.d, Nd = st.N * st.d;
    refuse_dense(Nd, 3 * Dd, max_bytes, "dense |J| scale");
    MatrixXd J(Nd, 3 * Dd);
    for (int b = 0; b < 3; ++b)
        fill_weight_block(st, static_cast<WeightBlock>(b), J.data() + b * Dd * Nd);
    return J;
}

MatrixXd jacobian_weights_block(const Head& h, WeightBlock b, double max_bytes) {
    const AttentionState st(h);
    refuse_dense(st.N * st.d, st.D * st.d, max_bytes, "dense J block");
    MatrixXd J(st.N * st.d, st.D * st.d);
    fill_weight_block(st, b, J.data());
    return J;
}

namespace {
MatrixXd input_jacobian(const AttentionState& st, double max_bytes,
                        const EngineProgressFn& progress = {}) {
    const Index N = st.N, D = st.D, d = st.d, Nd = N * d;
    refuse_dense(Nd, N * D, max_bytes, "dense J_X");
    std::vector<MatrixXd> P(static_cast<size_t>(d)), ZW(static_cast<size_t>(d));
    for (Index c = 0; c < d; ++c) {
        P[c] = st.P(c);
        ZW[c].noalias() = (P[c] * st.K) * st.W_Q.transpose();  // (P^c K W_Q^T), N x D
        ZW[c] *= st.s;
    }
    MatrixXd R(N, D);
    R.noalias() = st.s * (st.Q * st.W_K.transpose());
    MatrixXd J(Nd, N * D);
    opspec::StageProgress prog(progress, "forming", "column groups", D);
    for (Index a = 0; a < D; ++a, prog.update(a))
        for (Index m = 0; m < N; ++m) {
            double* col = J.data() + (m + N * a) * Nd;
            for (Index c = 0; c < d; ++c) {
                VMap seg(col + c * N, N);
                seg = st.W_V(a, c) * st.S.col(m) + P[c].col(m).cwiseProduct(R.col(a));
                seg[m] += ZW[c](m, a);
            }
        }
    prog.finish();
    return J;
}
}  // namespace

MatrixXd jacobian_input(const Head& h, double max_bytes, const EngineProgressFn& progress) {
    return input_jacobian(AttentionState(h), max_bytes, progress);
}
MatrixXd jacobian_input_magnitude(const Head& h, double max_bytes) {
    return input_jacobian(AttentionState(h, /*magnitude=*/true), max_bytes);
}

MatrixXd jacobian_weights(const MultiHead& m, double max_bytes) {
    m.validate();
    const Index N = m.X.rows(), D = m.X.cols(), d = m.heads[0].W_Q.cols(), H = m.H();
    refuse_dense(N * d * H, 3 * D * d * H, max_bytes, "dense multi-head J");
    MatrixXd J = MatrixXd::Zero(N * d * H, 3 * D * d * H);
    for (Index h = 0; h < H; ++h)
        J.block(h * N * d, h * 3 * D * d, N * d, 3 * D * d) =
            jacobian_weights(m.head(h), max_bytes);
    return J;
}

MatrixXd jacobian_input(const MultiHead& m, double max_bytes) {
    m.validate();
    const Index N = m.X.rows(), D = m.X.cols(), d = m.heads[0].W_Q.cols(), H = m.H();
    refuse_dense(N * d * H, N * D, max_bytes, "dense multi-head J_X");
    MatrixXd J(N * d * H, N * D);
    for (Index h = 0; h < H; ++h)
        J.middleRows(h * N * d, N * d) = jacobian_input(m.head(h), max_bytes);
    return J;
}

}  // namespace attnspec
