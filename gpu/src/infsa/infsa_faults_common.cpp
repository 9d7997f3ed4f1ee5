// The process-wide planted fault as the infsa kernels' int code (infsa_faults.hpp).
#include "attnspec/gpu/check/gpu_check.hpp"
#include "infsa_faults.hpp"

namespace attnspec::gpu::infsa_logic {

int planted_fault_code() {
    switch (planted_fault()) {
        case PlantedFault::none:
            return kFaultNone;
        case PlantedFault::off_by_one_tile:
            return kFaultOffByOneTile;
        case PlantedFault::dropped_term:
            return kFaultDroppedTerm;
        case PlantedFault::index_math:
            return kFaultTokenStride;
        case PlantedFault::no_barrier:
            return kFaultNoBarrier;
    }
    return kFaultNone;
}

}  // namespace attnspec::gpu::infsa_logic
