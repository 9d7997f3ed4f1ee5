// The (Q, K) data families and the fidelity cosines of Linear-InfSA against the Perron / Katz
// vectors of Â, dense and matrix-free (proofs/infsa_fidelity.md).
#include "attnspec/infsa/fidelity.hpp"

#include <cmath>
#include <limits>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/infsa/affinity.hpp"
#include "attnspec/infsa/centrality.hpp"
#include "attnspec/infsa/linear_infsa.hpp"
#include "attnspec/infsa/neumann.hpp"
#include "attnspec/infsa/relu_kernel.hpp"
#include "infsa_internal.hpp"

namespace attnspec {

using detail::kUnit;

void draw_family(const std::string& family, Eigen::Index N, Eigen::Index d, double mu,
                 std::uint64_t seed, Eigen::MatrixXd& Q, Eigen::MatrixXd& K) {
    if (N <= 0 || d <= 0) fail_data("draw_family: N and d_h must be positive");
    if (!std::isfinite(mu))
        throw Error(ExitCode::DataError, "mu = " + detail::num(mu) + " must be finite", "mu");
    Rng rng(seed);
    Q = rng.gaussian(N, d);
    K = rng.gaussian(N, d);
    if (family == "gaussian") return;
    auto direction = [&] {
        Eigen::VectorXd m = rng.gaussian(d, 1);
        return Eigen::VectorXd(m * (std::sqrt(double(d)) / m.norm()));
    };
    if (family == "shared-mean") {
        const Eigen::VectorXd m = direction();
        Q.rowwise() += mu * m.transpose();
        K.rowwise() += mu * m.transpose();
    } else if (family == "independent-means") {
        const Eigen::VectorXd mq = direction(), mk = direction();
        Q.rowwise() += mu * mq.transpose();
        K.rowwise() += mu * mk.transpose();
    } else {
        throw Error(
            ExitCode::Usage,
            "unknown family '" + family + "' (expected gaussian, shared-mean or independent-means)",
            "family");
    }
}

double cosine(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
    const double na = a.norm(), nb = b.norm();
    if (na == 0 || nb == 0) return 0.0;
    return a.dot(b) / (na * nb);
}

Fidelity fidelity_dense(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, double gamma,
                        double eps) {
    AffinityOptions ao;
    ao.eps = eps;
    const Affinity A = affinity(Q, K, ao);
    const NeumannKernel nk(A.A_hat, gamma);
    const Centralities c = centralities(A.A_hat, nk);
    LinearInfsaOptions lo;
    lo.gamma = gamma;
    lo.eps = eps;
    const Eigen::VectorXd a = linear_infsa_weights(Q, K, lo);
    Fidelity f;
    f.left = c.left;
    f.right = c.right;
    f.rho_hat = c.left.rho_enc;
    f.frob_plus = Interval::point(A.frob_plus);
    f.cos_left = cosine(a, c.left.vec);
    f.cos_right = cosine(a, c.right.vec);
    f.cos_katz_in = cosine(a, c.katz_in);
    f.cos_katz_out = cosine(a, c.katz_out);
    return f;
}

Fidelity fidelity_matrix_free(const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, double gamma,
                              double eps, bool with_right, const PerronOptions& opt) {
    detail::check_gamma(gamma);
    const ReluKernelOp op(Q, K);
    Fidelity f;
    f.matrix_free = true;
    PerronOptions o = opt;
    o.left = true;
    f.left = perron(op, o);
    f.frob_plus = op.frobenius();  // accumulated during the first pass
    // rho(Â) = rho(A+) / (||A+||_F + eps), outward.
    f.rho_hat = {f.left.rho_enc.lo / (f.frob_plus.hi + eps) * (1 - 4 * kUnit),
                 f.left.rho_enc.hi / (f.frob_plus.lo + eps) * (1 + 4 * kUnit)};
    LinearInfsaOptions lo;
    lo.gamma = gamma;
    lo.eps = eps;
    const Eigen::VectorXd a = linear_infsa_weights(Q, K, lo);
    f.cos_left = cosine(a, f.left.vec);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    f.cos_right = f.cos_katz_in = f.cos_katz_out = nan;
    if (with_right) {
        o.left = false;
        f.right = perron(op, o);
        f.cos_right = cosine(a, f.right.vec);
    }
    return f;
}

}  // namespace attnspec
