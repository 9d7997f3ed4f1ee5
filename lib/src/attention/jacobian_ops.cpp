// Matrix-free J v / J^T u operators (forward and reverse mode kernels of jacobian_modes.cpp) and
// the Gram matrices J J^T, J_X J_X^T assembled from factors, never forming J.
#include <cblas.h>

#include <cstring>

#include "attnspec/attention/jacobian.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/interrupt.hpp"
#include "attnspec/spectral/engine_progress.hpp"
#include "jacobian_state.hpp"

namespace attnspec {

using Eigen::Index;
using Eigen::MatrixXd;

// ---- operators ------------------------------------------------------------------------------

HeadOperator::HeadOperator(const Head& h) : st_(std::make_unique<AttentionState>(h)) {}
HeadOperator::~HeadOperator() = default;
Index HeadOperator::rows() const { return st_->N * st_->d; }

JacobianOperator::JacobianOperator(const Head& h) : HeadOperator(h) {}
Index JacobianOperator::cols() const { return 3 * state().D * state().d; }

void JacobianOperator::apply(const double* x, double* y) const {
    const Index Dd = state().D * state().d;
    const MatrixXd dA = attention_jvp(state(), nullptr, x, x + Dd, x + 2 * Dd);
    std::memcpy(y, dA.data(), sizeof(double) * static_cast<size_t>(dA.size()));
}

void JacobianOperator::apply_transpose(const double* x, double* y) const {
    const Index Dd = state().D * state().d;
    attention_vjp(state(), x, y, y + Dd, y + 2 * Dd, nullptr);
}

JacobianXOperator::JacobianXOperator(const Head& h) : HeadOperator(h) {}
Index JacobianXOperator::cols() const { return state().N * state().D; }

void JacobianXOperator::apply(const double* x, double* y) const {
    const MatrixXd dA = attention_jvp(state(), x, nullptr, nullptr, nullptr);
    std::memcpy(y, dA.data(), sizeof(double) * static_cast<size_t>(dA.size()));
}

void JacobianXOperator::apply_transpose(const double* x, double* y) const {
    attention_vjp(state(), x, nullptr, nullptr, nullptr, y);
}

// ---- multi-head layer ---------------------------------------------------------------------------

template <class HeadOp>
LayerOperator<HeadOp>::LayerOperator(const MultiHead& m) {
    m.validate();
    for (Index h = 0; h < m.H(); ++h) {
        heads_.push_back(std::make_unique<HeadOp>(m.head(h)));
        rows_ += heads_.back()->rows();
    }
}
template class LayerOperator<JacobianOperator>;
template class LayerOperator<JacobianXOperator>;

LayerJacobianOperator::LayerJacobianOperator(const MultiHead& m) : LayerOperator(m) {
    for (const auto& h : heads_) cols_ += h->cols();  // block diagonal
}

void LayerJacobianOperator::apply(const double* x, double* y) const {
    for (const auto& h : heads_) h->apply(x, y), x += h->cols(), y += h->rows();
}

void LayerJacobianOperator::apply_transpose(const double* x, double* y) const {
    for (const auto& h : heads_) h->apply_transpose(x, y), x += h->rows(), y += h->cols();
}

LayerJacobianXOperator::LayerJacobianXOperator(const MultiHead& m) : LayerOperator(m) {
    cols_ = heads_.front()->cols();  // the heads share X
}

void LayerJacobianXOperator::apply(const double* x, double* y) const {
    for (const auto& h : heads_) h->apply(x, y), y += h->rows();
}

void LayerJacobianXOperator::apply_transpose(const double* x, double* y) const {
    Eigen::Map<Eigen::VectorXd> out(y, cols_);
    Eigen::VectorXd tmp(cols_);
    out.setZero();
    for (const auto& h : heads_) h->apply_transpose(x, tmp.data()), out += tmp, x += h->rows();
}

// ---- Gram J J^T -------------------------------------------------------------------------------

namespace {

// C(rows x n, ldc) = A(rows x k, lda) * B(n x k, ldb)^T, column major, OpenBLAS.
void gemm_nt(Index rows, Index n, Index k, const double* A, Index lda, const double* B, Index ldb,
             double* C, Index ldc) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows),
                static_cast<int>(n), static_cast<int>(k), 1.0, A, static_cast<int>(lda), B,
                static_cast<int>(ldb), 0.0, C, static_cast<int>(ldc));
}

// Copy the strictly lower triangle onto the upper one, in cache-sized tiles.
void mirror_lower(MatrixXd& G) {
    const Index n = G.rows(), t = 64;
    for (Index jb = 0; jb < n; jb += t)
        for (Index ib = 0; ib <= jb; ib += t)
            for (Index j = jb; j < std::min(n, jb + t); ++j)
                for (Index i = ib; i < std::min(j, ib + t); ++i) G(i, j) = G(j, i);
}

}  // namespace

MatrixXd jacobian_gram_outer(const Head& h, double max_bytes, const EngineProgressFn& progress) {
    const AttentionState st(h);
    const Index N = st.N, D = st.D, d = st.d, Nd = N * d;
    check_allocation(jacobian_gram_bytes(N, d) + 8.0 * Nd * (d + std::min(N, D) + N), max_bytes,
                     "J J^T (" + std::to_string(Nd) + "x" + std::to_string(Nd) + ")", "max_bytes");
    // Fx Fx^T = X X^T with Fx N x m, m = min(N, D): X itself, or R^T from X^T = Q R.
    MatrixXd Fx;
    if (D <= N) {
        Fx = st.X;
    } else {
        Eigen::HouseholderQR<MatrixXd> qr(st.X.transpose());
        Fx = qr.matrixQR().topRows(N).triangularView<Eigen::Upper>().transpose();
    }
    const Index m = Fx.cols();
    MatrixXd Z(Nd, d), Y(Nd, m);  // rows c N + i: Z_c = P^c K, Y_c = P^c Fx
    for (Index c = 0; c < d; ++c) {
        const MatrixXd Pc = st.P(c);
        Z.middleRows(c * N, N).noalias() = Pc * st.K;
        Y.middleRows(c * N, N).noalias() = Pc * Fx;
    }
    const double s2 = st.s * st.s;
    const MatrixXd XX = s2 * (st.X * st.X.transpose());
    const MatrixXd QQ = s2 * (st.Q * st.Q.transpose());
    const MatrixXd SX = st.S * st.X;
    const MatrixXd VV = SX * SX.transpose();
    MatrixXd G(Nd, Nd);
    MatrixXd T(Nd, N);
    opspec::StageProgress prog(progress, "J J^T", "blocks", d * (d + 1) / 2);
    for (Index cp = 0; cp < d; ++cp) {
        check_interrupt();
        const Index r0 = cp * N, rows = Nd - r0;
        double* Gb = G.data() + r0 + r0 * Nd;  // block column cp, rows from block cp down
        gemm_nt(rows, N, d, Z.data() + r0, Nd, Z.data() + r0, Nd, Gb, Nd);
        gemm_nt(rows, N, m, Y.data() + r0, Nd, Y.data() + r0, Nd, T.data(), Nd);
        for (Index c = cp; c < d; ++c) {
            auto blk = G.block(c * N, cp * N, N, N);
            blk = XX.cwiseProduct(blk) + QQ.cwiseProduct(T.middleRows((c - cp) * N, N));
            if (c == cp) blk += VV;
        }
        prog.update(prog.done() + (d - cp));  // block column cp: its d - cp blocks
    }
    mirror_lower(G);
    prog.finish();
    return G;
}

// ---- Gram J_X J_X^T ----------------------------------------------------------------------------
// Row (i,c) of J_X, as an N x D matrix over (m, a), is the rank-3 sum
//   S_i^T w_c^T + e_i g_ic^T + p_ic r_i^T,
// w_c = W_V[:,c], g_ic = s W_Q Z_c(i,:)^T (Z_c = P^c K), p_ic = P^c(i,:)^T, r_i = s W_K Q(i,:)^T.
// <u v^T, u' v'^T> = (u.u')(v.v'), so each Gram block (c, c') is a sum of nine N x N terms.
MatrixXd jacobian_x_gram_outer(const Head& h, double max_bytes, const EngineProgressFn& progress) {
    const AttentionState st(h);
    const Index N = st.N, d = st.d, Nd = N * d;
    check_allocation(jacobian_gram_bytes(N, d) + 8.0 * (2.0 * Nd * N + 2.0 * Nd * d), max_bytes,
                     "J_X J_X^T (" + std::to_string(Nd) + "x" + std::to_string(Nd) + ")",
                     "max_bytes");
    const double s = st.s, s2 = s * s;
    MatrixXd Pall(Nd, N), SP(Nd, N), Z(Nd, d);  // rows c N + i: P^c, P^c S^T, Z_c
    for (Index c = 0; c < d; ++c) {
        Pall.middleRows(c * N, N) = st.P(c);
        SP.middleRows(c * N, N).noalias() = Pall.middleRows(c * N, N) * st.S.transpose();
        Z.middleRows(c * N, N).noalias() = Pall.middleRows(c * N, N) * st.K;
    }
    const MatrixXd SS = st.S * st.S.transpose();
    const MatrixXd VV = st.W_V.transpose() * st.W_V;                // w_c . w_c'
    const MatrixXd B = s * (st.W_V.transpose() * st.W_Q);           // w_c . g_jc' = (Z_c' B^T)(j,c)
    const MatrixXd E = s * (st.Q * (st.W_K.transpose() * st.W_V));  // w_c . r_j = E(j,c)
    const MatrixXd QQ = s2 * (st.W_Q.transpose() * st.W_Q);         // g.g = Z_c(i,:) QQ Z_c'(i,:)^T
    const MatrixXd F = s2 * (st.W_Q.transpose() * st.W_K);          // g_ic . r_j = (Z_c F Q^T)(i,j)
    const MatrixXd RR = s2 * (st.Q * (st.W_K.transpose() * st.W_K) * st.Q.transpose());
    const MatrixXd ZB = Z * B.transpose();  // rows c N + j
    MatrixXd G(Nd, Nd);
    opspec::StageProgress prog(progress, "J J^T", "blocks", d * (d + 1) / 2);
    for (Index cp = 0; cp < d; ++cp) {
        const Index r0 = cp * N;
        // (p_ic . p_jc') for every c >= c' in one product, straight into block column c'.
        gemm_nt(Nd - r0, N, N, Pall.data() + r0, Nd, Pall.data() + r0, Nd, G.data() + r0 + r0 * Nd,
                Nd);
        const auto Pcp = Pall.middleRows(r0, N);
        const MatrixXd QFZ =
            st.Q * F.transpose() * Z.middleRows(r0, N).transpose();  // (r_i . g_jc')
        for (Index c = cp; c < d; ++c) {
            auto blk = G.block(c * N, r0, N, N);
            const auto Pc = Pall.middleRows(c * N, N);
            const auto Zc = Z.middleRows(c * N, N);
            blk = blk.cwiseProduct(RR);                                              // 3-3
            blk += VV(c, cp) * SS;                                                   // 1-1
            blk += st.S * ZB.middleRows(r0, N).col(c).asDiagonal();                  // 1-2
            blk += ZB.middleRows(c * N, N).col(cp).asDiagonal() * st.S.transpose();  // 2-1
            blk += SP.middleRows(r0, N).transpose() * E.col(c).asDiagonal();  // 1-3: (S P^c'^T)
            blk += E.col(cp).asDiagonal() * SP.middleRows(c * N, N);          // 3-1: (P^c S^T)
            blk += Pcp.transpose().cwiseProduct(Zc * F * st.Q.transpose());   // 2-3
            blk += Pc.cwiseProduct(QFZ);                                      // 3-2
            blk.diagonal() += (Zc * QQ).cwiseProduct(Z.middleRows(r0, N)).rowwise().sum();  // 2-2
        }
        prog.update(prog.done() + (d - cp));
    }
    mirror_lower(G);
    prog.finish();
    return G;
}

}  // namespace attnspec
