// Kernels of the kappa(J) twin's Gram assembly: the factors P^c and the per-block-column combine,
// the bodies of jacobian_spectrum_kernels.hpp (written once, also run on the CPU grid runner)
// launched through DeviceGrid. The GEMMs and the eigensolve are cuBLAS / cuSOLVER calls in the
// host sequence (jacobian_spectrum_sequence.hpp).
#include "../base/device_grid.hpp"
#include "jacobian_spectrum_kernels.hpp"
#include "jacobian_spectrum_launch.hpp"

namespace attnspec::gpu::attn {

void launch_p_factors(const double* S, const double* V, const double* A, double* P_all, long N,
                      long d, CUstream_st* stream) {
    DeviceGrid grid{stream};
    gram_logic::launch_p_factors(grid, S, V, A, P_all, N, d);
}

void launch_gram_combine(double* G, long Nd, const double* XX, const double* QQ, const double* VV,
                         const double* T, long ldT, long N, long cp, bool skip_last_tile,
                         bool drop_v_term, CUstream_st* stream) {
    DeviceGrid grid{stream};
    gram_logic::launch_gram_combine(grid, G, Nd, XX, QQ, VV, T, ldT, N, cp, skip_last_tile,
                                    drop_v_term);
}

}  // namespace attnspec::gpu::attn
