#include "attnspec/proofs/registry.hpp"

#include "attnspec/proofs/thm_3_5.hpp"
#include "attnspec/proofs/infsa_checks.hpp"

namespace attnspec::proofs {

const std::vector<CheckInfo>& registry() {
    static const std::vector<CheckInfo> checks = {
        {"thm3.5", "SVD correction: sigma_i(W+C) = sigma_i + sigma_1, kappa(W+C) = 2s1/(s1+sr) <= 2",
         "proofs/thm_3_5.md", run_thm_3_5},
        {"infsa.neumann", "IS Neumann kernel: LU residual, N >= I >= 0, AN = NA, truncation bound",
         "proofs/infsa_neumann.md", run_infsa_neumann},
        {"infsa.perron", "IS Perron: Collatz-Wielandt enclosure of rho(A_hat) vs EigenSolver",
         "proofs/infsa_neumann.md", run_infsa_perron},
    };
    return checks;
}

const CheckInfo* find_check(const std::string& name) {
    for (const auto& c : registry())
        if (c.name == name) return &c;
    return nullptr;
}

std::uint64_t instance_seed(std::uint64_t master, std::uint64_t i) {
    std::uint64_t z = master + 0x9E3779B97F4A7C15ull * (i + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

}  // namespace attnspec::proofs
