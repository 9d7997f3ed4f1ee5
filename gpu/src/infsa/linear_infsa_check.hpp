// gpu-check cases of the Linear-InfSA twin, written once for the device check
// (linear_infsa_check_cuda.cpp) and the emulated one (`gpu-check --emulate`,
// linear_infsa_check_common.cpp: the same kernel bodies on the CPU grid runner). Host-only.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/gpu/infsa/linear_infsa_cuda.hpp"

namespace attnspec::gpu {

// Runs the twin on H heads [H][N][d] in `fmt` (host memory: doubles, floats or 16-bit bit
// patterns) and writes p, [H][d], as the twin's host entries return it (float32 and 16-bit
// formats: rounded to float).
using LinearInfsaRun =
    std::function<void(InputFormat fmt, const void* Q, const void* K, const void* V, long H, long N,
                       long d, const LinearInfsaOptions& opt, double* p)>;

// Every case of check_linear_infsa (shapes, precisions, inputs from opt.seed, the float64
// reference, the a-priori tolerance linear_infsa_error_bound) with `twin` as the twin; `note`
// goes to each case.
std::vector<TwinCase> linear_infsa_cases(const GpuCheckOptions& opt, const LinearInfsaRun& twin,
                                         const std::string& note);

}  // namespace attnspec::gpu
