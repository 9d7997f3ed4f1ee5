// analyze_neumann: the kernel, invariants, norms, centralities and truncation table of one Â
// (proofs/infsa_neumann.md, proofs/infsa_absorbing.md), in the order `attnspec neumann` used.
#include "attnspec/infsa/neumann_analysis.hpp"

#include <string>

#include "attnspec/base/errors.hpp"
#include "attnspec/spectral/svd.hpp"
#include "infsa_internal.hpp"

namespace attnspec {

void check_neumann_options(const NeumannAnalysisOptions& opt) {
    detail::check_gamma(opt.gamma);
    if (!(opt.target > 0))
        throw Error(ExitCode::DataError,
                    "truncation target = " + detail::num(opt.target) + " must be > 0", "target");
    for (int K : opt.orders)
        if (K < 0)
            throw Error(ExitCode::DataError,
                        "truncation order K = " + std::to_string(K) + " must be >= 0", "K");
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
    const NeumannKernel nk(A_hat, opt.gamma);  // refuses gamma rho >= 1
    const Eigen::MatrixXd N = nk.kernel();
    a.invariants = neumann_invariants(nk, A_hat, N);
    a.norms = affinity_norms(A_hat);
    a.centralities = centralities(A_hat, nk);
    const double s_hi = a.norms.norm2.hi;
    for (int K : opt.orders) {
        const Eigen::MatrixXd E = N - neumann_truncated(A_hat, opt.gamma, K);
        a.truncation.push_back({K, truncation_bound(opt.gamma, s_hi, K), svd(E).sigma[0]});
    }
    a.K_for_target = truncation_order(opt.gamma, s_hi, opt.target);
    if (V.size()) a.closure_times_V = nk.closure_times(V);
    return a;
}

}  // namespace attnspec
