// Report section and JSON of `attnspec gpu-check` (gpu/check/gpu_check.hpp: GpuCheckRun): the group
// /gpu_check, one row per TwinCase, and the GPU provenance (device, CUDA runtime / driver, cuBLAS
// / cuSOLVER versions, math mode). Layout: reports/SCHEMA.md, "attnspec gpu-check". HDF5 via
// io/h5.hpp of the core library. Host-only, in attnspec::gpu_host (gpu/src/check/gpu_check_io.cpp)
// beside the names of math modes and planted faults it writes: reads plain result structs, links
// no CUDA library.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "attnspec/base/json.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "attnspec/io/h5.hpp"

namespace attnspec::gpu {

// Root attributes for the report's Provenance::extra: gpu_device, gpu_sm, cuda_runtime,
// cuda_driver, cublas_version, cusolver_version, math_mode, math_mode_description.
std::vector<std::pair<std::string, std::string>> gpu_check_provenance(const GpuCheckRun& run);

// Creates the group `gpu_check` under `parent`: attributes (the provenance above, planted_fault,
// quick, seed, n_cases, n_disagree) and one dataset per column, one entry per case. Throws IoError.
void write_gpu_check_section(H5Group& parent, const GpuCheckRun& run);

// The same, as members of an open JSON object: "device", "math_mode", ..., "cases": [{...}].
void gpu_check_json(JsonWriter& j, const GpuCheckRun& run);

// "33x32x2" from {33, 32, 2}.
std::string shape_text(const std::vector<long>& shape);

}  // namespace attnspec::gpu
