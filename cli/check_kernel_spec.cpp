// check-kernel spec-attention's inputs and stress cases (check_kernel_spec.hpp).
#include "check_kernel_spec.hpp"

#include <cstdio>
#include <iostream>

#include "attnspec/base/json.hpp"
#include "attnspec/io/kernel_reproducer.hpp"
#include "attnspec/io/tensor_files.hpp"
#include "attnspec/kernels/stress.hpp"
#include "cli.hpp"

namespace attnspec::cli {

using kernels::SpecAttentionProblem;

void load_spec_attention_inputs(const std::string& path, SpecAttentionProblem& p) {
    const KernelArrayFile f(path);
    // NaN/Inf kept under mask none or causal (kernels/spec_attention_check.hpp).
    const bool keep = !kernels::general_mask(p.mask);
    p.x = f.read("x", keep);
    p.w_q = f.read("w_q", keep);
    p.w_k = f.read("w_k", keep);
    p.w_v = f.read("w_v", keep);
    load_mask_input(f, path, p.mask, p.mask_array);
}

std::vector<NamedArray> spec_attention_arrays(const SpecAttentionProblem& p) {
    std::vector<NamedArray> a = {{"x", &p.x}, {"w_q", &p.w_q}, {"w_k", &p.w_k}, {"w_v", &p.w_v}};
    if (kernels::general_mask(p.mask)) a.emplace_back("mask", &p.mask_array);
    return a;
}

void generate_spec_attention_case(const std::string& path, const std::string& name,
                                  std::uint64_t seed, const std::vector<std::int64_t>& shape,
                                  const std::string& dtype, kernels::MaskKind mask, bool json) {
    const kernels::Format f = kernels::parse_format(dtype, "dtype");
    SpecAttentionProblem p = kernels::generate_spec_attention(name, seed, shape, f);
    p.mask = mask;
    if (kernels::general_mask(mask))
        p.mask_array = kernels::generate_mask(mask, seed, p.x.shape, f);
    check_output_target(path);
    std::vector<NpyArray> arrays;
    for (const auto& [n, a] : spec_attention_arrays(p))
        arrays.push_back({n, a->shape, &a->values, f != kernels::Format::fp64});
    write_npz(path, arrays,
              {{"case", stress_case_json("spec-attention", name, seed, shape, dtype)}});
    const double lambda = kernels::spec_case_lambda(name);
    if (json) {
        JsonWriter j(std::cout);
        j.begin_object();
        json_header(j, "check-kernel spec-attention --generate");
        j.kv("case", name).kv("seed", seed).kv("shape", kernels::shape_text(shape));
        j.kv("dtype", dtype).kv("lambda", lambda).kv("inputs", path).end_object();
        j.finish();
        return;
    }
    const std::string masked = kernels::general_mask(mask)
                                   ? std::string(", mask (") + kernels::mask_name(mask) + ")"
                                   : std::string();
    std::printf(
        "wrote %s: x %s, w_q, w_k %s, w_v %s%s, case %s, seed %llu, values in %s; check with "
        "--lambda %g for --correction lambda\n",
        path.c_str(), kernels::shape_text(p.x.shape).c_str(),
        kernels::shape_text(p.w_q.shape).c_str(), kernels::shape_text(p.w_v.shape).c_str(),
        masked.c_str(), name.c_str(), static_cast<unsigned long long>(seed), dtype.c_str(), lambda);
}

}  // namespace attnspec::cli
