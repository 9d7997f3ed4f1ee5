// `attnspec gpu-check`: every CUDA twin against its CPU reference. Each twin contributes one
// function `check_<stem>(Context&, const GpuCheckOptions&)` that runs its cases (sizes straddling
// 31/32/33 and the library block sizes, tall and wide, small to large N, each precision) and
// returns one TwinCase per (case, precision). The runner (gpu/src/check/gpu_check_cuda.cpp) calls
// them in the fixed order of twin_checks(); cli/cmd_gpu_check.cpp prints the table and writes it
// to HDF5 (io/, reports/SCHEMA.md "gpu_check").
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "attnspec/gpu/base/context.hpp"
#include "attnspec/gpu/base/device.hpp"

namespace attnspec::gpu {

// Faults a test plants in a twin to prove gpu-check catches them. Read by the twins' host code
// through planted_fault(); none in every normal run.
enum class PlantedFault {
    none,
    off_by_one_tile,  // the last tile / block of a tiled loop is skipped
    dropped_term,     // one term of a sum is left out (e.g. the correction C in SpecA, one row
                      // of a reduction)
    // Runner-only (`gpu-check --emulate`, the CPU suite): faults in a kernel body that the CPU grid
    // runner shows deterministically; on a device a missing barrier is a race that may pass.
    // Implemented by a kernel body of every twin (the emulated runs plant them; the device
    // launches pass none).
    index_math,  // wrong index arithmetic (a row stride or layout off)
    no_barrier,  // a block barrier left out
};
// True for the runner-only faults (index_math, no_barrier).
bool runner_only(PlantedFault f);
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

// The twin names in registry order (what --twin accepts). twin_checks() lists the same names in
// the same order (tests/gpu/base/test_gpu_check.cpp).
inline constexpr const char* kTwinNames[] = {"linear_infsa", "spec_attention", "jacobian_spectrum",
                                             "svd",          "neumann",        "perron_tiled"};
// The twins to run for `requested` (empty: all), in registry order, each once. Throws Usage
// naming an unknown name and listing the known ones. Host-only (both builds).
std::vector<std::string> select_twins(const std::vector<std::string>& requested);

// One gpu-check run: the cases and what the report's provenance needs.
struct GpuCheckRun {
    DeviceInfo device;  // name, sm, runtime / driver / cuBLAS / cuSOLVER versions
    MathMode math_mode = MathMode::pedantic;
    std::string math_mode_description;  // Context::math_mode_description()
    PlantedFault fault = PlantedFault::none;
    GpuCheckOptions options;
    std::vector<TwinCase> cases;  // in registry order, each twin's cases in its own order
    // `gpu-check --emulate` (run_gpu_check_emulated): the kernels ran on the CPU grid runner, not
    // on a device; not_emulated lists the selected twins that were not run (never counted as
    // agreeing or disagreeing).
    bool emulated = false;
    std::vector<std::string> not_emulated;
    long n_disagree() const;  // cases with agrees == false
};

// CUDA build (gpu/src/check/gpu_check_cuda.cpp): a Context on device 0 with `mode`, `fault`
// planted for the run, the selected twins in registry order. A twin that throws contributes one
// case with agrees = false and the error in its note (the others still run); a twin that returns
// no case contributes one such case ("no case ran"). Throws Error(NoDevice) without a device,
// Usage for an unknown twin. The CLI reaches it only through the backend (gpu/base/backend.hpp);
// in a CPU-only build (base_stub.cpp) it throws NoDevice "not compiled" and twin_checks() is
// empty.
GpuCheckRun run_gpu_check(const GpuCheckOptions& opt, MathMode mode, PlantedFault fault);

// `gpu-check --emulate` (host-only, both builds, gpu/src/check/gpu_check_emulate.cpp): the same
// cases, references and a-priori tolerances as the device check, with each twin's kernel bodies
// run on the CPU grid runner (attnspec/gpu/base/cpu_grid.hpp) instead of a device. Only the twins
// of emulated_twin_checks() run; the other selected twins are listed in not_emulated. Timings are
// off (gpu_seconds, cpu_seconds -1). Throws Usage when no selected twin is emulated, or for an
// unknown twin.
GpuCheckRun run_gpu_check_emulated(const GpuCheckOptions& opt, MathMode mode, PlantedFault fault);
// The emulated twins, in registry order, each with its check on the CPU grid runner.
using EmulatedCheckFn = std::vector<TwinCase> (*)(const GpuCheckOptions&);
struct EmulatedCheck {
    const char* name;
    EmulatedCheckFn run;  // every emulated twin plants every fault, the runner-only ones too
};
const std::vector<EmulatedCheck>& emulated_twin_checks();
std::vector<TwinCase> check_linear_infsa_emulated(const GpuCheckOptions& opt);
std::vector<TwinCase> check_spec_attention_emulated(const GpuCheckOptions& opt);
std::vector<TwinCase> check_jacobian_spectrum_emulated(const GpuCheckOptions& opt);
std::vector<TwinCase> check_svd_emulated(const GpuCheckOptions& opt);
std::vector<TwinCase> check_neumann_emulated(const GpuCheckOptions& opt);
std::vector<TwinCase> check_perron_tiled_emulated(const GpuCheckOptions& opt);

// Per-twin entries (one per twin source file, gpu/src/<module>/*_check_cuda.cpp). In a CPU-only
// build check/check_stub.cpp defines each to throw NoDevice "not compiled", so that the GPU tests
// link there too.
std::vector<TwinCase> check_linear_infsa(Context& ctx, const GpuCheckOptions& opt);
std::vector<TwinCase> check_spec_attention(Context& ctx, const GpuCheckOptions& opt);
std::vector<TwinCase> check_jacobian_spectrum(Context& ctx, const GpuCheckOptions& opt);
std::vector<TwinCase> check_svd(Context& ctx, const GpuCheckOptions& opt);
std::vector<TwinCase> check_neumann(Context& ctx, const GpuCheckOptions& opt);
std::vector<TwinCase> check_perron_tiled(Context& ctx, const GpuCheckOptions& opt);

// Runs one twin's check for a runner (device or emulated): an exception becomes one case with
// agrees = false and "error: <message>" in its note, no case one such case ("no case ran").
std::vector<TwinCase> run_twin_guarded(const std::string& twin,
                                       const std::function<std::vector<TwinCase>()>& check);

// The runners' loop (device and emulated): with run.fault planted, each entry of `table` (in its
// order) whose name is in `names` run through run_twin_guarded(name, [&] { return run_one(e); }),
// its cases appended to run.cases.
template <class Entry, class RunOne>
void run_selected(GpuCheckRun& run, const std::vector<Entry>& table,
                  const std::vector<std::string>& names, RunOne&& run_one) {
    const ScopedPlantedFault planted(run.fault);
    for (const Entry& e : table) {
        if (std::find(names.begin(), names.end(), e.name) == names.end()) continue;
        for (TwinCase& c : run_twin_guarded(e.name, [&] { return run_one(e); }))
            run.cases.push_back(std::move(c));
    }
}

// Shared comparison: fills max_abs_err / max_rel_err / agrees from two equally-sized arrays
// (host memory) with the given tolerance (on the relative error unless on_abs). A NaN/Inf on
// either side never agrees.
void compare_into(TwinCase& c, const double* cpu, const double* gpu, long n, double tolerance,
                  bool on_abs, std::string reason);

// Median wall time of `runs` calls of f (f synchronises its own device work), seconds; -1 when
// runs < 1. The timing column of every twin's gpu-check cases.
template <class F>
double median_seconds(int runs, F&& f) {
    std::vector<double> t;
    for (int k = 0; k < runs; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t.empty() ? -1.0 : t[t.size() / 2];
}

}  // namespace attnspec::gpu
