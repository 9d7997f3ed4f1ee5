// The Jacobian analysis of a set of attention heads (`attnspec jacobian`): per head the dense J
// (weights, SC Thm 3.3) or J_X (input) from the structured closed form (attention/jacobian.hpp),
// its Frobenius and max norms, block norms ||J_Q||, ||J_K||, ||J_V||, timing, and optionally the
// spectrum (sigma_max, sigma_min, kappa with enclosures) through jacobian_spectrum /
// operator_spectrum; the layer norm when the heads share X. Result structs only;
// report/jacobian_section.hpp writes them. CPU only.
#pragma once
#include <array>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "attnspec/attention/attention.hpp"
#include "attnspec/spectral/operator_spectrum.hpp"

namespace attnspec {

enum class JacobianWrt { weights, input };   // J = [J_Q, J_K, J_V] (Nd x 3Dd) or J_X (Nd x ND)
const char* to_string(JacobianWrt w);        // "weights", "input"
const char* jacobian_symbol(JacobianWrt w);  // "J", "J_X"

struct JacobianOptions {
    JacobianWrt wrt = JacobianWrt::weights;
    double max_bytes = 4.0 * (1ull << 30);     // refuse a dense J above this (parameter max_bytes)
    double store_bytes = 16.0 * (1ull << 20);  // keep J for the report up to this (store_bytes)
    bool store = false;         // keep J for the report whatever its size (up to max_bytes)
    bool spectrum = false;      // also run the spectral engine per head
    LargeSvdOptions svd;        // its options (spectrum only)
    EngineProgressFn progress;  // optional: forming dense J (stage "forming", jacobian_weights)
};

// What will be formed, decided from the sizes before any work.
struct JacobianPlan {
    JacobianWrt wrt = JacobianWrt::weights;
    double bytes = 0;  // dense J of the largest head
    // J is formed. Without the spectrum always (its norms need it). With the spectrum only when
    // it is kept (store, or bytes <= store_bytes and <= max_bytes): the spectral engine never
    // needs dense J (J J^T from the factors, matrix-free J v and J^T u).
    bool dense = true;
    bool store = true;  // J is handed to the sink for the report (dense; store or <= store_bytes)
    bool fits = true;   // bytes <= max_bytes
    std::string why_not_dense;   // why J is not formed; empty when it is
    std::string why_not_stored;  // why J is not kept for the report; empty when it is
};

struct HeadJacobian {
    Eigen::Index rows = 0, cols = 0;  // shape of J (formed or not)
    // ||J||_F: from J, or when J is not formed from a full Gram spectrum (sqrt of the sum of its
    // eigenvalues); NaN when neither is available (then it is not printed nor reported).
    double frobenius = std::numeric_limits<double>::quiet_NaN();
    double max_abs = std::numeric_limits<double>::quiet_NaN();
    double seconds = 0;                        // forming J
    bool has_blocks = false;                   // wrt weights and J formed
    std::array<double, 3> frobenius_blocks{};  // ||J_Q||_F, ||J_K||_F, ||J_V||_F
    bool has_spectrum = false;
    OperatorSpectrum spectrum;
};

struct JacobianAnalysis {
    JacobianPlan plan;
    std::vector<HeadJacobian> heads;
    bool shared_X = false;
    // ||full-layer J||_F = sqrt(sum_h ||J_h||_F^2) (block diagonal for the weights, stacked for
    // the input); only for heads sharing X (NaN otherwise, and NaN when J is not formed).
    double frobenius_layer = std::numeric_limits<double>::quiet_NaN();
    double seconds = 0;  // sum of the per-head seconds
};

// Called after each head with its result and J (empty when not stored): the caller writes J
// without the analysis holding every head's J at once.
using JacobianSink =
    std::function<void(std::size_t h, const HeadJacobian& r, const Eigen::MatrixXd& J)>;

// O(1). Throws DataError (parameter max_bytes) when a dense J is needed (no spectrum, or
// JacobianOptions::store) and the largest head's exceeds max_bytes, and (parameter store_bytes /
// max_bytes) for negative limits.
JacobianPlan plan_jacobians(const std::vector<Head>& heads, const JacobianOptions& opt);

// Cost per head: forming J ~ N d (3 D d) (weights) or N d (N D) (input) entries, each O(N + D + d)
// flops; the spectrum as in jacobian_spectrum / operator_spectrum. Memory: one head's J at a time.
// Heads must be validated (Head::validate) with J evaluated at W + C. Throws as plan_jacobians,
// and DataError from the engines (non-finite products, Gram memory above svd.max_bytes).
JacobianAnalysis analyse_jacobians(const std::vector<Head>& heads, bool shared_X,
                                   const JacobianOptions& opt, const JacobianSink& sink = {});

}  // namespace attnspec
