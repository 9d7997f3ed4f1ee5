// `attnspec gpu-check`: the /gpu_check report section and its JSON (gpu/check/gpu_check_io.hpp).
#include "attnspec/gpu/check/gpu_check_io.hpp"

#include <cstdint>
#include <functional>

namespace attnspec::gpu {

namespace {
std::string version3(int v) {  // cublasGetProperty packing: major*10000 + minor*100 + patch
    return v <= 0 ? "unknown"
                  : std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." +
                        std::to_string(v % 100);
}
std::string cuda_version(int v) {  // 13000 -> "13.0"
    return v <= 0 ? "unknown" : std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}
template <class T>
std::vector<T> column(const GpuCheckRun& run, const std::function<T(const TwinCase&)>& f) {
    std::vector<T> out;
    out.reserve(run.cases.size());
    for (const TwinCase& c : run.cases) out.push_back(f(c));
    return out;
}
std::string joined(const std::vector<std::string>& names) {  // "svd,neumann"
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "" : ",") + n;
    return s;
}
}  // namespace

std::string shape_text(const std::vector<long>& shape) {
    std::string s;
    for (long d : shape) s += (s.empty() ? "" : "x") + std::to_string(d);
    return s;
}

std::vector<std::pair<std::string, std::string>> gpu_check_provenance(const GpuCheckRun& run) {
    const DeviceInfo& d = run.device;
    return {{"gpu_device", d.name},
            {"gpu_sm", std::to_string(d.cc_major) + std::to_string(d.cc_minor)},
            {"cuda_runtime", cuda_version(d.runtime_version)},
            {"cuda_driver", cuda_version(d.driver_version)},
            {"cublas_version", version3(d.cublas_version)},
            {"cusolver_version", version3(d.cusolver_version)},
            {"math_mode", to_string(run.math_mode)},
            {"math_mode_description", run.math_mode_description}};
}

void write_gpu_check_section(H5Group& parent, const GpuCheckRun& run) {
    H5Group g = parent.group("gpu_check");
    for (const auto& [k, v] : gpu_check_provenance(run)) g.attr(k, v);
    g.attr("planted_fault", to_string(run.fault));
    g.attr("emulated", static_cast<std::int64_t>(run.emulated));
    g.attr("not_emulated", joined(run.not_emulated));
    g.attr("quick", static_cast<std::int64_t>(run.options.quick));
    g.attr("seed", std::to_string(run.options.seed));
    g.attr("n_cases", static_cast<std::int64_t>(run.cases.size()));
    g.attr("n_disagree", static_cast<std::int64_t>(run.n_disagree()));
    if (run.cases.empty()) return;  // the runner always returns a case per twin; kept safe
    using S = std::string;
    using C = const TwinCase&;
    g.write("twin", column<S>(run, [](C c) { return c.twin; }));
    g.write("case", column<S>(run, [](C c) { return c.case_name; }));
    g.write("precision", column<S>(run, [](C c) { return c.precision; }));
    g.write("shape", column<S>(run, [](C c) { return shape_text(c.shape); }));
    g.write("max_abs_err", column<double>(run, [](C c) { return c.max_abs_err; }));
    g.write("max_rel_err", column<double>(run, [](C c) { return c.max_rel_err; }));
    g.write("tolerance", column<double>(run, [](C c) { return c.tolerance; }));
    g.write("tolerance_on_abs",
            column<std::int64_t>(run, [](C c) { return std::int64_t{c.tolerance_on_abs}; }));
    g.write("tolerance_reason", column<S>(run, [](C c) { return c.tolerance_reason; }));
    g.write("gpu_seconds", column<double>(run, [](C c) { return c.gpu_seconds; }));
    g.write("cpu_seconds", column<double>(run, [](C c) { return c.cpu_seconds; }));
    g.write("agrees", column<std::int64_t>(run, [](C c) { return std::int64_t{c.agrees}; }));
    g.write("note", column<S>(run, [](C c) { return c.note; }));
}

void gpu_check_json(JsonWriter& j, const GpuCheckRun& run) {
    for (const auto& [k, v] : gpu_check_provenance(run)) j.kv(k, v);
    j.kv("planted_fault", to_string(run.fault)).kv("quick", run.options.quick);
    j.kv("emulated", run.emulated).key("not_emulated").begin_array();
    for (const std::string& t : run.not_emulated) j.value(t);
    j.end_array();
    j.kv("seed", run.options.seed);
    j.kv("n_cases", static_cast<std::int64_t>(run.cases.size()));
    j.kv("n_disagree", static_cast<std::int64_t>(run.n_disagree()));
    j.key("cases").begin_array();
    for (const TwinCase& c : run.cases) {
        j.begin_object().kv("twin", c.twin).kv("case", c.case_name).kv("precision", c.precision);
        j.kv("shape", shape_text(c.shape)).kv("max_abs_err", c.max_abs_err);
        j.kv("max_rel_err", c.max_rel_err).kv("tolerance", c.tolerance);
        j.kv("tolerance_on", c.tolerance_on_abs ? "abs" : "rel");
        j.kv("tolerance_reason", c.tolerance_reason).kv("gpu_seconds", c.gpu_seconds);
        j.kv("cpu_seconds", c.cpu_seconds).kv("agrees", c.agrees).kv("note", c.note);
        j.end_object();
    }
    j.end_array();
}

}  // namespace attnspec::gpu
