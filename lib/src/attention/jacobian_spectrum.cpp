// jacobian_spectrum: the large-scale engine applied to one attention head's weight Jacobian.
#include "attnspec/attention/jacobian_spectrum.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "attnspec/attention/attention.hpp"
#include "attnspec/attention/jacobian.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/base/rounding.hpp"

namespace attnspec {

OperatorSpectrum jacobian_spectrum(const Head& h, const LargeSvdOptions& opt) {
    h.validate("jacobian_spectrum");
    const Eigen::Index N = h.N(), D = h.D(), d = h.d(), rows = N * d;
    // Gram + factor + copy (engine) on top of the Gram assembly's own result.
    check_allocation(3.0 * jacobian_gram_bytes(N, d), opt.max_bytes,
                     "kappa(J) for a (" + std::to_string(N) + ", " + std::to_string(D) + ", " +
                         std::to_string(d) + ") head (Gram " + std::to_string(rows) + "^2)",
                     "max_bytes");
    LargeSvdOptions o = opt;
    if (o.product_rel_error <= 0) {
        const double generic = 4 * std::sqrt(static_cast<double>(rows + 3 * D * d)) * kUnitRoundoff;
        // A bias adds one term to each entry of Q, K, V (jacobian.hpp, running-error scale).
        const Eigen::Index n = N + D + d + 3 + (h.biased() ? 1 : 0);
        o.product_rel_error = std::max(generic, static_cast<double>(n) * kUnitRoundoff);
    }
    // the double-double certificate (§8) takes J~ J~^T from the factors, not the rows of J
    o.certify.dd_gram = [&h, &opt](int threads) {
        return jacobian_gram_dd(h, threads, opt.max_bytes);
    };
    o.certify.dd_gram_updates = jacobian_gram_dd_updates(N, D, d);
    o.certify.dd_gram_bytes = jacobian_gram_dd_bytes(N, d);
    const auto t0 = std::chrono::steady_clock::now();
    const JacobianOperator J(h);
    const Eigen::MatrixXd G = jacobian_gram_outer(h, opt.max_bytes, opt.progress);
    const double gram_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    OperatorSpectrum s = operator_spectrum(J, &G, o);
    s.gram_seconds = gram_seconds;
    s.notes.emplace_back("J = [J_Q, J_K, J_V] at W + C (SC Thm 3.3); G from jacobian_gram_outer");
    return s;
}

}  // namespace attnspec
