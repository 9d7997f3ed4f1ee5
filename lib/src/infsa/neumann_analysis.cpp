// analyze_neumann: the kernel, invariants, norms, centralities and truncation table of one Â
// (proofs/infsa_neumann.md, proofs/infsa_absorbing.md), in the order `attnspec neumann` used.
#include "attnspec/infsa/neumann_analysis.hpp"

#include <string>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/memory.hpp"
#include "attnspec/spectral/svd.hpp"
#include "infsa_internal.hpp"

namespace attnspec {

void check_neumann_options(const NeumannAnalysisOptions& opt) {
    detail::check_gamma(opt.gamma);
    check_truncation_target(opt.target);
    for (int K : opt.orders)
        if (K < 0)
            throw Error(ExitCode::DataError,
                        "truncation order K = " + std::to_string(K) + " must be >= 0", "K");
}

double neumann_memory_bytes(double n, double d_h, double v_cols) {
    // Peak of analyze_neumann: Â, the LU, N and the invariants' products and temporaries (at most
    // 7 N x N at once), the truncated series and the SVD of N - N_K (about 6): 12 N x N bound it;
    // plus Q, K (N x d_h) and V, C V (N x v).
    return 8.0 * (12.0 * n * n + 2.0 * n * d_h + 2.0 * n * v_cols);
}

double neumann_flops(double n, const std::vector<int>& orders) {
    double f = (2.0 / 3.0 + 2.0 + 8.0) * n * n * n;
    for (int K : orders) f += (2.0 * K + 22.0) * n * n * n;  // series by Horner, SVD of N - N_K
    return f;
}

void check_neumann_memory(double n, double d_h, double v_cols) {
    check_allocation(neumann_memory_bytes(n, d_h, v_cols), memory_limit_bytes(),
                     "the Neumann analysis at N = " + detail::num(n) +
                         (d_h > 0 ? ", d_h = " + detail::num(d_h) : std::string()),
                     "max_bytes");
}

NeumannAnalysis analyze_neumann(const Eigen::MatrixXd& A_hat, const NeumannAnalysisOptions& opt,
                                const Eigen::MatrixXd& V) {
    check_neumann_options(opt);
    if (V.size() && V.rows() != A_hat.rows())
        fail_data("V has " + std::to_string(V.rows()) +
                  " rows, expected N = " + std::to_string(A_hat.rows()));
    NeumannAnalysis a;
    a.n = A_hat.rows();
    a.gamma = opt.gamma;
    a.target = opt.target;
    check_neumann_memory(double(a.n), 0, double(V.cols()));
    const DenseNonnegOp valid(A_hat);  // square, finite, >= 0 (DataError) before any norm
    // Norms and the order K first (O(N^2) per Perron step): a target that cannot be met is
    // refused before the O(N^3) work.
    a.norms = affinity_norms(A_hat);
    const double s_hi = a.norms.norm2.hi;
    a.K_for_target = truncation_order(opt.gamma, s_hi, opt.target);
    const NeumannKernel nk(A_hat, opt.gamma);  // refuses gamma rho >= 1
    const Eigen::MatrixXd N = nk.kernel();
    a.invariants = neumann_invariants(nk, A_hat, N);
    a.centralities = centralities(A_hat, nk);
    for (int K : opt.orders) {
        const Eigen::MatrixXd E = N - neumann_truncated(A_hat, opt.gamma, K);
        a.truncation.push_back({K, truncation_bound(opt.gamma, s_hi, K), svd(E).sigma[0]});
    }
    if (V.size()) a.closure_times_V = nk.closure_times(V);
    return a;
}

}  // namespace attnspec
