// Random attention heads for tests: one builder over attention/attention.hpp's random_head.
#pragma once
#include <cstdint>
#include <string>

#include "attnspec/attention/attention.hpp"

namespace attnspec::test {

// The random head of N tokens, width D and head width d drawn from `seed` (random_head), with the
// correction `corr` (CorrectionSpec::parse), logit scale `scale` and token distribution `dist`.
inline Head random_test_head(Eigen::Index N, Eigen::Index D, Eigen::Index d, std::uint64_t seed,
                             const std::string& corr = "none", LogitScale scale = LogitScale::one,
                             const std::string& dist = "gaussian") {
    RandomSpec rs;
    rs.N = N, rs.D = D, rs.d = d, rs.seed = seed, rs.scale = scale, rs.token_dist = dist;
    Head h = random_head(rs);
    apply_correction(h, CorrectionSpec::parse(corr));
    return h;
}

}  // namespace attnspec::test
