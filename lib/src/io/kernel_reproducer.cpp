// check-kernel's reproducer files (io/kernel_reproducer.hpp).
#include "attnspec/io/kernel_reproducer.hpp"

#include <cctype>
#include <sstream>

#include "attnspec/base/format.hpp"
#include "attnspec/base/json.hpp"
#include "attnspec/io/json_read.hpp"
#include "attnspec/io/tensor_files.hpp"

namespace attnspec {
namespace {

// `path` as one shell word: single-quoted unless it is made of safe characters only.
std::string shell_word(const std::string& path) {
    bool safe = !path.empty();
    for (char c : path)
        safe = safe && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
                        c == '/' || c == '-' || c == '+' || c == ',' || c == ':' || c == '=');
    if (safe) return path;
    std::string q = "'";
    for (char c : path) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string case_json(const kernels::KernelCheckRun& run, const std::string& path) {
    std::ostringstream os;
    JsonWriter j(os);
    j.begin_object().kv("op", run.op).kv("dtype", run.dtype).kv("accumulate", run.accumulate);
    j.kv("mask", run.mask).kv("scale", run.scale).kv("factor", run.factor);
    if (run.infsa) j.kv("gamma", run.gamma).kv("eps", run.eps);
    if (!run.correction.empty()) j.kv("correction", run.correction).kv("lambda", run.lambda);
    j.kv("verdict", kernels::verdict_name(run.verdict)).kv("summary", run.summary);
    j.kv("inputs", run.inputs).kv("output", run.output);
    if (!run.generator.empty()) {
        j.kv("generator", run.generator).kv("seed", run.seed).key("shape").begin_array();
        for (std::int64_t n : run.shape) j.value(n);
        j.end_array();
    }
    j.kv("replay", reproducer_replay(run, path)).key("worst").begin_object();
    for (const auto& [name, r] : run.tensors) {
        j.key(name).begin_object().kv("verdict", kernels::verdict_name(r->verdict));
        kernels::json_elements(j, "worst_by_bound", r->worst_by_bound);
        kernels::json_elements(j, "worst_by_rule", r->worst_by_rule);
        if (r->has_lse) kernels::json_elements(j, "worst_lse", r->worst_lse);
        j.end_object();
    }
    j.end_object().end_object();
    j.finish();
    return os.str();
}

}  // namespace

std::string reproducer_path(const std::string& beside) {
    const std::string kSuffix = ".repro.npz";
    if (beside.size() >= kSuffix.size() &&
        beside.compare(beside.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0)
        return beside;  // a reproducer replayed: it is its own
    const std::size_t slash = beside.find_last_of('/');
    const std::size_t start = slash == std::string::npos ? 0 : slash + 1;
    const std::size_t dot = beside.find_last_of('.');
    const std::string stem =
        dot == std::string::npos || dot <= start ? beside : beside.substr(0, dot);
    return stem + ".repro.npz";
}

std::string reproducer_replay(const kernels::KernelCheckRun& run, const std::string& path) {
    const std::string p = shell_word(path);
    std::string params =
        run.infsa ? " --gamma " + format_exact(run.gamma) + " --eps " + format_exact(run.eps)
                  : " --mask " + run.mask + " --scale " + format_exact(run.scale);
    if (!run.correction.empty())
        params += " --correction " + run.correction +
                  (run.correction == "lambda" ? " --lambda " + format_exact(run.lambda) : "");
    return "attnspec check-kernel " + run.op + " --inputs " + p + " --output " + p + " --dtype " +
           run.dtype + " --accumulate " + run.accumulate + params + " --factor " +
           format_exact(run.factor);
}

std::string stress_case_json(const std::string& op, const std::string& generator,
                             std::uint64_t seed, const std::vector<std::int64_t>& shape,
                             const std::string& dtype) {
    std::ostringstream os;
    JsonWriter j(os);
    j.begin_object().kv("op", op).kv("generator", generator).kv("seed", seed);
    j.key("shape").begin_array();
    for (std::int64_t n : shape) j.value(n);
    j.end_array().kv("dtype", dtype).end_object();
    j.finish();
    return os.str();
}

void read_stress_case(const KernelArrayFile& in, kernels::KernelCheckRun& run) {
    const std::string text = in.text("case");
    if (text.empty()) return;
    const JsonValue v = parse_json(text, "'" + in.path() + "': member 'case'");
    const JsonValue *g = v.find("generator"), *s = v.find("seed"), *sh = v.find("shape");
    std::uint64_t seed = 0;
    if (!g || g->kind != JsonValue::String || !s || !s->as_uint64(seed) || !sh ||
        sh->kind != JsonValue::Array)
        return;
    std::vector<std::int64_t> shape;
    shape.reserve(sh->items.size());
    for (const JsonValue& n : sh->items) {
        std::uint64_t d = 0;
        if (!n.as_uint64(d) || d > (1ull << 40)) return;
        shape.push_back(static_cast<std::int64_t>(d));
    }
    run.generator = g->text, run.seed = seed, run.shape = std::move(shape);
}

void write_kernel_reproducer(const std::string& path, const kernels::KernelCheckRun& run,
                             const std::vector<NamedArray>& arrays) {
    std::vector<NpyArray> members;
    members.reserve(arrays.size());
    for (const NamedArray& a : arrays)
        members.push_back({a.first, a.second->shape, &a.second->values, false});
    write_npz(path, members, {{"case", case_json(run, path)}});
}

}  // namespace attnspec
