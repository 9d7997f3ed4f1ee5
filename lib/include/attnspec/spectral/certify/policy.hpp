// When and which certificate of sigma_min the large-scale engine (operator_spectrum) runs: the
// one set of certification options, CertifyOptions (LargeSvdOptions::certify), carried unchanged
// from `jacobian --certify` (and the Python package's certify=) to the certificate. The policy
// itself is lib/src/spectral/certify/policy.cpp (proofs/spectral_enclosure.md §6-8). CPU only.
#pragma once
#include <functional>
#include <string>

#include "attnspec/spectral/certify/double_double.hpp"

namespace attnspec {

// When the engine (operator_spectrum) certifies sigma_min: auto (when its own lower bound is 0
// or wider than 1e-6 relative, and the work is under auto's caps), always, never.
enum class CertifyMode { auto_select, always, never };
const char* to_string(CertifyMode m);                        // "auto", "always", "never"
CertifyMode certify_mode_from_string(const std::string& s);  // Usage error otherwise

// Which certificate the engine tries: auto = double-double (§8) where it fits, else plain (§6),
// then deflated (§7) when still needed; or exactly one of them (benchmarks and tests).
enum class CertifyMethod { auto_select, double_double, plain, deflated };

// The certification options of the engine. The default, mode auto, is the one default of the
// library, the CLI (`jacobian --certify`) and the Python package; callers that want the engine's
// own enclosure only (the theorem checks of `verify`, whose verdicts rest on it, and benchmarks of
// the engine) say never.
struct CertifyOptions {
    CertifyMode mode = CertifyMode::auto_select;
    CertifyMethod method = CertifyMethod::auto_select;
    // Optional: the double-double certificate's Gram from the operator's structure (J~ J~^T with
    // its error bound; attention/jacobian_spectrum passes jacobian_gram_dd), used instead of the
    // rows of J, which need rows x cols doubles; its work (multiply-adds) and bytes, for auto's
    // cap, the memory check and the notice. The argument is the thread count.
    std::function<DdGram(int)> dd_gram;
    double dd_gram_updates = 0, dd_gram_bytes = 0;
};

}  // namespace attnspec
