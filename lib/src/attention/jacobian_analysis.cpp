// Per-head Jacobian norms, block norms, timings and spectra (attention/jacobian_analysis.hpp).
#include "attnspec/attention/jacobian_analysis.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "attnspec/attention/jacobian.hpp"
#include "attnspec/attention/jacobian_spectrum.hpp"
#include "attnspec/base/errors.hpp"

namespace attnspec {

namespace {

double dense_bytes(const Head& h, JacobianWrt wrt) {
    return wrt == JacobianWrt::weights ? jacobian_weights_bytes(h.N(), h.D(), h.d())
                                       : jacobian_input_bytes(h.N(), h.D(), h.d());
}

void require_limit(double bytes, const char* parameter) {
    if (!(bytes >= 0))
        throw Error(ExitCode::DataError,
                    std::string(parameter) + " = " + std::to_string(bytes) + " must be >= 0",
                    parameter);
}

}  // namespace

const char* to_string(JacobianWrt w) { return w == JacobianWrt::weights ? "weights" : "input"; }
const char* jacobian_symbol(JacobianWrt w) { return w == JacobianWrt::weights ? "J" : "J_X"; }

JacobianPlan plan_jacobians(const std::vector<Head>& heads, const JacobianOptions& opt) {
    require_limit(opt.max_bytes, "max_bytes");
    require_limit(opt.store_bytes, "store_bytes");
    if (heads.empty()) fail_data("attention input: no heads (H = 0)");
    JacobianPlan p;
    p.wrt = opt.wrt;
    for (const Head& h : heads) p.bytes = std::max(p.bytes, dense_bytes(h, opt.wrt));
    const std::string what = std::string("dense ") + jacobian_symbol(opt.wrt);
    // The spectrum needs no dense J (J J^T and matrix-free products): J is formed only to be
    // kept, when asked for (store) or when it is small (store_bytes).
    const bool small = p.bytes <= opt.store_bytes && p.bytes <= opt.max_bytes;
    p.dense = !opt.spectrum || opt.store || small;
    p.fits = p.bytes <= opt.max_bytes;
    if (!p.dense)
        p.why_not_dense = what + " (" + human_bytes(p.bytes) +
                          ") is not needed: the spectrum uses " + jacobian_symbol(opt.wrt) + " " +
                          jacobian_symbol(opt.wrt) + "^T and matrix-free products; above " +
                          (p.fits ? "store_bytes = " + human_bytes(opt.store_bytes)
                                  : "max_bytes = " + human_bytes(opt.max_bytes)) +
                          ", not formed";
    else if (!(p.bytes <= opt.max_bytes))
        throw Error(ExitCode::DataError,
                    what + " of one head would need " + human_bytes(p.bytes) +
                        ", above max_bytes = " + human_bytes(opt.max_bytes),
                    "max_bytes");
    p.store = p.dense && (opt.store || p.bytes <= opt.store_bytes);
    if (!p.dense)
        p.why_not_stored = "not formed";
    else if (!p.store)
        p.why_not_stored = what + " (" + human_bytes(p.bytes) +
                           ") is above store_bytes = " + human_bytes(opt.store_bytes) +
                           ": formed for its norms, not kept";
    return p;
}

JacobianAnalysis analyse_jacobians(const std::vector<Head>& heads, bool shared_X,
                                   const JacobianOptions& opt, const JacobianSink& sink) {
    JacobianAnalysis a;
    a.plan = plan_jacobians(heads, opt);
    a.shared_X = shared_X;
    const bool wrt_w = opt.wrt == JacobianWrt::weights;
    const bool dense = a.plan.dense;
    const Eigen::MatrixXd none;  // handed to the sink when J is not stored (no copy of J)
    double layer = 0;
    for (std::size_t h = 0; h < heads.size(); ++h) {
        const Head& hd = heads[h];
        const Eigen::Index N = hd.N(), D = hd.D(), d = hd.d();
        HeadJacobian r;
        r.rows = N * d;
        r.cols = wrt_w ? 3 * D * d : N * D;
        const auto t0 = std::chrono::steady_clock::now();
        const Eigen::MatrixXd J = !dense  ? Eigen::MatrixXd()
                                  : wrt_w ? jacobian_weights(hd, opt.max_bytes, opt.progress)
                                          : jacobian_input(hd, opt.max_bytes, opt.progress);
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (dense) r.frobenius = J.norm(), r.max_abs = J.cwiseAbs().maxCoeff();
        if (opt.spectrum) {
            if (wrt_w) {
                r.spectrum = jacobian_spectrum(hd, opt.svd);
            } else {
                const auto tg = std::chrono::steady_clock::now();
                const JacobianXOperator op(hd);
                const Eigen::MatrixXd G =
                    jacobian_x_gram_outer(hd, opt.svd.max_bytes, opt.svd.progress);
                const double gram_seconds =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - tg).count();
                r.spectrum = operator_spectrum(op, &G, opt.svd);
                r.spectrum.gram_seconds = gram_seconds;
            }
            r.has_spectrum = true;
            // J not formed: ||J||_F^2 = trace(J J^T), the sum of all Gram eigenvalues in full
            // mode, the trace of the Gram matrix in extremal mode.
            if (!dense)
                r.frobenius = r.spectrum.gram_sigma.size() == r.rows
                                  ? r.spectrum.gram_sigma.norm()
                                  : std::sqrt(std::max(0.0, r.spectrum.gram_trace));
        }
        if (wrt_w && dense) {
            r.has_blocks = true;
            for (int b = 0; b < 3; ++b)
                r.frobenius_blocks[b] = J.middleCols(b * D * d, D * d).norm();
        }
        layer += r.frobenius * r.frobenius;
        a.seconds += r.seconds;
        a.heads.push_back(std::move(r));
        if (sink) sink(h, a.heads.back(), a.plan.store ? J : none);
    }
    if (shared_X) a.frobenius_layer = std::sqrt(layer);
    return a;
}

}  // namespace attnspec
