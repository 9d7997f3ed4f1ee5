// Matrix-free J v / J^T u operators (forward and reverse mode kernels of jacobian_modes.cpp) and
// the Gram matrices J J^T, J_X J_X^T assembled from factors, never forming J.
#include <cblas.h>

#include <cstring>

#include "attnspec/errors.hpp"
#include "attnspec/jacobian.hpp"
#include "jacobian_state.hpp"

namespace attnspec {

using Eigen::Index;
using Eigen::MatrixXd;

// ---- operators ------------------------------------------------------------------------------

JacobianOperator::JacobianOperator(const Head& h) : st_(std::make_unique<AttentionState>(h)) {}
JacobianOperator::~JacobianOperator() = default;
Index JacobianOperator::rows() const { return st_->N * st_->d; }
Index JacobianOperator::cols() const { return 3 * st_->D * st_->d; }

void JacobianOperator::apply(const double* x, double* y) const {
    const Index Dd = st_->D * st_->d;
    const MatrixXd dA = attention_jvp(*st_, nullptr, x, x + Dd, x + 2 * Dd);
    std::memcpy(y, dA.data(), sizeof(double) * static_cast<size_t>(dA.size()));
}

void JacobianOperator::apply_transpose(const double* x, double* y) const {
    const Index Dd = st_->D * st_->d;
    attention_vjp(*st_, x, y, y + Dd, y + 2 * Dd, nullptr);
}

JacobianXOperator::JacobianXOperator(const Head& h) : st_(std::make_unique<AttentionState>(h)) {}
JacobianXOperator::~JacobianXOperator() = default;
Index JacobianXOperator::rows() const { return st_->N * st_->d; }
Index JacobianXOperator::cols() const { return st_->N * st_->D; }

void JacobianXOperator::apply(const double* x, double* y) const {
    const MatrixXd dA = attention_jvp(*st_, x, nullptr, nullptr, nullptr);
    std::memcpy(y, dA.data(), sizeof(double) * static_cast<size_t>(dA.size()));
}

void JacobianXOperator::apply_transpose(const double* x, double* y) const {
    attention_vjp(*st_, x, nullptr, nullptr, nullptr, y);
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

MatrixXd jacobian_gram_outer(const Head& h, double max_bytes) {
    const AttentionState st(h);
    const Index N = st.N, D = st.D, d = st.d, Nd = N * d;
    check_allocation(jacobian_gram_bytes(N, d) + 8.0 * Nd * (d + std::min(N, D) + N), max_bytes,
                     "J J^T (" + std::to_string(Nd) + "x" + std::to_string(Nd) + ")");
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
    for (Index cp = 0; cp < d; ++cp) {
        const Index r0 = cp * N, rows = Nd - r0;
        double* Gb = G.data() + r0 + r0 * Nd;  // block column cp, rows from block cp down
        gemm_nt(rows, N, d, Z.data() + r0, Nd, Z.data() + r0, Nd, Gb, Nd);
        gemm_nt(rows, N, m, Y.data() + r0, Nd, Y.data() + r0, Nd, T.data(), Nd);
        for (Index c = cp; c < d; ++c) {
            auto blk = G.block(c * N, cp * N, N, N);
            blk = XX.cwiseProduct(blk) + QQ.cwiseProduct(T.middleRows((c - cp) * N, N));
            if (c == cp) blk += VV;
        }
    }
    mirror_lower(G);
    return G;
}

}  // namespace attnspec
