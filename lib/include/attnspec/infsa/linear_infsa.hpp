// Linear-InfSA (IS, docs/MATH.md §3), CPU reference: the two-sweep streaming form (O(N d_h) time,
// O(d_h) state: central query q_bar from energy-weighted queries, then ReLU scores against the
// keys and the pooled value p = gamma sum_j a_j v_j), a literal vectorised transcription of the
// public code's formulation (energy weights, L1 normalisation) to cross-check it, and a float32
// multi-head kernel for throughput. Twin: gpu/src/infsa/linear_infsa_cuda.cu (issue for the GPU
// side).
#pragma once
#include <Eigen/Dense>

namespace attnspec {

struct LinearInfsaOptions {
    double gamma = 0.95;  // in (0, 1)
    double eps = 1e-6;    // in both normalisations, as in the code
};

struct LinearInfsaResult {
    Eigen::VectorXd p;        // pooled output (d_h); every token's output is p (broadcast)
    Eigen::VectorXd q_bar;    // central query (d_h), in the scaled q~ = q / sqrt(d_h) units
    double sum_e = 0;         // sum of query energies ||q~_i||
    double sum_s = 0;         // sum of scores s_j = max(0, q_bar . k~_j)
    bool degenerate = false;  // all s_j = 0 (includes all-zero queries): p = 0 by definition
};

// Two sweeps over the tokens; O(N d_h) time, O(d_h) state. Throws DataError on empty, mismatched
// (Q, K, V all N x d_h), NaN/Inf inputs, gamma not in (0, 1) or eps < 0.
LinearInfsaResult linear_infsa(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                               const Eigen::MatrixXd& V, const LinearInfsaOptions& opt = {});

// The attention weights a_j = s_j / (sum s + eps) (N); a third sweep. Zero vector when degenerate.
Eigen::VectorXd linear_infsa_weights(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                                     const LinearInfsaOptions& opt = {});

struct LinearInfsaLiteral {
    Eigen::MatrixXd out;  // N x d_h, every row p (the code broadcasts)
    Eigen::VectorXd w;    // energy weights e / (sum e + eps)
    Eigen::VectorXd a;    // L1-normalised scores
    Eigen::VectorXd q_bar;
};
// Literal form: w = E/(sum E + eps), q_bar = Q~^T w, s = ReLU(K~ q_bar), a = s/(||s||_1 + eps),
// out = 1 (gamma V^T a)^T. O(N d_h) time, O(N d_h) memory. Same failures as linear_infsa.
LinearInfsaLiteral linear_infsa_literal(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K,
                                        const Eigen::MatrixXd& V,
                                        const LinearInfsaOptions& opt = {});

// Float32 multi-head: Q, K, V laid out [H][N][d] (each head a contiguous row-major N x d block);
// P receives H x d pooled outputs. Sums are carried in float within blocks of 256 tokens and in
// double across blocks. `threads` splits the heads. Reads each input byte once per sweep
// (Q once, K and V once). Throws DataError on non-positive sizes or bad gamma/eps.
void linear_infsa_heads_f32(const float* Q, const float* K, const float* V, long H, long N, long d,
                            const LinearInfsaOptions& opt, float* P, int threads = 1);

}  // namespace attnspec
