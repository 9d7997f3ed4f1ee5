// Infinite Self-Attention (IS, MATH.md §3), CPU reference: the affinity Â (ReLU/Frobenius or
// row-softmax), the Neumann kernel N = (I - gamma Â)^{-1} by LU (LAPACK dgetrf/dgetrs through
// OpenBLAS; Â is not symmetric), the closure C = N - I, truncation bounds, invariants,
// centralities, Collatz–Wielandt-certified Perron pairs (dense or matrix-free in tiles of Q K^T)
// and the Linear-InfSA fidelity cosines. CPU only (the reference the CUDA twins are checked against).
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <vector>

#include "attnspec/base/check.hpp"

namespace attnspec {

// ---------------------------------------------------------------- affinity
enum class AffinityKind { relu, softmax };  // relu: ReLU(QK^T/d_h)/(||.||_F+eps) (code form)
const char* to_string(AffinityKind k);
AffinityKind affinity_kind_from_string(const std::string& s);  // throws Usage

struct AffinityOptions {
    AffinityKind kind = AffinityKind::relu;
    double eps = 1e-6;  // the code's epsilon in the Frobenius normalisation
    double max_bytes = 8.0 * (1ull << 30);  // refuse dense N x N beyond this (check_allocation)
};

struct Affinity {
    Eigen::MatrixXd A_hat;   // N x N, entrywise >= 0
    double frob_plus = 0;    // relu: ||A+||_F before normalisation; softmax: 0
    AffinityKind kind = AffinityKind::relu;
};

// Validates Q, K (same N x d_h shape, non-empty, finite; DataError otherwise) and the size.
void check_qk(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, const std::string& who);

// Dense affinity of one (sample, head). Cost O(N^2 d_h) (one dgemm) and 8 N^2 bytes.
// Throws DataError on bad shapes, NaN/Inf, eps < 0, or N^2 beyond opt.max_bytes.
Affinity affinity(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, const AffinityOptions& opt = {});

// Batched / multi-head: Qs[h], Ks[h] for each (sample, head); one Affinity each.
std::vector<Affinity> affinities(const std::vector<Eigen::MatrixXd>& Qs,
                                 const std::vector<Eigen::MatrixXd>& Ks,
                                 const AffinityOptions& opt = {});

// --------------------------------------------------------- Perron (CW) certificate
// A non-negative operator that returns z = B x (or B^T x) together with rigorous entrywise
// enclosures z_lo <= (exact B x) <= z_hi, for x >= 0 (rounding and any input error accounted).
class NonnegOperator {
  public:
    virtual ~NonnegOperator() = default;
    virtual Eigen::Index size() const = 0;
    virtual void apply(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z,
                       Eigen::VectorXd& z_lo, Eigen::VectorXd& z_hi) const = 0;
};

// Dense B >= 0 (throws DataError on a negative or non-finite entry). The certified matrix is the
// stored B (referenced, must outlive the operator). Pads: gamma_N on each sum of non-negative terms.
class DenseNonnegOp final : public NonnegOperator {
  public:
    explicit DenseNonnegOp(const Eigen::MatrixXd& B);
    Eigen::Index size() const override { return B_.rows(); }
    void apply(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z, Eigen::VectorXd& z_lo,
               Eigen::VectorXd& z_hi) const override;

  private:
    const Eigen::MatrixXd& B_;
};

struct PerronOptions {
    bool left = true;          // left: B^T v = rho v (what Linear-InfSA approximates); else right
    double rel_width = 1e-10;  // stop when (hi - lo) <= rel_width * hi
    int max_iter = 500;
};

struct PerronResult {
    double rho = 0;              // Rayleigh-type estimate (x^T z / x^T x)
    Interval rho_enc;            // Collatz–Wielandt: contains rho(B) rigorously
    Eigen::VectorXd vec;         // non-negative, unit 2-norm
    double residual = 0;         // ||B^T v - rho v||_2 (left) or ||B v - rho v||_2
    double gap_ratio = 0;        // estimate of |lambda_2| / rho from the iteration's contraction
    double vec_error = 0;        // estimate of sin angle(v, exact): residual / (rho (1 - gap_ratio))
    int iterations = 0;
    bool converged = false;      // enclosure reached rel_width
    bool left = true;
};

// Power iteration with CW bounds min_i z_i/x_i <= rho <= max_i z_i/x_i at every step. Cost: one
// op.apply per iteration. Never throws on non-convergence: check `converged` and the enclosure.
PerronResult perron(const NonnegOperator& op, const PerronOptions& opt = {});
PerronResult perron(const Eigen::MatrixXd& B, const PerronOptions& opt = {});

// ||B||_2 of a dense B >= 0 enclosed via CW on B^T B (also non-negative). Cost O(N^2) per iteration.
Interval norm2_enclosure(const Eigen::MatrixXd& B, double rel_width = 1e-10);

struct AffinityNorms {
    double frob = 0;
    Interval norm2;      // ||Â||_2
    PerronResult left;   // rho(Â) and v
};
AffinityNorms affinity_norms(const Eigen::MatrixXd& A_hat);

// ---------------------------------------------------------------- Neumann kernel
// N = (I - gamma Â)^{-1} through one LU of M = I - gamma Â (dgetrf, O(N^3)). Products N B, N^T B
// and C V = N (gamma Â V) are solves (O(N^2) per column), never forming N. Throws DataError when
// gamma is not in (0, 1), Â is not square/finite/non-negative, or gamma * rho(Â) >= 1 (certified
// by CW; also when the enclosure cannot exclude it). Keeps a reference to A_hat: it must outlive
// the kernel.
class NeumannKernel {
  public:
    NeumannKernel(const Eigen::MatrixXd& A_hat, double gamma);
    Eigen::Index size() const { return n_; }
    double gamma() const { return gamma_; }
    const Interval& rho() const { return rho_; }
    Eigen::MatrixXd solve(const Eigen::MatrixXd& B) const;            // N B
    Eigen::MatrixXd solve_transpose(const Eigen::MatrixXd& B) const;  // N^T B
    Eigen::MatrixXd kernel() const;                                   // N (dense, O(N^3))
    Eigen::MatrixXd closure_times(const Eigen::MatrixXd& V) const;    // C V = N gamma Â V
    Eigen::MatrixXd closure_transpose_times(const Eigen::MatrixXd& V) const;  // C^T V
    // ||(|L||U|)||_F / ||M||_F of the computed LU (enters the residual bound). O(N^3).
    double lu_growth() const;

  private:
    const Eigen::MatrixXd& A_;
    Eigen::Index n_;
    double gamma_;
    Interval rho_;
    Eigen::MatrixXd lu_;
    std::vector<int> ipiv_;
};

// C V = N (gamma Â V) without keeping a factorisation: LAPACK dsgesv (float LU of I - gamma Â,
// iterative refinement in double to double backward error; falls back to a double LU when
// refinement does not converge). About half the cost of the double LU (the N = 4096 target).
// `iterations` receives dsgesv's iter (> 0 refinement steps, < 0 fell back). Same failures as
// NeumannKernel (gamma, shape, sign; gamma rho >= 1 certified refused).
Eigen::MatrixXd closure_times_mixed(const Eigen::MatrixXd& A_hat, double gamma,
                                    const Eigen::MatrixXd& V, int* iterations = nullptr);

// N_K = sum_{k<=K} gamma^k Â^k by Horner (K dense products, O(K N^3)). K >= 0.
Eigen::MatrixXd neumann_truncated(const Eigen::MatrixXd& A_hat, double gamma, int K);
// (gamma s)^{K+1} / (1 - gamma s), s an upper bound of ||Â||_2; +inf when gamma s >= 1.
double truncation_bound(double gamma, double norm2_hi, int K);
// Smallest K with truncation_bound <= target (target > 0); -1 when gamma s >= 1.
int truncation_order(double gamma, double norm2_hi, double target);

struct NeumannInvariants {
    double min_entry = 0;          // min N_ij (claim >= 0)
    double min_diag_minus_1 = 0;   // min N_ii - 1 (claim >= 0, N >= I)
    double min_offdiag = 0;        // min_{i != j} N_ij
    double commutator = 0;         // ||Â N - N Â||_F
    double residual = 0;           // ||(I - gamma Â) N - I||_F
    double residual_bound = 0;     // (g_3n growth + g_n+1) ||M||_F ||N||_F (infsa_neumann.md)
    double kappa_F = 0;            // ||M||_F ||N||_F
    double lu_growth = 0;          // || |L||U| ||_F / ||M||_F
    double entry_tol = 0;          // rounding allowance on the sign tests: n u ||N||_max
};
// N: a computed kernel (normally nk.kernel()); a planted error in N flips the residual test.
NeumannInvariants neumann_invariants(const NeumannKernel& nk, const Eigen::MatrixXd& A_hat,
                                     const Eigen::MatrixXd& N);

// --------------------------------------------------------------- centralities
struct Centralities {
    Eigen::VectorXd katz_out;        // C 1 (row sums of the closure)
    Eigen::VectorXd katz_in;         // C^T 1 (column sums)
    Eigen::VectorXd leak;            // R = 1 - gamma Â 1
    Eigen::VectorXd expected_steps;  // N 1
    double min_leak = 0;
    bool probabilistic = false;      // min R >= 0: N_ij = expected visits (absorbing chain)
    PerronResult left, right;        // of Â
};
// Cost: O(N^2) given the LU, plus two Perron iterations.
Centralities centralities(const Eigen::MatrixXd& A_hat, const NeumannKernel& nk);

// ------------------------------------------------------------------ fidelity
// Families of (Q, K) draws (seeded): gaussian (zero mean, i.i.d. N(0,1)), shared-mean (Q and K
// share the mean mu*m, m a random direction of norm sqrt(d_h)), independent-means (Q mean mu*m_Q,
// K mean mu*m_K, independent directions). Throws Usage on an unknown family.
void draw_family(const std::string& family, Eigen::Index N, Eigen::Index d, double mu,
                 std::uint64_t seed, Eigen::MatrixXd& Q, Eigen::MatrixXd& K);

double cosine(const Eigen::VectorXd& a, const Eigen::VectorXd& b);  // 0 when either is 0

struct Fidelity {
    double cos_left = 0, cos_right = 0, cos_katz_in = 0, cos_katz_out = 0;  // NaN when not computed
    PerronResult left, right;  // of Â (matrix-free: of A+ = ReLU(QK^T/d_h), same vectors)
    Interval rho_hat;          // rho(Â)
    Interval frob_plus;        // ||A+||_F
    bool matrix_free = false;
};
// Dense: all four cosines (LU for Katz). Cost O(N^3).
Fidelity fidelity_dense(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, double gamma,
                        double eps = 1e-6);
// Matrix-free: never holds N x N; left (and right if with_right) Perron vectors of A+ in tiles;
// Katz cosines are NaN. Cost per iteration O(N^2 d_h) flops, memory O(N d_h + tile).
Fidelity fidelity_matrix_free(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, double gamma,
                              double eps = 1e-6, bool with_right = false,
                              const PerronOptions& opt = {});

// --------------------------------------------------------------- matrix-free
// A+ = ReLU(Q K^T / d_h) applied in tiles (dgemm of tile x tile blocks, never N x N).
// Enclosures account for the rounding of each q_i . k_j (gamma_{d+2} ||q_i|| ||k_j||, ReLU is
// 1-Lipschitz) and of the sums, so CW bounds hold for the exact A+ of the given Q, K.
// Keeps references to Q and K (they must outlive the operator).
class ReluKernelOp final : public NonnegOperator {
  public:
    ReluKernelOp(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, Eigen::Index tile = 1024);
    Eigen::Index size() const override { return Q_.rows(); }
    void apply(const Eigen::VectorXd& x, bool transpose, Eigen::VectorXd& z, Eigen::VectorXd& z_lo,
               Eigen::VectorXd& z_hi) const override;
    // ||A+||_F enclosure: accumulated during the first apply(), else one tiled pass.
    Interval frobenius() const;
    long passes() const { return passes_; }

  private:
    const Eigen::MatrixXd& Q_;
    const Eigen::MatrixXd& K_;
    Eigen::Index tile_;
    Eigen::VectorXd nq_, nk_;  // row 2-norms
    double delta_ = 0;         // per-entry pad factor: |fl(s_ij) - s_ij| <= delta nq_i nk_j
    mutable long passes_ = 0;
    mutable bool frob_done_ = false;
    mutable Interval frob_;
    Interval frobenius_from(double sum_sq) const;
};

}  // namespace attnspec
