// `attnspec gpu-check`: every CUDA twin against its CPU reference. Each twin contributes one
// function `check_<stem>(Context&, const GpuCheckOptions&)` that runs its cases (sizes straddling
// 31/32/33 and the library block sizes, tall and wide, small to large N, each precision) and
// returns one TwinCase per (case, precision). The runner (gpu/src/check/gpu_check_cuda.cpp) calls
// them in the fixed order of twin_checks(); cli/cmd_gpu_check.cpp prints the table and writes it
// to HDF5 (io/, reports/SCHEMA.md "gpu_check").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attnspec/gpu/base/context.hpp"

namespace attnspec::gpu {

// Faults a test plants in a twin to prove gpu-check catches them. Read by the twins' host code
// through planted_fault(); none in every normal run.
enum class PlantedFault {
    none,
    off_by_one_tile,  // the last tile / block of a tiled loop is skipped
    dropped_term,     // one term of a sum is left out (e.g. the correction C in SpecA, one row
                      // of a reduction)
};
const char* to_string(PlantedFault f);
PlantedFault planted_fault_from_string(const std::string& s);  // throws Usage naming the value
PlantedFault planted_fault();                                  // process-wide, default none
// RAII: sets the process-wide fault for its lifetime (tests, `gpu-check --plant-fault`).
class ScopedPlantedFault {
  public:
    explicit ScopedPlantedFault(PlantedFault f);
    ~ScopedPlantedFault();
    ScopedPlantedFault(const ScopedPlantedFault&) = delete;
    ScopedPlantedFault& operator=(const ScopedPlantedFault&) = delete;

  private:
    PlantedFault previous_;
};

struct GpuCheckOptions {
    std::vector<std::string> twins;  // empty: all, else names from twin_checks()
    bool quick = false;              // smallest case set (CI-sized); full straddles large N too
    std::uint64_t seed = 1;
    bool timings = true;  // time GPU and CPU per case (median of a few runs)
};

struct TwinCase {
    std::string twin;         // "linear_infsa", "spec_attention", "jacobian_spectrum", "svd",
                              // "neumann", "perron_tiled"
    std::string case_name;    // e.g. "N=33 d=32 H=2 tall"
    std::string precision;    // "fp64", "fp32", "bf16-in/fp32-acc", "fp16-in/fp32-acc", "irs"
    std::vector<long> shape;  // the case's sizes, in the order its case_name names them
    double max_abs_err = 0;   // max |gpu − cpu| over the compared quantity
    double max_rel_err = 0;   // one convention: max|gpu − cpu| / max(max|cpu|, max|gpu|)
    double tolerance = 0;     // compared against max_rel_err unless tolerance_on_abs
    bool tolerance_on_abs = false;
    std::string tolerance_reason;  // "bound: 8·√N·u_fp32 (sum of N terms)" or "measured worst
                                   // ratio 3.1 on H200, headroom 10×"
    double gpu_seconds = -1;       // median; -1 when not timed
    double cpu_seconds = -1;
    bool agrees = false;  // max error within tolerance AND every value finite
    std::string note;     // e.g. the refinement's backward error for IRS
};

using TwinCheckFn = std::vector<TwinCase> (*)(Context&, const GpuCheckOptions&);
struct TwinCheck {
    const char* name;
    TwinCheckFn run;
};
// The registry, in the order gpu-check runs them.
const std::vector<TwinCheck>& twin_checks();

// Per-twin entries (one per twin source file; CPU-only builds do not define them — the runner's
// stub throws NoDevice first).
std::vector<TwinCase> check_linear_infsa(Context& ctx, const GpuCheckOptions& opt);
std::vector<TwinCase> check_spec_attention(Context& ctx, const GpuCheckOptions& opt);
std::vector<TwinCase> check_jacobian_spectrum(Context& ctx, const GpuCheckOptions& opt);
std::vector<TwinCase> check_svd(Context& ctx, const GpuCheckOptions& opt);
std::vector<TwinCase> check_neumann(Context& ctx, const GpuCheckOptions& opt);
std::vector<TwinCase> check_perron_tiled(Context& ctx, const GpuCheckOptions& opt);

// Shared comparison: fills max_abs_err / max_rel_err / agrees from two equally-sized arrays
// (host memory) with the given tolerance (on the relative error unless on_abs). A NaN/Inf on
// either side never agrees.
void compare_into(TwinCase& c, const double* cpu, const double* gpu, long n, double tolerance,
                  bool on_abs, std::string reason);

}  // namespace attnspec::gpu
