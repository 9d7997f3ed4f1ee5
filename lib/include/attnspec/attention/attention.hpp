// Attention forward pass (docs/MATH.md §2): S = row-softmax(s Q K^T) (max-shifted), A = S V with
// Q = X W_Q + 1 b_Q^T, K = X W_K + 1 b_K^T, V = X W_V + 1 b_V^T (biases optional, §2 "Biases");
// multi-head = H heads on a shared X, outputs concatenated. Corrections C (SpecA,
// Def 3.6) are frozen: SpecA and its W-Jacobian are plain attention at W + C (effective()).
// Header template on the scalar (double, long double, std::complex<double> for complex step).
// Eigen only. CPU only.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "attnspec/base/shared_matrix.hpp"

namespace attnspec {

template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;

// Kind of fixed correction (docs/MATH.md §2, Def 3.6): none; lambda * I_{D x d}; the Thm 3.5 SVD
// correction sigma_1(W) U_r V_r^T of each weight; or matrices supplied by the caller.
enum class CorrectionKind { none, lambda, svd, given };

struct CorrectionSpec {
    CorrectionKind kind = CorrectionKind::none;
    double lambda = 0;  // used by kind == lambda
    // "none", "lambda:10", "svd" (CLI spelling); throws Error(Usage) otherwise.
    static CorrectionSpec parse(const std::string& text);
    std::string describe() const;  // inverse of parse; "given" for supplied matrices
};

// One attention head on its input. Tokens are rows. W_* are the trainable weights (D x d);
// C_* the frozen corrections (D x d, or empty = zero). s is the logit scale (1 or 1/sqrt(d)).
// b_* are optional biases (length d, or empty = none, the paper's bias-free form): a real head
// computes Q = X W_Q + 1 b_Q^T, K = X W_K + 1 b_K^T, V = X W_V + 1 b_V^T (issue 11).
// X and W_* are SharedMatrix: owned, or views of a caller's buffers (the Python package's arrays,
// C- or F-ordered, used without a copy); copying a Head shares them.
struct Head {
    SharedMatrix X;                 // N x D
    SharedMatrix W_Q, W_K, W_V;     // D x d
    Eigen::MatrixXd C_Q, C_K, C_V;  // D x d or empty
    Eigen::VectorXd b_Q, b_K, b_V;  // d or empty (no bias)
    double s = 1.0;

    Eigen::Index N() const { return X.rows(); }
    Eigen::Index D() const { return X.cols(); }
    Eigen::Index d() const { return W_Q.cols(); }
    bool corrected() const { return C_Q.size() + C_K.size() + C_V.size() > 0; }
    bool biased() const { return b_Q.size() + b_K.size() + b_V.size() > 0; }
    // The weights the block actually uses: W + C (C frozen). Every Jacobian in jacobian.hpp is
    // the Jacobian of plain attention evaluated at these weights; since C does not depend on W,
    // d(SpecA)/dW = J(W + C).
    Head effective() const;  // copy with W_* <- W_* + C_*, no corrections, the biases kept
    // Throws Error(DataError) naming `what` on empty or mismatched shapes (a bias of length other
    // than d included), NaN/Inf, s <= 0.
    void validate(const std::string& what = "attention input") const;
};
using AttentionInput = Head;

// Fill C_Q, C_K, C_V from the weights (svd: Thm 3.5 per weight; lambda: lambda I_{D x d}).
// kind == given is a no-op (the caller set the matrices). Throws DataError for the SVD
// correction of a zero weight.
void apply_correction(Head& h, const CorrectionSpec& spec);

// Per-head weights for a multi-head layer; X and s are shared.
struct HeadWeights {
    Eigen::MatrixXd W_Q, W_K, W_V, C_Q, C_K, C_V;
    Eigen::VectorXd b_Q, b_K, b_V;  // d or empty (no bias)
};
struct MultiHead {
    SharedMatrix X;  // N x D, shared by every head (and by the heads head() returns)
    std::vector<HeadWeights> heads;
    double s = 1.0;
    Eigen::Index H() const { return static_cast<Eigen::Index>(heads.size()); }
    Head head(Eigen::Index h) const;  // shares X, copies head h's weights: O(D d)
    void validate(const std::string& what = "multi-head input") const;
};

// How a computation treats the biases of its heads (`attnspec jacobian --bias`): keep them (J at
// the biased head) or drop them (the paper's bias-free form, docs/MATH.md §2 "Biases").
enum class BiasForm { keep, drop };
// "keep" | "drop"; Error(Usage, parameter "bias") otherwise.
BiasForm bias_form_from_string(const std::string& text);
// drop: clears every head's b_*; keep: leaves them. Returns what reports record as `bias_form`:
// "with biases (b_Q, b_K, b_V)" (naming the biases some head has), "bias-free (paper form)"
// (dropped) or "bias-free (input has no biases)". O(H).
std::string apply_bias_form(std::vector<Head>& heads, BiasForm form);

// s = 1 (the paper's default) or 1/sqrt(d).
enum class LogitScale { one, inv_sqrt_d };
double logit_scale(LogitScale k, Eigen::Index d);

// Seeded random instances (generators named by how they build data, base/random.hpp). token_dist:
// "gaussian" (i.i.d. N(0,1) entries) or "layernorm" (each token row centred and scaled to unit
// variance, as after a LayerNorm without affine). Weights are i.i.d. N(0, weight_scale^2 / D).
// Throws Usage on an unknown distribution, DataError on non-positive sizes or scale.
struct RandomSpec {
    Eigen::Index N = 8, D = 6, d = 4, H = 1;
    std::uint64_t seed = 0;
    std::string token_dist = "gaussian";
    double weight_scale = 1.0;
    LogitScale scale = LogitScale::one;
};
MultiHead random_multihead(const RandomSpec& spec);
Head random_head(const RandomSpec& spec);  // head 0 of random_multihead(spec with H = 1)

// ---- forward pass (template) ------------------------------------------------------------------

template <class T>
struct Forward {
    Mat<T> Q, K, V;  // X W_Q + 1 b_Q^T, X W_K + 1 b_K^T, X W_V + 1 b_V^T (N x d)
    Mat<T> L;        // logits s Q K^T (N x N)
    Mat<T> S;        // row softmax of L (N x N)
    Mat<T> A;        // S V (N x d)
};

namespace detail {
template <class T>
double real_part(const T& x) {
    return static_cast<double>(x);
}
template <class T>
double real_part(const std::complex<T>& x) {
    return static_cast<double>(x.real());
}
}  // namespace detail

// Row softmax, each row shifted by the max of its real part (a real constant per row: softmax is
// shift invariant, so the shift changes no derivative, and complex-step stays analytic).
template <class T>
Mat<T> row_softmax(const Mat<T>& L) {
    Mat<T> S(L.rows(), L.cols());
    for (Eigen::Index i = 0; i < L.rows(); ++i) {
        double m = detail::real_part(L(i, 0));
        for (Eigen::Index k = 1; k < L.cols(); ++k) m = std::max(m, detail::real_part(L(i, k)));
        T sum(0);
        for (Eigen::Index k = 0; k < L.cols(); ++k) {
            using std::exp;
            S(i, k) = exp(L(i, k) - T(m));
            sum += S(i, k);
        }
        S.row(i) /= sum;
    }
    return S;
}

// Forward pass with the given (effective) weights and optional biases (length d, or empty = no
// bias; real even for a complex T: the Jacobians never perturb a bias). Cost O(N D d + N^2 d),
// memory O(N^2 + N d). No validation: callers pass validated shapes (Head::validate).
template <class T>
Forward<T> attention_forward(const Mat<T>& X, const Mat<T>& W_Q, const Mat<T>& W_K,
                             const Mat<T>& W_V, const T& s, const Eigen::VectorXd& b_Q = {},
                             const Eigen::VectorXd& b_K = {}, const Eigen::VectorXd& b_V = {}) {
    Forward<T> f;
    f.Q.noalias() = X * W_Q;
    f.K.noalias() = X * W_K;
    f.V.noalias() = X * W_V;
    if (b_Q.size()) f.Q.rowwise() += b_Q.transpose().template cast<T>();
    if (b_K.size()) f.K.rowwise() += b_K.transpose().template cast<T>();
    if (b_V.size()) f.V.rowwise() += b_V.transpose().template cast<T>();
    f.L.noalias() = f.Q * f.K.transpose();
    f.L *= s;
    f.S = row_softmax<T>(f.L);
    f.A.noalias() = f.S * f.V;
    return f;
}

// The head's forward pass at its effective weights W + C, with its biases, in scalar T.
// Validates first.
template <class T = double>
Forward<T> attention_forward(const Head& h) {
    h.validate();
    const Head e = h.effective();
    return attention_forward<T>(e.X.cast<T>(), e.W_Q.cast<T>(), e.W_K.cast<T>(), e.W_V.cast<T>(),
                                T(e.s), e.b_Q, e.b_K, e.b_V);
}

// Multi-head output [A_1 ... A_H] (N x H d) at the effective weights. Validates first.
Eigen::MatrixXd multihead_forward(const MultiHead& m);

}  // namespace attnspec
