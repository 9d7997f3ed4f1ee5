// The Neumann twin's gpu-check cases (neumann_check_common.cpp), written once for the device
// check (neumann_check_cuda.cpp: check_neumann) and the emulated one (check_neumann_emulated):
// each run of the twin goes through NeumannTwin, its functions with the signatures of
// neumann_cuda.hpp less the Context. Host-only.
#pragma once
#include <Eigen/Dense>
#include <functional>
#include <string>
#include <vector>

#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/gpu/infsa/neumann_cuda.hpp"

namespace attnspec::gpu {

struct NeumannTwin {
    std::string note;  // how the twin ran (first part of every case's note)
    std::function<std::vector<Eigen::MatrixXd>(const std::vector<Eigen::MatrixXd>&, double,
                                               const std::vector<Eigen::MatrixXd>&,
                                               std::vector<NeumannSolveStats>*)>
        closure;
    std::function<std::vector<Eigen::MatrixXd>(const std::vector<Eigen::MatrixXd>&, double,
                                               std::vector<NeumannSolveStats>*)>
        kernels;
    std::function<Eigen::MatrixXd(const Eigen::MatrixXd&, double, const Eigen::MatrixXd&, int*,
                                  IrsLowest, NeumannSolveStats*)>
        mixed;
};

// The cases (quick: N 31/32/33/256 closures, one kernel, IRS fp32 and fp16 at 256; full adds
// 1024 and 4096), timed when opt.timings.
std::vector<TwinCase> neumann_cases(const GpuCheckOptions& opt, const NeumannTwin& twin);

}  // namespace attnspec::gpu
