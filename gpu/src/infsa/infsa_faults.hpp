// Planted faults (gpu_check.hpp PlantedFault) as the infsa kernels receive them: a plain int, so
// the ATTNSPEC_HD logic headers need no host header. Shared by linear_infsa_* and relu_kernel_*.
#pragma once

namespace attnspec::gpu::infsa_logic {

constexpr int kFaultNone = 0;
constexpr int kFaultOffByOneTile = 1;  // the last tile / chunk of a tiled loop is left out
constexpr int kFaultDroppedTerm = 2;   // one term of a reduction is left out

// Runner-only faults: planted by the CPU suite in a kernel body run on the CPU grid runner
// (attnspec/gpu/base/cpu_grid.hpp), and by `gpu-check --emulate --plant-fault index-math` /
// `no-barrier` (planted_fault_code(); gpu-check refuses them without --emulate). The
// Linear-InfSA body (linear_infsa_kernels.hpp) and the Perron tile body (relu_kernel_kernels.hpp)
// implement both; the other twins have their own (attention_kernels.hpp,
// jacobian_spectrum_kernels.hpp, svd_kernels.hpp, neumann_kernels.hpp).
constexpr int kFaultTokenStride = 3;  // index math: Linear-InfSA's rows walked one load (vector)
                                      // short of d; Perron's tiles staged row-major
constexpr int kFaultNoBarrier = 4;    // a block barrier left out

// Host only: the process-wide planted_fault() as one of the codes above
// (gpu/src/infsa/infsa_faults_common.cpp).
int planted_fault_code();

}  // namespace attnspec::gpu::infsa_logic
