// gpu-check cases of the SpecA twin, written once for the device check
// (attention_check_cuda.cpp) and the emulated one (`gpu-check --emulate`,
// attention_check_common.cpp: the same kernel bodies on the CPU grid runner, the cuBLAS calls
// served by the CPU BLAS). Host-only.
#pragma once
#include <Eigen/Dense>
#include <functional>
#include <string>
#include <vector>

#include "attnspec/attention/attention.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"

namespace attnspec::gpu {

// The twin's forward of `m` in fp64 or fp32 (N x H d, as double).
using SpecAttentionRunFn = std::function<Eigen::MatrixXd(const MultiHead& m, bool fp32)>;

// Every case of check_spec_attention (shapes, instances from opt.seed, attnspec::multihead_forward
// as the reference, the a-priori spec_attention_tolerance) with `twin` as the twin; `note` goes
// before each case's own note.
std::vector<TwinCase> spec_attention_cases(const GpuCheckOptions& opt,
                                           const SpecAttentionRunFn& twin, const std::string& note);

}  // namespace attnspec::gpu
