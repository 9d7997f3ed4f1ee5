// check_neumann (gpu_check.hpp): the cases of neumann_check_common.cpp with the twin on the
// device (gpu::closure_times, neumann_kernels, closure_times_mixed).
#include <vector>

#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/gpu/infsa/neumann_cuda.hpp"
#include "neumann_check.hpp"

namespace attnspec::gpu {

std::vector<TwinCase> check_neumann(Context& ctx, const GpuCheckOptions& opt) {
    NeumannTwin twin;
    twin.note = "device";
    twin.closure = [&ctx](const std::vector<Eigen::MatrixXd>& As, double g,
                          const std::vector<Eigen::MatrixXd>& Vs,
                          std::vector<NeumannSolveStats>* st) {
        return closure_times(ctx, As, g, Vs, st);
    };
    twin.kernels = [&ctx](const std::vector<Eigen::MatrixXd>& As, double g,
                          std::vector<NeumannSolveStats>* st) {
        return neumann_kernels(ctx, As, g, st);
    };
    twin.mixed = [&ctx](const Eigen::MatrixXd& A, double g, const Eigen::MatrixXd& V, int* it,
                        IrsLowest lowest, NeumannSolveStats* st) {
        return closure_times_mixed(ctx, A, g, V, it, lowest, st);
    };
    return neumann_cases(opt, twin);
}

}  // namespace attnspec::gpu
