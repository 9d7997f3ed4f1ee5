// attnspec check-kernel attention-vjp | attention-jvp --mask boolean|additive through the
// executable: --generate writes the case's mask beside do (or tq, tk, tv); attnspec's baselines
// on it pass (exit 0, the fully masked rows counted); the same baselines run without the mask
// (the kernel ignores it) exit 1 with "wrong", and the reproducer written beside the report
// holds the mask. spec-attention likewise: its --generate writes a mask for x's shape, its
// baseline with the mask passes, without it is wrong.
#include "attnspec/io/kernel_files.hpp"
#include "attnspec/io/tensor_files.hpp"
#include "attnspec/kernels/derivative_baseline.hpp"
#include "attnspec/kernels/spec_attention_check.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::test;

namespace {

// dq, dk, dv (vjp) or do_t (jvp) of attnspec's fp16 baseline on IN, with its mask or without.
void write_outputs(const std::string& op, const std::string& in, const std::string& out,
                   kernels::MaskKind kind, bool apply_mask) {
    kernels::AttentionProblem p;
    p.mask = kind;
    load_attention_inputs(in, p);
    if (!apply_mask) p.mask = kernels::MaskKind::none, p.mask_array = kernels::Array{};
    const KernelArrayFile f(in);
    std::vector<kernels::Array> res(op == "attention-vjp" ? 3 : 1);
    if (op == "attention-vjp")
        kernels::baseline_vjp(p, f.read("do", false), kernels::Format::fp16, kernels::Format::fp32,
                              res[0], res[1], res[2]);
    else
        kernels::baseline_jvp(p, f.read("tq", false), f.read("tk", false), f.read("tv", false),
                              kernels::Format::fp16, kernels::Format::fp32, res[0]);
    const std::vector<std::string> names = op == "attention-vjp"
                                               ? std::vector<std::string>{"dq", "dk", "dv"}
                                               : std::vector<std::string>{"do_t"};
    std::vector<NpyArray> arrays;
    for (size_t i = 0; i < res.size(); ++i)
        arrays.push_back({names[i], res[i].shape, &res[i].values, true});
    write_npz(out, arrays);
}

}  // namespace

TEST_CASE("check-kernel derivatives with masks: baselines pass, mask-blind kernels are wrong",
          "[cli]") {
    for (const std::string op : {"attention-vjp", "attention-jvp"})
        for (const std::string kind : {"boolean", "additive"}) {
            INFO(op << " " << kind);
            TempDir dir;
            const std::string in = dir / "in.npz", good = dir / "good.npz",
                              blind = dir / "blind.npz";
            CliResult r = run_cli("check-kernel " + op +
                                  " --generate near-ties --seed 3 --shape 2,40,16 --dtype fp16 "
                                  "--mask " +
                                  kind + " --inputs " + in);
            REQUIRE(r.code == 0);
            CHECK(has(r.out, "mask (" + kind + ")"));
            const KernelArrayFile f(in);
            CHECK(f.has(op == "attention-vjp" ? "do" : "tv"));
            CHECK(f.read("mask", true).shape == std::vector<std::int64_t>{2, 40, 40});
            const kernels::MaskKind mk = kernels::parse_mask(kind, "mask");
            write_outputs(op, in, good, mk, true);
            write_outputs(op, in, blind, mk, false);
            const std::string check = "check-kernel " + op + " --dtype fp16 --mask " + kind + " ";
            r = run_cli(check + "--inputs " + in + " --output " + good);
            CHECK(r.code == 0);
            CHECK(has(r.out, "check-kernel " + op + ": pass"));
            CHECK(has(r.out, "fully masked"));  // rows 7, 23, 39 of each head
            r = run_cli(check + "--inputs " + in + " --output " + blind + " --out " +
                        (dir / "r.h5"));
            CHECK(r.code == 1);
            CHECK(has(r.out, ": wrong"));
            CHECK(KernelArrayFile(dir / "r.repro.npz").has("mask"));
            // without --mask the file's mask is a usage error; the mask of the wrong kind's
            // values (additive -inf read as boolean) is refused as data
            CHECK(
                run_cli("check-kernel " + op + " --dtype fp16 --inputs " + in + " --output " + good)
                    .code == 64);
            if (kind == "additive")
                CHECK(run_cli("check-kernel " + op + " --dtype fp16 --mask boolean --inputs " + in +
                              " --output " + good)
                          .code == 65);
        }
}

TEST_CASE("check-kernel spec-attention with masks: the baseline passes, a mask-blind one is wrong",
          "[cli]") {
    for (const std::string kind : {"boolean", "additive"}) {
        INFO(kind);
        TempDir dir;
        const std::string in = dir / "in.npz", good = dir / "good.npz", blind = dir / "blind.npz";
        CliResult r = run_cli(
            "check-kernel spec-attention --generate gaussian --seed 3 --shape "
            "2,32,16,8 --dtype bf16 --mask " +
            kind + " --inputs " + in);
        REQUIRE(r.code == 0);
        CHECK(has(r.out, "mask (" + kind + ")"));
        const KernelArrayFile f(in);
        CHECK(f.read("mask", true).shape == std::vector<std::int64_t>{2, 32, 32});
        kernels::SpecAttentionProblem p;
        p.x = f.read("x", false), p.w_q = f.read("w_q", false), p.w_k = f.read("w_k", false);
        p.w_v = f.read("w_v", false);
        p.mask = kernels::parse_mask(kind, "mask"), p.mask_array = f.read("mask", true);
        const kernels::Format bf16 = kernels::Format::bf16, fp32 = kernels::Format::fp32;
        kernels::Array o = kernels::baseline_spec_attention(p, bf16, fp32);
        write_npz(good, {{"o", o.shape, &o.values, true}});
        p.mask = kernels::MaskKind::none, p.mask_array = kernels::Array{};
        o = kernels::baseline_spec_attention(p, bf16, fp32);
        write_npz(blind, {{"o", o.shape, &o.values, true}});
        const std::string check =
            "check-kernel spec-attention --dtype bf16 --mask " + kind + " --inputs " + in;
        r = run_cli(check + " --output " + good);
        CHECK(r.code == 0);
        CHECK(has(r.out, "check-kernel spec-attention: pass"));
        r = run_cli(check + " --output " + blind);
        CHECK(r.code == 1);
        CHECK(has(r.out, ": wrong"));
        CHECK(
            run_cli("check-kernel spec-attention --dtype bf16 --inputs " + in + " --output " + good)
                .code == 64);
    }
}
