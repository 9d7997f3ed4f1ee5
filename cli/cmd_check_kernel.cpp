// attnspec check-kernel attention | attention-vjp | attention-jvp | linear-infsa | pure-infsa |
// neumann: a user's attention output (or
// its derivatives dq, dk, dv, or the forward-mode do_t) against the float64 reference, with the
// rounding bound and the baseline rule (kernels/attention_check.hpp,
// kernels/derivative_check.hpp); or --generate a seeded stress case (kernels/stress.hpp) for the
// kernel to run. Files: io/kernel_files.hpp; --junit, --out and the reproducer of a failure:
// check_kernel_files.hpp; spec-attention's inputs and cases: check_kernel_spec.hpp; a tensor's
// figures as JSON and text: check_kernel_print.hpp.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "attnspec/io/kernel_files.hpp"
#include "attnspec/io/kernel_reproducer.hpp"
#include "attnspec/io/report_writer.hpp"
#include "attnspec/kernels/attention_check.hpp"
#include "attnspec/kernels/check_run.hpp"
#include "attnspec/kernels/derivative_check.hpp"
#include "attnspec/kernels/linear_infsa_check.hpp"
#include "attnspec/kernels/neumann_check.hpp"
#include "attnspec/kernels/pure_infsa_check.hpp"
#include "attnspec/kernels/spec_attention_check.hpp"
#include "attnspec/kernels/stress.hpp"
#include "check_kernel_files.hpp"
#include "check_kernel_print.hpp"
#include "check_kernel_spec.hpp"
#include "cli.hpp"
#include "commands.hpp"

namespace attnspec::cli {
namespace {

using namespace attnspec::kernels;

const char* kSynopsis =
    "OP --inputs IN --output OUT [--dtype fp16|bf16|tf32|fp32|fp64] "
    "[--accumulate fp32|fp64] [--mask none|causal|boolean|additive] [--scale S] [--gamma G] [--eps "
    "E] "
    "[--correction lambda|svd] [--lambda L] [--factor F] [--json] [--junit F.xml] [--out R.h5]\n"
    "       attnspec check-kernel OP --generate CASE --seed S --shape N,d|H,N,d "
    "--inputs IN [--dtype D] [--mask boolean|additive]\n"
    "  OP: attention (IN q, k, v, mask with --mask boolean|additive; OUT o, lse optional), "
    "attention-vjp (IN q, k, v, do, mask as attention's; OUT dq, "
    "dk, dv), attention-jvp (IN q, k, v, tq, tk, tv, mask; OUT do_t), linear-infsa, pure-infsa and "
    "neumann (IN q, k, v; OUT o; --gamma, --eps; no --mask, --scale; neumann: N_q = N_k), "
    "spec-attention (IN x, w_q, w_k, w_v, mask; OUT o; --correction, --lambda; --shape N,D,d or "
    "B,N,D,d)";

const char* kExamples =
    "examples:\n"
    "  attnspec check-kernel attention-vjp --generate spike-v --seed 7 --shape 4,256,64 "
    "--dtype fp16 --inputs in.npz\n"
    "  attnspec check-kernel attention --inputs in.npz --output out.npz --dtype fp16 "
    "--mask causal\n";

enum class Op { attention, vjp, jvp, linear_infsa, pure_infsa, neumann, spec_attention };

Op parse_op(const std::string& text) {
    if (text == "attention") return Op::attention;
    if (text == "attention-vjp") return Op::vjp;
    if (text == "attention-jvp") return Op::jvp;
    if (text == "linear-infsa") return Op::linear_infsa;
    if (text == "pure-infsa") return Op::pure_infsa;
    if (text == "neumann") return Op::neumann;
    if (text == "spec-attention") return Op::spec_attention;
    fail_usage("check-kernel: unknown operation '" + text +
               "' (expected attention, attention-vjp, attention-jvp, linear-infsa, pure-infsa, "
               "neumann or spec-attention)");
}

// The operations with --gamma, --eps and no mask or scale.
bool is_infsa(Op op) { return op == Op::linear_infsa || op == Op::pure_infsa || op == Op::neumann; }

// neumann's parameters, before any file is read: gamma in (0, 1), eps > 0 (usage, 64).
void check_neumann_options(const LinearInfsaParams& par) {
    if (!(par.gamma > 0 && par.gamma < 1))
        fail_usage("check-kernel neumann: --gamma must be in (0, 1), got " + value_text(par.gamma));
    if (!(par.eps > 0))
        fail_usage("check-kernel neumann: --eps must be > 0, got " + value_text(par.eps));
}

struct Args {
    std::string op, inputs, output, dtype = "fp32", accumulate = "fp32", mask = "none";
    std::string generate, shape;
    std::string correction = "lambda";  // spec-attention
    double lambda = 10;
    CheckKernelFiles files;  // --junit, --out
    double scale = 0, factor = 2;
    LinearInfsaParams infsa;
    CommonOptions common;
};

// A path option: an empty one is a usage error (it would silently write nothing).
po::typed_value<std::string>* path_value(std::string* target, const char* option) {
    return po::value(target)->notifier([option](const std::string& v) {
        if (v.empty()) fail_usage(std::string(option) + " expects a path, got an empty string");
    });
}

// "N,d", "H,N,d" or "B,H,N,d" (or with x): parse_dims with the count the text spells.
std::vector<std::int64_t> parse_shape(const std::string& text) {
    size_t count = 1;
    for (char c : text) count += c == ',' || c == 'x' || c == 'X';
    const std::vector<long> dims = parse_dims(text, std::clamp<size_t>(count, 2, 4), "--shape");
    return std::vector<std::int64_t>(dims.begin(), dims.end());
}

// "files": the paths this run wrote (report, JUnit XML, reproducer, or --generate's IN).
void json_files(JsonWriter& j, const std::vector<std::string>& files) {
    j.key("files").begin_array();
    for (const std::string& f : files) j.value(f);
    j.end_array();
}

using Named = std::vector<std::pair<const char*, const KernelCheckResult*>>;

// One object: the verdict and options, then the single tensor's figures at the top level
// (attention, attention-jvp) or one object per tensor under "outputs" (attention-vjp).
void print_json(KernelVerdict verdict, const std::string& summary, const Named& tensors,
                const Args& a, const std::vector<std::string>& files) {
    const KernelCheckResult& r = *tensors.front().second;
    JsonWriter j(std::cout);
    j.begin_object();
    json_header(j, ("check-kernel " + a.op).c_str());
    j.kv("verdict", verdict_name(verdict)).kv("summary", summary);
    j.kv("dtype", a.dtype).kv("accumulate", a.accumulate).kv("mask", a.mask);
    j.kv("scale", r.scale).kv("factor", a.factor).kv("inputs_exact", r.inputs_exact);
    if (is_infsa(parse_op(a.op))) j.kv("gamma", a.infsa.gamma).kv("eps", a.infsa.eps);
    json_files(j, files);
    if (parse_op(a.op) == Op::spec_attention)
        j.kv("correction", a.correction).kv("lambda", a.correction == "lambda" ? a.lambda : 0.0);
    if (tensors.size() == 1) {
        j.kv("output", tensors.front().first);
        json_tensor(j, r);
    } else {
        j.key("outputs").begin_object();
        for (const auto& [name, t] : tensors) {
            j.key(name).begin_object().kv("verdict", verdict_name(t->verdict));
            j.kv("summary", t->summary);
            json_tensor(j, *t);
            j.end_object();
        }
        j.end_object();
    }
    j.end_object();
    j.finish();
}

void print_text(KernelVerdict verdict, const std::string& summary, const Named& tensors,
                const Args& a) {
    const KernelCheckResult& r = *tensors.front().second;
    std::printf("check-kernel %s: %s\n", a.op.c_str(), verdict_name(verdict));
    std::printf("  %s\n", summary.c_str());
    const bool spec = parse_op(a.op) == Op::spec_attention;
    if (spec)
        std::printf("  correction %s%s\n", a.correction.c_str(),
                    a.correction == "lambda" ? (", lambda " + value_text(a.lambda)).c_str() : "");
    std::printf(spec ? "  x %s, w_q %s, w_v %s; dtype %s, accumulate %s, mask %s, scale %.9g%s\n"
                     : "  q %s, k %s, v %s; dtype %s, accumulate %s, mask %s, scale %.9g%s\n",
                shape_text(r.q_shape).c_str(), shape_text(r.k_shape).c_str(),
                shape_text(r.v_shape).c_str(), a.dtype.c_str(), a.accumulate.c_str(),
                a.mask.c_str(), r.scale, r.inputs_exact ? "" : " (inputs rounded to the dtype)");
    for (const auto& [name, t] : tensors) print_tensor(name, *t, a.factor, tensors.size() > 1);
}

// The arrays IN holds beyond q, k, v for each operation.
std::vector<std::string> direction_names(Op op) {
    if (op == Op::vjp) return {"do"};
    if (op == Op::jvp) return {"tq", "tk", "tv"};
    return {};
}

// A non-finite case of another operation (kernels/stress.hpp, nonfinite_cases_for): usage (64).
void refuse_foreign_case(const Args& a) {
    if (a.generate == "relu-zero" || a.generate == "dominant-key" || a.generate == "rank-one")
        return;  // the InfSA operations' own
    const StressCase c = parse_stress(a.generate, "stress_case");
    if (!is_nonfinite_case(c)) return;
    const std::vector<StressCase> ok = nonfinite_cases_for(a.op);
    if (std::find(ok.begin(), ok.end(), c) == ok.end())
        fail_usage(
            "check-kernel " + a.op + " --generate " + a.generate +
            ": not a non-finite case of this operation (attention, linear-infsa, pure-infsa, "
            "neumann: nan-q .. inf-v; attention-vjp also nan-do, inf-do; attention-jvp also "
            "nan-tq .. inf-tv)");
}

int generate(Op op, const Args& a, const po::variables_map& vm) {
    reject_given(vm, "check-kernel", {"output", "accumulate", "factor", "junit", "out"},
                 "with --generate (it only writes the inputs)");
    const MaskKind mask = parse_mask(a.mask, "mask");
    if (given(vm, "mask") && !general_mask(mask))
        fail_usage("check-kernel --generate: --mask is boolean or additive (it writes IN's mask)");
    if (a.inputs.empty() || a.shape.empty())
        fail_usage("check-kernel " + a.op + " --generate needs --inputs IN and --shape N,d");
    if (op == Op::spec_attention) {
        const std::vector<std::int64_t> shape = parse_shape(a.shape);
        if (shape.size() < 3)
            fail_usage(
                "check-kernel spec-attention --generate: --shape is N,D,d or B,N,D,d, got '" +
                a.shape + "'");
        generate_spec_attention_case(a.inputs, a.generate, a.common.seed, shape, a.dtype, mask,
                                     a.common.json);
        return 0;
    }
    const Format f = parse_format(a.dtype, "dtype");
    refuse_foreign_case(a);
    const AttentionProblem p =
        op == Op::neumann ? generate_neumann(a.generate, a.common.seed, parse_shape(a.shape), f)
        : is_infsa(op) ? generate_linear_infsa(a.generate, a.common.seed, parse_shape(a.shape), f)
                       : generate_stress(parse_stress(a.generate, "stress_case"), a.common.seed,
                                         parse_shape(a.shape), f, a.scale);
    std::vector<std::vector<std::int64_t>> shapes;
    if (op == Op::vjp) shapes = {problem_shape(p).out_shape()};
    if (op == Op::jvp) shapes = {p.q.shape, p.k.shape, p.v.shape};
    const std::vector<Array> dirs =
        shapes.empty() ? std::vector<Array>{}
                       : generate_directions(parse_stress(a.generate, "stress_case"), a.common.seed,
                                             shapes, f);
    const std::vector<std::string> names = direction_names(op);
    std::vector<NamedArray> extra;
    for (std::size_t i = 0; i < dirs.size(); ++i) extra.emplace_back(names[i], &dirs[i]);
    Array mask_array;
    if (general_mask(mask)) {
        mask_array = generate_mask(mask, a.common.seed, p.q.shape, f);
        extra.emplace_back("mask", &mask_array);
    }
    check_output_target(a.inputs);
    write_attention_inputs(a.inputs, p, f == Format::fp64, extra,
                           stress_case_json(a.op, a.generate, a.common.seed, p.q.shape, a.dtype));
    if (a.common.json) {
        JsonWriter j(std::cout);
        j.begin_object();
        json_header(j, ("check-kernel " + a.op + " --generate").c_str());
        j.kv("case", a.generate).kv("seed", a.common.seed).kv("shape", shape_text(p.q.shape));
        j.kv("dtype", a.dtype).kv("inputs", a.inputs);
        json_files(j, {a.inputs});
        j.end_object();
        j.finish();
    } else {
        std::string arrays = "q, k, v";
        for (const std::string& n : names) arrays += ", " + n;
        if (general_mask(mask)) arrays += ", mask (" + a.mask + ")";
        std::printf("wrote %s: %s %s, case %s, seed %llu, values in %s\n", a.inputs.c_str(),
                    arrays.c_str(), shape_text(p.q.shape).c_str(), a.generate.c_str(),
                    static_cast<unsigned long long>(a.common.seed), a.dtype.c_str());
    }
    return 0;
}

// Writes the files the options ask for (check_kernel_files.hpp), then prints the result; returns
// the verdict. `arrays`: the inputs and the kernel's outputs, for the reproducer.
KernelVerdict emit(KernelVerdict verdict, const std::string& summary, const Named& tensors,
                   const Args& a, const std::vector<NamedArray>& arrays, const Invocation& inv,
                   std::chrono::steady_clock::time_point start) {
    KernelCheckRun run;
    run.op = a.op, run.dtype = a.dtype, run.accumulate = a.accumulate, run.mask = a.mask;
    run.scale = tensors.front().second->scale, run.factor = a.factor;
    run.infsa = is_infsa(parse_op(a.op)), run.gamma = a.infsa.gamma, run.eps = a.infsa.eps;
    if (parse_op(a.op) == Op::spec_attention) run.correction = a.correction, run.lambda = a.lambda;
    run.verdict = verdict, run.summary = summary, run.inputs = a.inputs, run.output = a.output;
    for (const auto& [name, t] : tensors) run.tensors.emplace_back(name, t);
    read_stress_case(KernelArrayFile(a.inputs), run);
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::vector<std::string> files =
        write_check_kernel_files(run, arrays, a.files, inv, a.common.json);
    a.common.json ? print_json(verdict, summary, tensors, a, files)
                  : print_text(verdict, summary, tensors, a);
    return verdict;
}

// spec-attention: IN's x and weights, OUT's o (check_kernel_spec.hpp).
int check_spec(const Args& a, const KernelCheckOptions& opt, const AttentionProblem& p,
               const Invocation& inv, std::chrono::steady_clock::time_point start) {
    SpecAttentionProblem sp;
    sp.correction = parse_spec_correction(a.correction, "correction");
    sp.lambda = a.lambda, sp.mask = p.mask, sp.scale = p.scale;  // the mask array: IN's
    load_spec_attention_inputs(a.inputs, sp);
    const Array o = KernelArrayFile(a.output).read("o", true);
    const KernelCheckResult r = check_spec_attention(sp, o, opt);
    std::vector<NamedArray> arrays = spec_attention_arrays(sp);
    arrays.emplace_back("o", &o);
    const KernelVerdict v = emit(r.verdict, r.summary, {{"o", &r}}, a, arrays, inv, start);
    return v == KernelVerdict::pass ? 0 : static_cast<int>(ExitCode::Violated);
}

}  // namespace

int run_check_kernel(const Invocation& inv) {
    po::options_description desc("check-kernel options");
    Args a;
    desc.add_options()("op", po::value(&a.op),
                       "the operation: attention, attention-vjp, attention-jvp, linear-infsa, "
                       "pure-infsa, neumann or spec-attention (positional)")(
        "inputs", po::value(&a.inputs),
        "IN (.npz or .h5) with arrays q, k, v (and do, or tq, tk, tv; spec-attention: x, w_q, "
        "w_k, w_v)")("output", po::value(&a.output),
                     "OUT (.npz or .h5) with the kernel's o (and lse), or dq, dk, dv, or do_t")(
        "dtype", po::value(&a.dtype),
        "storage format: fp16, bf16, tf32, fp32, fp64 (default fp32)")(
        "accumulate", po::value(&a.accumulate), "accumulation format: fp32 or fp64 (default fp32)")(
        "mask", po::value(&a.mask),
        "none, causal, boolean (IN's mask, true = attend) or additive (IN's mask added to the "
        "scaled logits) (default none)")("scale", real_value(&a.scale, "--scale", 0, 1e300, true),
                                         "logit scale s (default 1/sqrt(d))")(
        "factor", real_value(&a.factor, "--factor", 1, 1e300),
        "allowed error = F x baseline error + floor (default 2)")(
        "gamma", real_value(&a.infsa.gamma, "--gamma", -1e300, 1e300),
        "linear-infsa, pure-infsa, neumann: the factor gamma (default 0.95, the library's; "
        "neumann: in (0, 1))")(
        "eps", real_value(&a.infsa.eps, "--eps", 0, 1e300),
        "linear-infsa, pure-infsa, neumann: eps of the normalisations (default 1e-6, the "
        "library's; neumann: > 0)")(
        "correction", po::value(&a.correction),
        "spec-attention: lambda (C = lambda I, default) or svd (C = sigma_1 U V^T, Thm 3.5)")(
        "lambda", real_value(&a.lambda, "--lambda", 0, 1e300),
        "spec-attention: lambda >= 0 of --correction lambda (default 10, the paper's)")(
        "generate", po::value(&a.generate),
        "write a stress case to IN: gaussian, large-logits, near-ties, spike-v, heavy-tail, "
        "rank-deficient-k, denormal (below the dtype's normal range; bound analysed for "
        "attention, attention-vjp, linear-infsa); attention, attention-vjp, attention-jvp "
        "linear-infsa, pure-infsa and neumann also nan-q, inf-q, nan-k, inf-k, nan-v, inf-v (one "
        "NaN/Inf per head), attention-vjp nan-do, inf-do, attention-jvp nan-tq, inf-tq, nan-tk, "
        "inf-tk, "
        "nan-tv, inf-tv; linear-infsa, pure-infsa and neumann also relu-zero, dominant-key; "
        "neumann also rank-one; spec-attention gaussian, large-lambda, rank-deficient-w, "
        "large-logits, nan-x, inf-x, nan-w, inf-w (one NaN/Inf in x per batch or in one "
        "weight)")("shape", po::value(&a.shape),
                   "--generate: N,d or H,N,d or B,H,N,d (spec-attention: N,D,d or "
                   "B,N,D,d)")("junit", path_value(&a.files.junit, "--junit"),
                               "F.xml: write the check as JUnit XML (CI reporters)")(
        "out", path_value(&a.files.report, "--out"),
        "R.h5: write the check's report (HDF5; none by default); on fail or wrong the reproducer "
        "goes beside it (else beside OUT)");
    add_common_options(desc, a.common, "", kSeed | kJson);
    po::positional_options_description pos;
    pos.add("op", 1);
    po::variables_map vm;
    if (!parse(inv, "check-kernel", kSynopsis, kExamples, desc, vm, &pos)) return 0;
    if (a.op.empty())
        fail_usage(
            "check-kernel: missing the operation (attention, attention-vjp, attention-jvp, "
            "linear-infsa, pure-infsa, neumann, spec-attention)");
    const Op op = parse_op(a.op);
    if (is_infsa(op))
        reject_given(vm, "check-kernel " + a.op, {"mask", "scale"}, "(it has no mask or scale)");
    else
        reject_given(vm, "check-kernel " + a.op, {"gamma", "eps"},
                     "(linear-infsa, pure-infsa and neumann only)");
    if (op == Op::neumann) check_neumann_options(a.infsa);
    if (op != Op::spec_attention)
        reject_given(vm, "check-kernel " + a.op, {"correction", "lambda"}, "(spec-attention only)");
    else if (given(vm, "lambda") && a.correction != "lambda")
        fail_usage("check-kernel spec-attention: --lambda goes with --correction lambda");
    if (given(vm, "generate")) return generate(op, a, vm);
    reject_given(vm, "check-kernel", {"shape", "seed"}, "without --generate");
    if (a.inputs.empty() || a.output.empty())
        fail_usage("check-kernel " + a.op + " needs --inputs IN and --output OUT");
    check_kernel_targets(a.files, {a.inputs, a.output});
    const auto start = std::chrono::steady_clock::now();
    KernelCheckOptions opt;
    opt.storage = parse_format(a.dtype, "dtype");
    opt.accumulate = parse_format(a.accumulate, "accumulate");
    if (opt.accumulate != Format::fp32 && opt.accumulate != Format::fp64)
        fail_usage("--accumulate expects fp32 or fp64, got '" + a.accumulate + "'");
    opt.factor = a.factor;
    AttentionProblem p;
    p.mask = parse_mask(a.mask, "mask");
    p.scale = a.scale;
    if (op == Op::spec_attention) return check_spec(a, opt, p, inv, start);
    const bool nonfinite = op == Op::attention || op == Op::vjp || op == Op::jvp || is_infsa(op);
    load_attention_inputs(a.inputs, p, nonfinite);
    const KernelArrayFile in(a.inputs), out(a.output);
    KernelVerdict verdict = KernelVerdict::pass;
    if (op == Op::attention) {
        const Array o = out.read("o", true);
        Array lse;
        if (out.has("lse")) lse = out.read("lse", true);
        const KernelCheckResult r = check_attention(p, o, out.has("lse") ? &lse : nullptr, opt);
        std::vector<NamedArray> arrays = {{"q", &p.q}, {"k", &p.k}, {"v", &p.v}, {"o", &o}};
        if (general_mask(p.mask)) arrays.emplace_back("mask", &p.mask_array);
        if (out.has("lse")) arrays.emplace_back("lse", &lse);
        verdict = emit(r.verdict, r.summary, {{"o", &r}}, a, arrays, inv, start);
    } else if (op == Op::vjp) {
        const Array dout = in.read("do", true);
        const Array dq = out.read("dq", true), dk = out.read("dk", true), dv = out.read("dv", true);
        const VjpCheckResult r = check_attention_vjp(p, dout, dq, dk, dv, opt);
        const Named tensors = {{"dq", &r.dq}, {"dk", &r.dk}, {"dv", &r.dv}};
        std::vector<NamedArray> arrays = {{"q", &p.q}, {"k", &p.k}, {"v", &p.v}, {"do", &dout},
                                          {"dq", &dq}, {"dk", &dk}, {"dv", &dv}};
        if (general_mask(p.mask)) arrays.emplace_back("mask", &p.mask_array);
        verdict = emit(r.verdict, r.summary, tensors, a, arrays, inv, start);
    } else if (is_infsa(op)) {
        const Array o = out.read("o", true);
        const KernelCheckResult r = op == Op::linear_infsa ? check_linear_infsa(p, a.infsa, o, opt)
                                    : op == Op::pure_infsa ? check_pure_infsa(p, a.infsa, o, opt)
                                                           : check_neumann(p, a.infsa, o, opt);
        verdict = emit(r.verdict, r.summary, {{"o", &r}}, a,
                       {{"q", &p.q}, {"k", &p.k}, {"v", &p.v}, {"o", &o}}, inv, start);
    } else {
        const Array tq = in.read("tq", true), tk = in.read("tk", true), tv = in.read("tv", true);
        const Array do_t = out.read("do_t", true);
        const KernelCheckResult r = check_attention_jvp(p, tq, tk, tv, do_t, opt);
        std::vector<NamedArray> arrays = {{"q", &p.q}, {"k", &p.k}, {"v", &p.v},    {"tq", &tq},
                                          {"tk", &tk}, {"tv", &tv}, {"do_t", &do_t}};
        if (general_mask(p.mask)) arrays.emplace_back("mask", &p.mask_array);
        verdict = emit(r.verdict, r.summary, {{"do_t", &r}}, a, arrays, inv, start);
    }
    return verdict == KernelVerdict::pass ? 0 : static_cast<int>(ExitCode::Violated);
}

}  // namespace attnspec::cli
