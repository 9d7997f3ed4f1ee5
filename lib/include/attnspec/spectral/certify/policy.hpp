// When and which certificate of sigma_min the large-scale engine (operator_spectrum) runs: the
// mode and method of LargeSvdOptions, with their names for the command line. The policy itself is
// lib/src/spectral/certify/policy.cpp (proofs/spectral_enclosure.md §6-8). CPU only.
#pragma once
#include <string>

namespace attnspec {

// When the engine (operator_spectrum) certifies sigma_min: auto (when its own lower bound is 0
// or wider than 1e-6 relative), always, never.
enum class CertifyMode { auto_select, always, never };
const char* to_string(CertifyMode m);                        // "auto", "always", "never"
CertifyMode certify_mode_from_string(const std::string& s);  // Usage error otherwise

// Which certificate the engine tries (LargeSvdOptions::certify_method): auto = double-double (§8)
// where it fits, else plain (§6), then deflated (§7) when still needed; or exactly one of them.
enum class CertifyMethod { auto_select, double_double, plain, deflated };

}  // namespace attnspec
