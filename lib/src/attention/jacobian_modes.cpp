// Route (b) and the witnesses: forward-mode (JVP) and reverse-mode (VJP) kernels derived from
// differentials, dense Jacobians assembled one JVP column at a time, complex-step and central
// differences. See proofs/jacobian_routes.md.
#include <cmath>
#include <complex>
#include <limits>

#include "attnspec/attention/jacobian.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/interrupt.hpp"
#include "attnspec/base/rounding.hpp"
#include "jacobian_state.hpp"

namespace attnspec {

using Eigen::Index;
using Eigen::MatrixXd;
using CMap = Eigen::Map<const MatrixXd>;

void refuse_dense(Index rows, Index cols, double max_bytes, const std::string& what) {
    check_allocation(8.0 * static_cast<double>(rows) * static_cast<double>(cols), max_bytes,
                     what + " (" + std::to_string(rows) + "x" + std::to_string(cols) + ")",
                     "max_bytes");
}

AttentionState::AttentionState(const Head& h, bool mag) : magnitude(mag) {
    h.validate();
    const Head e = h.effective();
    X = e.X, W_Q = e.W_Q, W_K = e.W_K, W_V = e.W_V, s = e.s;
    N = X.rows(), D = X.cols(), d = W_Q.cols();
    // Forward state + one kernel's workspace: L, S, dL/Lbar (N x N), Q, K, V, A, and one N x D.
    check_allocation(8.0 * (3.0 * N * N + static_cast<double>(N) * (2 * D + 6 * d)),
                     kDefaultJacobianMaxBytes, "attention state for N = " + std::to_string(N));
    // Biases enter only through Q, K, V: every kernel below reads Q and K (and V - A, which b_V
    // leaves unchanged since rows of S sum to 1), never the biases themselves (docs/MATH.md §2).
    const Forward<double> f = attention_forward<double>(X, W_Q, W_K, W_V, s, e.b_Q, e.b_K, e.b_V);
    if (!f.L.allFinite())
        fail_data("attention logits overflow (|s Q K^T| beyond the double range)");
    Q = f.Q, K = f.K, V = f.V, S = f.S, A = f.A;
    if (magnitude) {
        X = X.cwiseAbs(), W_Q = W_Q.cwiseAbs(), W_K = W_K.cwiseAbs(), W_V = W_V.cwiseAbs();
        // |X| |W| + 1 |b|^T: the bias is one more term of each entry's sum.
        const auto abs_proj = [&](MatrixXd& P, const MatrixXd& W, const Eigen::VectorXd& b) {
            P.noalias() = X * W;
            if (b.size()) P.rowwise() += b.cwiseAbs().transpose();
        };
        abs_proj(Q, W_Q, e.b_Q), abs_proj(K, W_K, e.b_K), abs_proj(V, W_V, e.b_V);
        A.noalias() = S * V;
    }
}

MatrixXd AttentionState::P(Index c) const {
    // P^c_ik = S_ik (V_kc - A_ic)
    MatrixXd Pc = S;
    Pc.array().rowwise() *= V.col(c).transpose().array();
    if (magnitude)
        Pc += A.col(c).asDiagonal() * S;
    else
        Pc -= A.col(c).asDiagonal() * S;
    return Pc;
}

MatrixXd attention_jvp(const AttentionState& st, const double* dX, const double* dW_Q,
                       const double* dW_K, const double* dW_V) {
    check_interrupt();  // a check point of every matrix-free product (base/interrupt.hpp)
    const Index N = st.N, D = st.D, d = st.d;
    MatrixXd dQ = MatrixXd::Zero(N, d), dK = MatrixXd::Zero(N, d), dV = MatrixXd::Zero(N, d);
    if (dX) {
        CMap dXm(dX, N, D);
        dQ.noalias() += dXm * st.W_Q;
        dK.noalias() += dXm * st.W_K;
        dV.noalias() += dXm * st.W_V;
    }
    if (dW_Q) dQ.noalias() += st.X * CMap(dW_Q, D, d);
    if (dW_K) dK.noalias() += st.X * CMap(dW_K, D, d);
    if (dW_V) dV.noalias() += st.X * CMap(dW_V, D, d);
    // dL = s (dQ K^T + Q dK^T); dS = S o (dL - rowsum(S o dL) 1^T); dA = dS V + S dV.
    MatrixXd dL(N, N);
    dL.noalias() = dQ * st.K.transpose();
    dL.noalias() += st.Q * dK.transpose();
    dL *= st.s;
    MatrixXd dS = st.S.cwiseProduct(dL);
    const Eigen::VectorXd r = dS.rowwise().sum();
    dS -= r.asDiagonal() * st.S;
    MatrixXd dA(N, d);
    dA.noalias() = dS * st.V;
    dA.noalias() += st.S * dV;
    return dA;
}

void attention_vjp(const AttentionState& st, const double* Abar, double* WQbar, double* WKbar,
                   double* WVbar, double* Xbar) {
    check_interrupt();
    const Index N = st.N, D = st.D, d = st.d;
    CMap U(Abar, N, d);
    // Sbar = U V^T, Vbar = S^T U, Lbar = S o (Sbar - rowsum(S o Sbar) 1^T) (Lambda symmetric),
    // Qbar = s Lbar K, Kbar = s Lbar^T Q; W_*bar = X^T *bar; Xbar = sum *bar W_*^T.
    MatrixXd Lbar(N, N);
    Lbar.noalias() = U * st.V.transpose();
    Lbar = st.S.cwiseProduct(Lbar);
    const Eigen::VectorXd r = Lbar.rowwise().sum();
    Lbar -= r.asDiagonal() * st.S;
    MatrixXd Qbar(N, d), Kbar(N, d), Vbar(N, d);
    Qbar.noalias() = st.s * (Lbar * st.K);
    Kbar.noalias() = st.s * (Lbar.transpose() * st.Q);
    Vbar.noalias() = st.S.transpose() * U;
    using Map = Eigen::Map<MatrixXd>;
    if (WQbar) Map(WQbar, D, d).noalias() = st.X.transpose() * Qbar;
    if (WKbar) Map(WKbar, D, d).noalias() = st.X.transpose() * Kbar;
    if (WVbar) Map(WVbar, D, d).noalias() = st.X.transpose() * Vbar;
    if (Xbar) {
        Map Xb(Xbar, N, D);
        Xb.noalias() = Qbar * st.W_Q.transpose();
        Xb.noalias() += Kbar * st.W_K.transpose();
        Xb.noalias() += Vbar * st.W_V.transpose();
    }
}

MatrixXd jvp_weights(const Head& h, const MatrixXd& dW_Q, const MatrixXd& dW_K,
                     const MatrixXd& dW_V) {
    const AttentionState st(h);
    for (const MatrixXd* m : {&dW_Q, &dW_K, &dW_V})
        if (m->rows() != st.D || m->cols() != st.d)
            fail_data("jvp_weights: a direction is " + std::to_string(m->rows()) + "x" +
                      std::to_string(m->cols()) + ", expected D x d");
    return attention_jvp(st, nullptr, dW_Q.data(), dW_K.data(), dW_V.data());
}

MatrixXd jvp_input(const Head& h, const MatrixXd& dX) {
    const AttentionState st(h);
    if (dX.rows() != st.N || dX.cols() != st.D) fail_data("jvp_input: dX must be N x D");
    return attention_jvp(st, dX.data(), nullptr, nullptr, nullptr);
}

MatrixXd jacobian_weights_forward_mode(const Head& h, double max_bytes) {
    const AttentionState st(h);
    const Index Dd = st.D * st.d;
    refuse_dense(st.N * st.d, 3 * Dd, max_bytes, "dense J");
    MatrixXd J(st.N * st.d, 3 * Dd);
    Eigen::VectorXd e = Eigen::VectorXd::Zero(Dd);
    for (Index b = 0; b < 3; ++b)
        for (Index j = 0; j < Dd; ++j) {
            e[j] = 1;
            const double* p = e.data();
            const MatrixXd dA = attention_jvp(st, nullptr, b == 0 ? p : nullptr,
                                              b == 1 ? p : nullptr, b == 2 ? p : nullptr);
            J.col(b * Dd + j) = Eigen::Map<const Eigen::VectorXd>(dA.data(), dA.size());
            e[j] = 0;
        }
    return J;
}

MatrixXd jacobian_input_forward_mode(const Head& h, double max_bytes) {
    const AttentionState st(h);
    const Index ND = st.N * st.D;
    refuse_dense(st.N * st.d, ND, max_bytes, "dense J_X");
    MatrixXd J(st.N * st.d, ND);
    Eigen::VectorXd e = Eigen::VectorXd::Zero(ND);
    for (Index j = 0; j < ND; ++j) {
        e[j] = 1;
        const MatrixXd dA = attention_jvp(st, e.data(), nullptr, nullptr, nullptr);
        J.col(j) = Eigen::Map<const Eigen::VectorXd>(dA.data(), dA.size());
        e[j] = 0;
    }
    return J;
}

namespace {

using C = std::complex<double>;

// Perturb entry j of one of the four inputs (0: X, 1: W_Q, 2: W_K, 3: W_V) by delta (complex or
// real) and return A. Inputs are the effective weights with the head's biases (held fixed).
template <class T>
Mat<T> perturbed_A(const Head& e, int which, Index j, T delta) {
    Mat<T> X = e.X.cast<T>(), WQ = e.W_Q.cast<T>(), WK = e.W_K.cast<T>(), WV = e.W_V.cast<T>();
    Mat<T>* target[4] = {&X, &WQ, &WK, &WV};
    target[which]->data()[j] += delta;
    return attention_forward<T>(X, WQ, WK, WV, T(e.s), e.b_Q, e.b_K, e.b_V).A;
}

MatrixXd complex_step(const Head& h, bool input, double step, double max_bytes) {
    h.validate();
    if (!(step > 0) || !std::isfinite(step))
        fail_data("complex step = " + value_text(step) + " must be finite and > 0", "step");
    const Head e = h.effective();
    const Index N = e.N(), D = e.D(), d = e.d();
    const Index ncol = input ? N * D : 3 * D * d;
    refuse_dense(N * d, ncol, max_bytes, input ? "dense J_X" : "dense J");
    MatrixXd J(N * d, ncol);
    for (Index col = 0; col < ncol; ++col) {
        const int which = input ? 0 : 1 + static_cast<int>(col / (D * d));
        const Index j = input ? col : col % (D * d);
        const Mat<C> A = perturbed_A<C>(e, which, j, C(0, step));
        for (Index k = 0; k < N * d; ++k) J(k, col) = A.data()[k].imag() / step;
    }
    return J;
}

MatrixXd central_fd(const Head& h, bool input, double rel_step, double max_bytes) {
    h.validate();
    if (!std::isfinite(rel_step))
        fail_data("finite-difference rel_step = " + value_text(rel_step) + " must be finite",
                  "rel_step");
    if (rel_step <= 0) rel_step = std::cbrt(3 * kUnitRoundoff);
    const Head e = h.effective();
    const Index N = e.N(), D = e.D(), d = e.d();
    const Index ncol = input ? N * D : 3 * D * d;
    refuse_dense(N * d, ncol, max_bytes, input ? "dense J_X" : "dense J");
    const SharedMatrix* src[4] = {&e.X, &e.W_Q, &e.W_K, &e.W_V};
    MatrixXd J(N * d, ncol);
    for (Index col = 0; col < ncol; ++col) {
        const int which = input ? 0 : 1 + static_cast<int>(col / (D * d));
        const Index j = input ? col : col % (D * d);
        const SharedMatrix& m = *src[which];
        const double x = m(j % m.rows(), j / m.rows());  // column-major index j, any strides
        // Divide by the step as represented, (x + h) - x, not by the requested h.
        const double hs = ((x + rel_step * std::max(1.0, std::fabs(x))) - x);
        const MatrixXd Ap = perturbed_A<double>(e, which, j, hs);
        const MatrixXd Am = perturbed_A<double>(e, which, j, -hs);
        J.col(col) = Eigen::Map<const Eigen::VectorXd>(Ap.data(), Ap.size()) / (2 * hs) -
                     Eigen::Map<const Eigen::VectorXd>(Am.data(), Am.size()) / (2 * hs);
    }
    return J;
}

}  // namespace

MatrixXd jacobian_weights_complex_step(const Head& h, double step, double max_bytes) {
    return complex_step(h, false, step, max_bytes);
}
MatrixXd jacobian_input_complex_step(const Head& h, double step, double max_bytes) {
    return complex_step(h, true, step, max_bytes);
}
MatrixXd jacobian_weights_central_fd(const Head& h, double rel_step, double max_bytes) {
    return central_fd(h, false, rel_step, max_bytes);
}
MatrixXd jacobian_input_central_fd(const Head& h, double rel_step, double max_bytes) {
    return central_fd(h, true, rel_step, max_bytes);
}

}  // namespace attnspec
