// gpu-check cases of the perron_tiled twin, written once for the device check
// (relu_kernel_check_cuda.cpp) and the emulated one (`gpu-check --emulate`,
// relu_kernel_check_common.cpp: the same kernel body on the CPU grid runner). Host-only.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/gpu/infsa/relu_kernel_cuda.hpp"

namespace attnspec::gpu {

// Makes the twin's operator on Q, K (N x d) with column tiles of `tile`.
using ReluOpFactory = std::function<std::unique_ptr<ReluRowsOp>(
    const Eigen::MatrixXd& Q, const Eigen::MatrixXd& K, Eigen::Index tile)>;

// Every case of check_perron_tiled (shapes, inputs from opt.seed, attnspec::ReluKernelOp as the
// reference, the a-priori tolerances of relu_kernel_common.hpp) with `make_twin` as the twin;
// `note` is added to each case's.
std::vector<TwinCase> perron_tiled_cases(const GpuCheckOptions& opt, const ReluOpFactory& make_twin,
                                         const std::string& note);

}  // namespace attnspec::gpu
