// Parts of gpu-check that need no device (both builds; host-only, in the CLI's attnspec_gpu_host
// and, through it, in libattnspec_gpu.so): math modes, planted faults, twin selection and the
// shared comparison, the guarded run of one twin.
#include <algorithm>
#include <cmath>
#include <exception>
#include <iterator>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"

namespace attnspec::gpu {

namespace {
PlantedFault g_fault = PlantedFault::none;
}

const char* to_string(MathMode m) { return m == MathMode::pedantic ? "pedantic" : "fast"; }

MathMode math_mode_from_string(const std::string& s) {
    for (MathMode m : {MathMode::pedantic, MathMode::fast})
        if (s == to_string(m)) return m;
    throw Error(ExitCode::Usage, "unknown math mode '" + s + "' (expected pedantic or fast)");
}

const char* to_string(PlantedFault f) {
    switch (f) {
        case PlantedFault::none:
            return "none";
        case PlantedFault::off_by_one_tile:
            return "off-by-one-tile";
        case PlantedFault::dropped_term:
            return "dropped-term";
        case PlantedFault::index_math:
            return "index-math";
        case PlantedFault::no_barrier:
            return "no-barrier";
    }
    return "none";
}

bool runner_only(PlantedFault f) {
    return f == PlantedFault::index_math || f == PlantedFault::no_barrier;
}

PlantedFault planted_fault_from_string(const std::string& s) {
    for (PlantedFault f :
         {PlantedFault::none, PlantedFault::off_by_one_tile, PlantedFault::dropped_term,
          PlantedFault::index_math, PlantedFault::no_barrier})
        if (s == to_string(f)) return f;
    throw Error(ExitCode::Usage, "unknown planted fault '" + s +
                                     "' (expected none, off-by-one-tile, dropped-term, index-math "
                                     "or no-barrier)");
}

PlantedFault planted_fault() { return g_fault; }

ScopedPlantedFault::ScopedPlantedFault(PlantedFault f) : previous_(g_fault) { g_fault = f; }
ScopedPlantedFault::~ScopedPlantedFault() { g_fault = previous_; }

std::vector<std::string> select_twins(const std::vector<std::string>& requested) {
    std::vector<std::string> out;
    for (const std::string& r : requested)
        if (std::find(std::begin(kTwinNames), std::end(kTwinNames), r) == std::end(kTwinNames)) {
            std::string known;
            for (const char* n : kTwinNames) known += (known.empty() ? "" : ", ") + std::string(n);
            throw Error(ExitCode::Usage, "unknown twin '" + r + "' (known: " + known + ")");
        }
    for (const char* n : kTwinNames)
        if (requested.empty() ||
            std::find(requested.begin(), requested.end(), n) != requested.end())
            out.emplace_back(n);
    return out;
}

std::vector<TwinCase> run_twin_guarded(const std::string& twin,
                                       const std::function<std::vector<TwinCase>()>& check) {
    const auto failed = [&twin](const std::string& note) {
        TwinCase c;
        c.twin = twin;
        c.case_name = "(none)";
        c.precision = "-";
        c.max_abs_err = c.max_rel_err = INFINITY;
        c.agrees = false;
        c.note = note;
        return std::vector<TwinCase>{c};
    };
    try {
        std::vector<TwinCase> cs = check();
        return cs.empty() ? failed("no case ran") : cs;
    } catch (const std::exception& e) {
        return failed(std::string("error: ") + e.what());
    }
}

long GpuCheckRun::n_disagree() const {
    return static_cast<long>(
        std::count_if(cases.begin(), cases.end(), [](const TwinCase& c) { return !c.agrees; }));
}

void compare_into(TwinCase& c, const double* cpu, const double* gpu, long n, double tolerance,
                  bool on_abs, std::string reason) {
    double max_diff = 0, max_cpu = 0, max_gpu = 0;
    bool finite = true;
    for (long i = 0; i < n; ++i) {
        if (!std::isfinite(cpu[i]) || !std::isfinite(gpu[i])) {
            finite = false;
            continue;
        }
        max_diff = std::max(max_diff, std::abs(gpu[i] - cpu[i]));
        max_cpu = std::max(max_cpu, std::abs(cpu[i]));
        max_gpu = std::max(max_gpu, std::abs(gpu[i]));
    }
    const double scale = std::max(max_cpu, max_gpu);
    c.max_abs_err = finite ? max_diff : INFINITY;
    c.max_rel_err = !finite ? INFINITY : scale > 0 ? max_diff / scale : 0.0;
    c.tolerance = tolerance;
    c.tolerance_on_abs = on_abs;
    c.tolerance_reason = std::move(reason);
    c.agrees = finite && (on_abs ? c.max_abs_err : c.max_rel_err) <= tolerance;
}

}  // namespace attnspec::gpu
