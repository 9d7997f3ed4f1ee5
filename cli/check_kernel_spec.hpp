// check-kernel spec-attention's files (docs/cli/check-kernel.md): IN's arrays x, w_q, w_k, w_v
// (io/kernel_files.hpp's reader: NaN/Inf refused, missing arrays DataError naming them) and the
// stress case --generate writes (kernels/spec_attention_check.hpp, float32 members or float64
// for --dtype fp64, the case described in the `case` member as for the other operations).
// Kept apart from cmd_check_kernel.cpp, which parses the options and prints the verdict.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attnspec/io/kernel_files.hpp"
#include "attnspec/kernels/spec_attention_check.hpp"

namespace attnspec::cli {

// x, w_q, w_k, w_v of `path` into `p` (correction, lambda, mask and scale untouched), and its
// mask array under a boolean or additive p.mask (load_mask_input).
void load_spec_attention_inputs(const std::string& path, kernels::SpecAttentionProblem& p);

// The arrays of `p` by name, for the reproducer.
std::vector<NamedArray> spec_attention_arrays(const kernels::SpecAttentionProblem& p);

// Writes the stress case `name` of (seed, shape = (N, D, d) or (B, N, D, d)) at `dtype` to
// `path` (with a boolean or additive `mask`: also its array "mask", kernels::generate_mask for
// x's shape, (N, N) or (B, N, N)) and prints what it wrote (a line, or with `json` a JSON object).
void generate_spec_attention_case(const std::string& path, const std::string& name,
                                  std::uint64_t seed, const std::vector<std::int64_t>& shape,
                                  const std::string& dtype, kernels::MaskKind mask, bool json);

}  // namespace attnspec::cli
