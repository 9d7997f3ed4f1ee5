// Exact attention Jacobians (SC Thm 3.3, docs/MATH.md §1-2), column-major vec, at W + C: J = [J_Q,
// J_K, J_V] (Nd x 3Dd) and J_X (Nd x ND). With biases (Head::b_*) every form below holds with
// Q = X W_Q + 1 b_Q^T, K = X W_K + 1 b_K^T in place of X W_Q, X W_K; b_V changes no Jacobian
// (docs/MATH.md §2, "Biases"). Derivatives are with respect to W and X, never the biases. Route
// (a): closed forms with Lambda applied per softmax row (no N^2 x N^2 or Kronecker matrix); route
// (b): forward mode column by column; complex-step and central-difference witnesses; matrix-free J
// v / J^T u; J J^T from factors. Eigen + OpenBLAS dgemm. CPU only. Derivations and tolerances:
// proofs/jacobian_routes.md.
#pragma once
#include <Eigen/Dense>
#include <memory>
#include <vector>

#include "attnspec/attention/attention.hpp"
#include "attnspec/spectral/operator_spectrum.hpp"
#include "attnspec/spectral/operators.hpp"

namespace attnspec {

// Refusal limit for dense results (bytes); callers may raise it.
inline constexpr double kDefaultJacobianMaxBytes = 4.0 * 1024 * 1024 * 1024;

// Bytes of dense J (weights) / J_X / J J^T for a head of these sizes (for refusing early).
double jacobian_weights_bytes(Eigen::Index N, Eigen::Index D, Eigen::Index d);
double jacobian_input_bytes(Eigen::Index N, Eigen::Index D, Eigen::Index d);
double jacobian_gram_bytes(Eigen::Index N, Eigen::Index d);

// Which block of J: columns [0, Dd) are W_Q, [Dd, 2Dd) W_K, [2Dd, 3Dd) W_V.
enum class WeightBlock { Q = 0, K = 1, V = 2 };

// ---- route (a): structured closed forms --------------------------------------------------------
// Dense J = [J_Q, J_K, J_V] (Nd x 3Dd). Cost O(N^2 d (D + d)) flops + writing J (memory bound);
// extra memory O(N^2 d + N D d). Validates the head (DataError) and refuses J larger than
// max_bytes before allocating (DataError naming the size).
// Optional progress (stage "forming", in column groups: 3 d for J, D for J_X) with an
// estimate of the time left, as the spectral engine reports its own (EngineProgressFn).
Eigen::MatrixXd jacobian_weights(const Head& h, double max_bytes = kDefaultJacobianMaxBytes,
                                 const EngineProgressFn& progress = {});
// One block (Nd x Dd), same cost model.
Eigen::MatrixXd jacobian_weights_block(const Head& h, WeightBlock b,
                                       double max_bytes = kDefaultJacobianMaxBytes);
// Dense J_X (Nd x ND). Cost O(N^2 D d) (writing J_X); extra memory O(N^2 d + N D).
Eigen::MatrixXd jacobian_input(const Head& h, double max_bytes = kDefaultJacobianMaxBytes,
                               const EngineProgressFn& progress = {});

// Running-error scale: the same formulas evaluated on absolute values (|X|, |W|, |b|, S, and
// S_ik (|V|_kc + |A|_ic) in place of S_ik (V_kc - A_ic)). Every route here (closed form, forward
// mode, reverse mode) computes each entry as sums of at most n = N + D + d + 3 products (+ 1 for
// a head with biases: Q = X W_Q + 1 b_Q^T) whose absolute values add up to this scale, so |computed
// - exact| <~ gamma_n * magnitude entrywise, to first order (Higham, Accuracy and Stability, §3.1).
// Same cost as route (a).
Eigen::MatrixXd jacobian_weights_magnitude(const Head& h,
                                           double max_bytes = kDefaultJacobianMaxBytes);
Eigen::MatrixXd jacobian_input_magnitude(const Head& h,
                                         double max_bytes = kDefaultJacobianMaxBytes);

// Multi-head, heads sharing X: output vec[A_1 ... A_H] (N x Hd). Weights are ordered head by
// head, each [W_Q, W_K, W_V], so the full-layer weight Jacobian is block diagonal with the
// per-head J (NHd x 3HDd); the full-layer input Jacobian stacks the per-head J_X (NHd x ND).
Eigen::MatrixXd jacobian_weights(const MultiHead& m, double max_bytes = kDefaultJacobianMaxBytes);
Eigen::MatrixXd jacobian_input(const MultiHead& m, double max_bytes = kDefaultJacobianMaxBytes);

// ---- route (b): forward mode, column by column -------------------------------------------------
// Directional derivatives of A (N x d). jvp_weights: O(N D d + N^2 d); jvp_input likewise.
Eigen::MatrixXd jvp_weights(const Head& h, const Eigen::MatrixXd& dW_Q, const Eigen::MatrixXd& dW_K,
                            const Eigen::MatrixXd& dW_V);
Eigen::MatrixXd jvp_input(const Head& h, const Eigen::MatrixXd& dX);
// Dense J and J_X assembled from one JVP per column: O(3Dd (N D d + N^2 d)). For tests and
// small problems; same validation and refusal as route (a).
Eigen::MatrixXd jacobian_weights_forward_mode(const Head& h,
                                              double max_bytes = kDefaultJacobianMaxBytes);
Eigen::MatrixXd jacobian_input_forward_mode(const Head& h,
                                            double max_bytes = kDefaultJacobianMaxBytes);

// ---- witnesses ----------------------------------------------------------------------------------
// Complex step: column j = Im A(W + i h e_j) / h, evaluated in std::complex<double>. No
// cancellation, so h = 1e-30 gives the derivative to rounding. Cost: one complex forward pass
// per column. Throws DataError for h <= 0.
Eigen::MatrixXd jacobian_weights_complex_step(const Head& h, double step = 1e-30,
                                              double max_bytes = kDefaultJacobianMaxBytes);
Eigen::MatrixXd jacobian_input_complex_step(const Head& h, double step = 1e-30,
                                            double max_bytes = kDefaultJacobianMaxBytes);
// Central differences (A(W + h e_j) - A(W - h e_j)) / 2h, with step = rel_step * max(1, |W_j|).
// Error O(h^2 |A'''| + u |A| / h); rel_step <= 0 selects (3u)^(1/3), the balance point.
Eigen::MatrixXd jacobian_weights_central_fd(const Head& h, double rel_step = 0,
                                            double max_bytes = kDefaultJacobianMaxBytes);
Eigen::MatrixXd jacobian_input_central_fd(const Head& h, double rel_step = 0,
                                          double max_bytes = kDefaultJacobianMaxBytes);

// ---- matrix-free operators ----------------------------------------------------------------------
// Precomputed forward state at the effective weights: X, W_*, Q, K, V, S, A. Memory O(N^2 + N D
// + D d). Shared by the operators.
struct AttentionState;

// Base of the two single-head operators: owns the forward state at W + C and answers rows() =
// N d (the output is vec A, N x d). Not used on its own.
class HeadOperator : public LinearOperator {
  public:
    ~HeadOperator() override;
    Eigen::Index rows() const override;
    // Spectra-style alias of apply.
    void perform_op(const double* x, double* y) const { apply(x, y); }

  protected:
    explicit HeadOperator(const Head& h);  // validates; stores the forward state
    const AttentionState& state() const { return *st_; }

  private:
    std::unique_ptr<AttentionState> st_;
};

// y = J v (v = [vec dW_Q; vec dW_K; vec dW_V], 3Dd) and y = J^T u (u = vec of an N x d
// matrix). Each product costs O(N^2 d + N D d) flops and O(N^2 + N (D + d)) workspace.
class JacobianOperator final : public HeadOperator {
  public:
    explicit JacobianOperator(const Head& h);  // validates; stores the forward state
    Eigen::Index cols() const override;
    void apply(const double* x, double* y) const override;
    void apply_transpose(const double* x, double* y) const override;
};

// y = J_X v (v = vec dX, ND) and y = J_X^T u; same cost model.
class JacobianXOperator final : public HeadOperator {
  public:
    explicit JacobianXOperator(const Head& h);
    Eigen::Index cols() const override;
    void apply(const double* x, double* y) const override;
    void apply_transpose(const double* x, double* y) const override;
};

// Base of the two layer operators: one HeadOp per head of a validated MultiHead; rows() sums the
// heads' rows (outputs stacked head by head), cols() is set by the derived class.
template <class HeadOp>
class LayerOperator : public LinearOperator {
  public:
    Eigen::Index rows() const override { return rows_; }
    Eigen::Index cols() const override { return cols_; }

  protected:
    explicit LayerOperator(const MultiHead& m);  // validates; builds the per-head operators
    std::vector<std::unique_ptr<HeadOp>> heads_;
    Eigen::Index rows_ = 0, cols_ = 0;
};

// Full multi-head layer (heads share X), output vec[A_1 ... A_H] (N H d):
//  * LayerJacobianOperator: weights ordered head by head, each [W_Q, W_K, W_V] (3 H D d);
//    block diagonal in the per-head J.
//  * LayerJacobianXOperator: J_X of the layer = per-head J_X stacked (N H d x N D); J_X^T u sums
//    the per-head adjoints.
// Cost and memory: H times the per-head operator.
class LayerJacobianOperator final : public LayerOperator<JacobianOperator> {
  public:
    explicit LayerJacobianOperator(const MultiHead& m);  // validates
    void apply(const double* x, double* y) const override;
    void apply_transpose(const double* x, double* y) const override;
};

class LayerJacobianXOperator final : public LayerOperator<JacobianXOperator> {
  public:
    explicit LayerJacobianXOperator(const MultiHead& m);  // validates
    void apply(const double* x, double* y) const override;
    void apply_transpose(const double* x, double* y) const override;
};

// ---- Gram matrices without forming J ------------------------------------------------------------
// J J^T (Nd x Nd, symmetric, both triangles filled) from the factors:
//   J_Q J_Q^T = s^2 [ (X X^T)_{ij} (Z_c Z_c'^T)_{ij} ],  Z_c = P^c K       (inner dim d)
//   J_K J_K^T = s^2 [ (Q Q^T)_{ij} (Y_c Y_c'^T)_{ij} ],  Y_c = P^c R^T,  X X^T = R^T R
//                                                        (inner dim m = min(N, D))
//   J_V J_V^T = I_d (x) (S X)(S X)^T
// with P^c_{ik} = S_ik (V_kc - A_ic). Cost ~ N^2 d^2 (d + m) flops (dgemm), memory the result
// plus O(N^2 d + N d m). ViT-B head (197, 768, 64): ~41 GFlop, 1.3 GB. A normal-equation
// matrix: its eigenvalues are sigma(J)^2, so singular values of J below ~sqrt(u) sigma_1 are not
// resolved from it. Validates; refuses results above max_bytes. Optional progress: stage
// "J J^T", in N x N blocks of the lower triangle (d (d + 1) / 2), with an estimate of the time
// left.
Eigen::MatrixXd jacobian_gram_outer(const Head& h, double max_bytes = kDefaultJacobianMaxBytes,
                                    const EngineProgressFn& progress = {});
// J~ J~^T (Nd x Nd) in double-double with a proved error bound (proofs/spectral_enclosure.md §8,
// "Gram from the factors"), for the double-double certificate (certify_gram_dd): the structure
// of jacobian_gram_outer with every sum accumulated in double-double, J~ the weight Jacobian with
// factors Q, K, S and P^c computed in double-double and rounded once, taken as exact. Lower
// triangle; g.rho >= rho of its entrywise error bound; g.factor_error >= ||J~ - J||_2 for the
// exact J, proved (§8 "The factors' error"; assumes the C library's expl within 2 ulp). Cost ~
// (Nd)^2 N double-double multiply-adds (jacobian_gram_dd_updates; ViT-B head: 3.1e10), memory
// jacobian_gram_dd_bytes (ViT-B: 2.6 GB), `threads` threads (bits independent of it). Validates;
// refuses above max_bytes (checked before allocating). No progress of its own (the certificate's
// heartbeat covers it).
DdGram jacobian_gram_dd(const Head& h, int threads, double max_bytes = kDefaultJacobianMaxBytes);
// The factors J~ is made of (checks of jacobian_gram_dd) and the bound on ||J~ - J||_2: row
// (i, c) of J~ is [s X_i (x) (P^c K)_i, s Q_i (x) (P^c X)_i, (S X)_i (x) e_c] up to a permutation
// of its columns (which leaves J~ J~^T unchanged), all products exact. Validates.
struct JacobianFactors {
    Eigen::MatrixXd X, Q, K, S;
    std::vector<Eigen::MatrixXd> P;  // P^c, c < d
    double s = 1;
    // ||J~ - J||_2 <= error (+inf when unknown), J the exact Jacobian (proved; assumes expl
    // within 2 ulp), and its
    // parts: the W_Q and W_K blocks' Frobenius bounds, the W_V block's 2-norm bound
    double error = 0, error_q = 0, error_k = 0, error_v = 0;
};
JacobianFactors jacobian_factors(const Head& h);
double jacobian_gram_dd_bytes(Eigen::Index N, Eigen::Index d);
double jacobian_gram_dd_updates(Eigen::Index N, Eigen::Index D, Eigen::Index d);

// J_X J_X^T (Nd x Nd) without forming J_X (Nd x ND): each row of J_X is the rank-3 N x D matrix
// S_i^T w_c^T + e_i g_ic^T + p_ic r_i^T, and Gram entries are sums of products of the factors'
// inner products. Cost ~ N^3 d^2 flops (one dgemm) + O(N^3 d + N^2 d^2); memory the result plus
// O(N^2 d). Same normal-equation caveat, refusal and progress as jacobian_gram_outer.
Eigen::MatrixXd jacobian_x_gram_outer(const Head& h, double max_bytes = kDefaultJacobianMaxBytes,
                                      const EngineProgressFn& progress = {});

// ---- the softmax Jacobian Lambda = d vec S / d vec L (N^2 x N^2) --------------------------------
// Block diagonal up to the permutation vec(L) -> vec(L^T): row i of S contributes the N x N
// block Lambda(p) = Diag(p) - p p^T, p = S.row(i). Stored as S only.
class SoftmaxJacobian {
  public:
    explicit SoftmaxJacobian(Eigen::MatrixXd S);  // DataError if S is not square or non-finite
    Eigen::Index N() const { return S_.rows(); }
    Eigen::MatrixXd block(Eigen::Index i) const;  // Diag(p_i) - p_i p_i^T, O(N^2)
    // vec(dS) = Lambda vec(dL) as matrices: dS = S o (dL - rowsum(S o dL) 1^T). O(N^2).
    Eigen::MatrixXd apply(const Eigen::MatrixXd& dL) const;
    // Dense N^2 x N^2 in the column-major vec order (tests, tiny N only; refuses N > 64).
    Eigen::MatrixXd dense() const;
    const Eigen::MatrixXd& S() const { return S_; }

  private:
    Eigen::MatrixXd S_;
};

// Eigenvalues (ascending, all >= 0) of Diag(p) - p p^T for p = p_in / sum(p_in): one exact 0
// (Lambda(p) 1 = 0), an exact 0 per zero p_j, v (m - 1 times) for each value v taken m times,
// and one root of g(lambda) = sum_j p_j / (p_j - lambda) between each pair of consecutive
// distinct values, by bisection from the nearer pole. g does not involve sum p = 1, so every
// eigenvalue, however tiny (saturated rows), has relative error O(N u). O(N^2 log) per vector.
// Throws DataError for empty, negative, non-finite or all-zero p.
Eigen::VectorXd softmax_block_eigenvalues(const Eigen::VectorXd& p);

enum class LambdaEigenMethod {
    secular,  // softmax_block_eigenvalues per row: high relative accuracy (default)
    dense     // symmetric eigensolver per block: absolute accuracy ~ N u max p (a cross-check)
};
// All N^2 singular values of Lambda (descending): the union of the eigenvalues of the symmetric
// positive semidefinite blocks Diag(p_i) - p_i p_i^T, p_i = S.row(i). Cost O(N^3 log) (secular)
// or O(N^4) (dense). For kappa_nz(Lambda) (Thm 3.4). Throws DataError for a non-square or
// non-finite S.
Eigen::VectorXd softmax_jacobian_singular_values(
    const Eigen::MatrixXd& S, LambdaEigenMethod method = LambdaEigenMethod::secular);

}  // namespace attnspec
