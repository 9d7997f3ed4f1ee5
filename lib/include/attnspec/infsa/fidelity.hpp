// Linear-InfSA fidelity (proofs/infsa_fidelity.md): seeded (Q, K) data families and the cosines
// between Linear-InfSA's weights a and the Perron / Katz vectors of Â, dense (affinity, LU,
// centralities) or matrix-free (CW power iteration on the tiled ReluKernelOp, never N x N).
// CPU only.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <string>

#include "attnspec/base/check.hpp"
#include "attnspec/infsa/perron.hpp"

namespace attnspec {

// Families of (Q, K) draws (seeded): gaussian (zero mean, i.i.d. N(0,1)), shared-mean (Q and K
// share the mean mu*m, m a random direction of norm sqrt(d_h)), independent-means (Q mean mu*m_Q,
// K mean mu*m_K, independent directions). Cost O(N d). Throws Usage on an unknown family
// (parameter "family"), DataError on N or d <= 0 or a non-finite mu (parameter "mu").
void draw_family(const std::string& family, Eigen::Index N, Eigen::Index d, double mu,
                 std::uint64_t seed, Eigen::MatrixXd& Q, Eigen::MatrixXd& K);

double cosine(const Eigen::VectorXd& a, const Eigen::VectorXd& b);  // 0 when either is 0

struct Fidelity {
    double cos_left = 0, cos_right = 0, cos_katz_in = 0, cos_katz_out = 0;  // NaN: not computed
    PerronResult left, right;  // of Â (matrix-free: of A+ = ReLU(QK^T/d_h), same vectors)
    Interval rho_hat;          // rho(Â)
    Interval frob_plus;        // ||A+||_F
    bool matrix_free = false;
};
// Dense: all four cosines (LU for Katz). Cost O(N^3). Failures as affinity() and NeumannKernel.
Fidelity fidelity_dense(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, double gamma,
                        double eps = 1e-6);
// Matrix-free: never holds N x N; left (and right if with_right) Perron vectors of A+ in tiles;
// Katz cosines are NaN. Cost per iteration O(N^2 d_h) flops, memory O(N d_h + tile). DataError on
// gamma outside (0, 1) (parameter "gamma") and bad Q, K.
Fidelity fidelity_matrix_free(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, double gamma,
                              double eps = 1e-6, bool with_right = false,
                              const PerronOptions& opt = {});

}  // namespace attnspec
