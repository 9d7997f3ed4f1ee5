// `attnspec verify --shard i/n`: the --shard value and the deterministic split of a check selection
// over n shards, and the options text `report merge` compares to accept shards as parts of one run
// (the shard attributes themselves: report/shard.hpp). CPU only.
#pragma once
#include <string>
#include <vector>

#include "attnspec/proofs/registry.hpp"
#include "attnspec/report/shard.hpp"

namespace attnspec::cli {

// Parses "i/n" (0 <= i < n, 1 <= n <= 100000). Throws Error(Usage) naming --shard otherwise.
ShardSpec parse_shard(const std::string& text);

// Splits `todo` over `count` shards: checks by decreasing cost estimate (proofs::estimated_cost;
// ties: selection order), each to the shard with the least estimated cost so far (ties: the lowest
// index). Returns, per shard, the positions in `todo` it holds, in selection order. A shard may
// hold none (count > checks). Deterministic: depends only on the names, the options and count.
std::vector<std::vector<size_t>> plan_shards(const std::vector<const proofs::CheckInfo*>& todo,
                                             const proofs::RunOptions& opt, int count);

// The run options that decide a report's numbers, one "key=value" per line, in a fixed order:
// seed, trials, thorough, time budget, shape, regimes, kappa convention, search budget, embedded
// heads, dataset. Two runs with equal text and selection draw the same instances.
std::string shard_options_text(const proofs::RunOptions& opt);

}  // namespace attnspec::cli
