// The kappa(J) twin's gpu-check cases (jacobian_spectrum_check_common.cpp), written once for the
// device check (jacobian_spectrum_check_cuda.cpp: check_jacobian_spectrum) and the emulated one
// (check_jacobian_spectrum_emulated): each run of the twin goes through JacobianSpectrumTwin.
// Host-only.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "attnspec/attention/attention.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/spectral/operator_spectrum.hpp"

namespace attnspec::gpu {

struct JacobianSpectrumTwin {
    std::string note;  // how the twin ran (last part of every case's note)
    std::function<OperatorSpectrum(const Head&)> run;
};

// The cases (quick: N 31/32/33, wide and tall, with and without biases; full adds 64 to 197),
// timed when opt.timings.
std::vector<TwinCase> jacobian_spectrum_cases(const GpuCheckOptions& opt,
                                              const JacobianSpectrumTwin& twin);

}  // namespace attnspec::gpu
