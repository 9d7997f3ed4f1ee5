// The SVD twin's gpu-check cases (svd_check_common.cpp), written once for the device check
// (svd_check_cuda.cpp: check_svd) and the emulated one (check_svd_emulated): each run of the
// twin goes through SvdTwin, its functions with the signatures of svd_cuda.hpp less the Context.
// Host-only.
#pragma once
#include <Eigen/Dense>
#include <functional>
#include <string>
#include <vector>

#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/spectral/svd.hpp"

namespace attnspec::gpu {

struct SvdTwin {
    std::string note;  // how the twin ran (first part of every case's note)
    std::function<SvdResult(const Eigen::MatrixXd&, const SvdOptions&)> single;
    std::function<std::vector<SvdResult>(const std::vector<Eigen::MatrixXd>&, const SvdOptions&)>
        batched;
};

// The cases (quick: 31/32/33 square, tall, wide, vectors, the three batched paths; full adds
// 1024 to 4096), timed when opt.timings.
std::vector<TwinCase> svd_cases(const GpuCheckOptions& opt, const SvdTwin& twin);

}  // namespace attnspec::gpu
