// Host logic of the Neumann twin that needs no device (both builds): ||I - gamma Â||_F and the
// backward error of a host solve through the device's per-element functions. The entries of a
// build without CUDA: infsa_stub.cpp.
#include <cmath>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/gpu/infsa/neumann_cuda.hpp"
#include "neumann_logic.hpp"

namespace attnspec::gpu {

const char* to_string(IrsLowest p) {
    switch (p) {
        case IrsLowest::fp32:
            return "fp32";
        case IrsLowest::fp16:
            return "fp16";
        case IrsLowest::bf16:
            return "bf16";
        case IrsLowest::tf32:
            return "tf32";
    }
    return "fp32";
}

double identity_minus_gamma_norm(const Eigen::MatrixXd& A_hat, double gamma) {
    const long n = A_hat.rows();
    double s = 0;
    for (long j = 0; j < A_hat.cols(); ++j)
        for (long i = 0; i < n; ++i) {
            const double m = neumann_logic::identity_minus_gamma(A_hat(i, j), gamma, i, j, -1);
            s += m * m;
        }
    return std::sqrt(s);
}

double solve_backward_error(const Eigen::MatrixXd& A_hat, double gamma, const Eigen::MatrixXd& X,
                            const Eigen::MatrixXd& B) {
    if (A_hat.rows() != A_hat.cols() || X.rows() != A_hat.rows() || B.rows() != X.rows() ||
        B.cols() != X.cols())
        fail_data("solve_backward_error: shapes of A_hat, X and B disagree");
    const Eigen::MatrixXd GAX = gamma * (A_hat * X);
    Eigen::MatrixXd R(X.rows(), X.cols());
    for (long t = 0; t < R.size(); ++t)
        R.data()[t] = neumann_logic::residual_entry(B.data()[t], X.data()[t], GAX.data()[t]);
    return neumann_logic::backward_error(R.norm(), identity_minus_gamma_norm(A_hat, gamma),
                                         X.norm(), B.norm());
}

Eigen::MatrixXd row_stochastic_affinity(long n, std::uint64_t seed) {
    Rng rng(seed);
    Eigen::MatrixXd A(n, n);
    for (long j = 0; j < n; ++j)
        for (long i = 0; i < n; ++i) A(i, j) = rng.uniform();
    for (long i = 0; i < n; ++i) A.row(i) /= A.row(i).sum();
    return A;
}

}  // namespace attnspec::gpu
