// Internal: the run loop shared by the attention checks (regimes x seeded instances).
#pragma once
#include <chrono>
#include <functional>

#include "attnspec/proofs/attention_instances.hpp"

namespace attnspec::proofs {

CheckRun run_attention_check(const RunOptions& opt, const std::string& name,
                             const std::string& claim, const std::string& headline,
                             long per_default, const std::function<CheckResult(const Head&)>& fn);

}  // namespace attnspec::proofs
