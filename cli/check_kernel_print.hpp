// check-kernel's figures of one checked tensor (docs/cli/check-kernel.md, "Output"): the JSON
// members of a tensor and its text block. Kept apart from cmd_check_kernel.cpp, which parses the
// options and prints the verdict.
#pragma once
#include "attnspec/base/json.hpp"
#include "attnspec/kernels/attention_check.hpp"

namespace attnspec::cli {

// The figures of one output tensor (and its lse, when checked) as members of the open object.
void json_tensor(JsonWriter& j, const kernels::KernelCheckResult& r);

// The text block of one tensor (`several`: headed by its name, verdict and summary); `factor`
// the baseline rule's factor.
void print_tensor(const char* name, const kernels::KernelCheckResult& r, double factor,
                  bool several);

}  // namespace attnspec::cli
