// attnspec check-kernel attention through the executable: --generate writes a reproducible stress
// case; a kernel output written beside it (attnspec's own baseline, from the library) passes with
// exit 0; so does a plain numpy float16 attention (written by the h5py/numpy interpreter); a
// planted wrong one (scale 1/d; numpy's output with one element off by 1 %) exits 1 with the
// verdict "wrong"; usage and file errors exit 64, 65, 66 with one line. attention-vjp and
// attention-jvp the same way: --generate writes do or the tangents, the baselines pass, planted
// faults (dK scaled by 1/d, dV without one query row, a JVP without its tv term) exit 1.
#include "attnspec/io/kernel_files.hpp"
#include "attnspec/io/tensor_files.hpp"
#include "attnspec/kernels/attention_check.hpp"
#include "attnspec/kernels/derivative_baseline.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::test;

namespace {

// Runs attnspec's baseline on the inputs of `in` (scale `scale`, 0: 1/sqrt(d)) and writes its o
// and lse to `out` as float32 (fp16 values are exact there).
void write_baseline(const std::string& in, const std::string& out, kernels::Format f, double scale,
                    kernels::MaskKind mask) {
    kernels::AttentionProblem p;
    load_attention_inputs(in, p);
    p.scale = scale, p.mask = mask;
    kernels::Array o, lse;
    kernels::baseline_attention(p, f, kernels::Format::fp32, o, lse);
    write_npz(out, {{"o", o.shape, &o.values, true}, {"lse", lse.shape, &lse.values, true}});
}

// A plain numpy float16 attention on argv[1]: scores, softmax and PV in float32, P and O stored
// as float16, causal; writes o and lse to argv[2] and, with one element off by 1 %, to argv[3].
const char* kNumpyKernel = R"PY(
import sys
import numpy as np
z = np.load(sys.argv[1])
q, k, v = (z[n].astype(np.float16) for n in 'qkv')
s = np.float32(1 / np.sqrt(q.shape[-1]))
S = np.einsum('hid,hjd->hij', q.astype(np.float32), k.astype(np.float32)) * s
N = S.shape[-1]
S = np.where(np.tril(np.ones((N, N), bool)), S, -np.inf)
m = S.max(-1, keepdims=True)
E = np.exp(S - m)
l = E.sum(-1, keepdims=True)
P = (E / l).astype(np.float16)
O = np.einsum('hij,hjd->hid', P.astype(np.float32), v.astype(np.float32)).astype(np.float16)
np.savez(sys.argv[2], o=O, lse=(m + np.log(l))[..., 0].astype(np.float32))
O[1, 20, 0] = np.float16(float(O[1, 20, 0]) * 1.01)
np.savez(sys.argv[3], o=O)
)PY";

}  // namespace

TEST_CASE("check-kernel attention: a plain numpy float16 kernel passes at fp16", "[cli]") {
    TempDir dir;
    const std::string in = dir / "in.npz", out = dir / "out.npz", bad = dir / "bad.npz";
    REQUIRE(run_cli("check-kernel attention --generate spike-v --seed 7 --shape 2,64,32 "
                    "--dtype fp16 --inputs " +
                    in)
                .code == 0);
    REQUIRE(python(kNumpyKernel, in + " " + out + " " + bad) == 0);
    const std::string check = "check-kernel attention --dtype fp16 --mask causal --inputs " + in;
    CliResult r = run_cli(check + " --output " + out);
    CHECK(r.code == 0);
    CHECK(has(r.out, "check-kernel attention: pass"));
    r = run_cli(check + " --output " + bad);
    CHECK(r.code == 1);
    CHECK(has(r.out, "check-kernel attention: wrong"));  // 1 % at fp16: beyond the bound
}

TEST_CASE("check-kernel generate: reproducible from case, seed and shape", "[cli]") {
    TempDir dir;
    const std::string gen = "check-kernel attention --generate near-ties --shape 2,24,8 ";
    CliResult r = run_cli(gen + "--seed 5 --dtype fp16 --inputs " + (dir / "a.npz"));
    REQUIRE(r.code == 0);
    CHECK(has(r.out, "wrote"));
    REQUIRE(run_cli(gen + "--seed 5 --dtype fp16 --inputs " + (dir / "b.npz")).code == 0);
    REQUIRE(run_cli(gen + "--seed 6 --dtype fp16 --inputs " + (dir / "c.npz")).code == 0);
    CHECK(slurp(dir / "a.npz") == slurp(dir / "b.npz"));
    CHECK(slurp(dir / "a.npz") != slurp(dir / "c.npz"));
    const KernelArrayFile f(dir / "a.npz");
    const kernels::Array q = f.read("q", false);
    CHECK(q.shape == std::vector<std::int64_t>{2, 24, 8});
    for (double x : q.values) CHECK(kernels::representable(x, kernels::Format::fp16));
}

TEST_CASE("check-kernel attention: the baseline passes, scale 1/d is wrong", "[cli]") {
    TempDir dir;
    const std::string in = dir / "in.npz", good = dir / "good.npz", bad = dir / "bad.npz";
    REQUIRE(run_cli("check-kernel attention --generate spike-v --seed 3 --shape 2,40,16 "
                    "--dtype fp16 --inputs " +
                    in)
                .code == 0);
    write_baseline(in, good, kernels::Format::fp16, 0, kernels::MaskKind::causal);
    write_baseline(in, bad, kernels::Format::fp16, 1.0 / 16, kernels::MaskKind::causal);
    const std::string check = "check-kernel attention --dtype fp16 --mask causal --inputs " + in;
    CliResult r = run_cli(check + " --output " + good);
    CHECK(r.code == 0);
    CHECK(has(r.out, "check-kernel attention: pass"));
    CHECK(has(r.out, "lse: max error"));
    r = run_cli(check + " --output " + bad + " --json");
    CHECK(r.code == 1);
    CHECK(has(r.out, "\"verdict\": \"wrong\""));
    CHECK(has(r.out, "\"worst_by_bound\""));
    r = run_cli(check + " --output " + bad);
    CHECK(r.code == 1);
    CHECK(has(r.out, "worst elements by error / bound"));
}

TEST_CASE("check-kernel attention: usage, data and missing-file errors", "[cli]") {
    TempDir dir;
    const std::string in = dir / "in.npz";
    REQUIRE(run_cli("check-kernel attention --generate gaussian --shape 8,4 --inputs " + in).code ==
            0);
    CliResult r = run_cli("check-kernel softmax --inputs " + in + " --output " + in);
    CHECK(r.code == 64);
    CHECK(has(r.err, "unknown operation 'softmax'"));
    r = run_cli("check-kernel attention --dtype fp8 --inputs " + in + " --output " + in);
    CHECK(r.code == 64);
    CHECK(has(r.err, "(option --dtype)"));
    r = run_cli("check-kernel attention --inputs " + in + " --output " + (dir / "none.npz"));
    CHECK(r.code == 66);
    r = run_cli("check-kernel attention --inputs " + in + " --output " + in);
    CHECK(r.code == 65);
    CHECK(has(r.err, "no array 'o'"));
    r = run_cli("check-kernel attention --generate gaussian --shape 8,4 --mask causal --inputs " +
                in);
    CHECK(r.code == 64);
}

TEST_CASE("check-kernel attention-vjp and attention-jvp: baselines pass, planted faults do not",
          "[cli]") {
    TempDir dir;
    const kernels::Format f = kernels::Format::bf16;
    const std::string in = dir / "vjp.npz", good = dir / "good.npz", bad = dir / "bad.npz";
    REQUIRE(run_cli("check-kernel attention-vjp --generate gaussian --seed 3 --shape 2,32,16 "
                    "--dtype bf16 --inputs " +
                    in)
                .code == 0);
    kernels::AttentionProblem p;
    load_attention_inputs(in, p);
    p.mask = kernels::MaskKind::causal;
    const kernels::Array dout = KernelArrayFile(in).read("do", false);
    kernels::Array dq, dk, dv;
    kernels::baseline_vjp(p, dout, f, kernels::Format::fp32, dq, dk, dv);
    write_npz(good, {{"dq", dq.shape, &dq.values, true},
                     {"dk", dk.shape, &dk.values, true},
                     {"dv", dv.shape, &dv.values, true}});
    const std::string check =
        "check-kernel attention-vjp --dtype bf16 --mask causal --inputs " + in + " --output ";
    CliResult r = run_cli(check + good);
    CHECK(r.code == 0);
    CHECK(has(r.out, "check-kernel attention-vjp: pass"));
    CHECK(has(r.out, "dv: pass"));
    // dV without query row 5 of head 0: the baseline's dV with that row of dO zeroed
    kernels::Array dropped = dout, unused_q, unused_k, dv_dropped;
    for (long c = 0; c < 16; ++c) dropped.values[5 * 16 + c] = 0;
    kernels::baseline_vjp(p, dropped, f, kernels::Format::fp32, unused_q, unused_k, dv_dropped);
    write_npz(bad, {{"dq", dq.shape, &dq.values, true},
                    {"dk", dk.shape, &dk.values, true},
                    {"dv", dv.shape, &dv_dropped.values, true}});
    r = run_cli(check + bad);
    CHECK(r.code == 1);
    CHECK(has(r.out, "check-kernel attention-vjp: wrong"));
    CHECK(has(r.out, "dv: wrong"));
    // dK scaled by 1/d instead of 1/sqrt(d)
    for (double& x : dk.values) x = kernels::round_to(x / 4, f);
    write_npz(bad, {{"dq", dq.shape, &dq.values, true},
                    {"dk", dk.shape, &dk.values, true},
                    {"dv", dv.shape, &dv.values, true}});
    r = run_cli(check + bad + " --json");
    CHECK(r.code == 1);
    CHECK(has(r.out, "\"verdict\": \"wrong\""));
    CHECK(has(r.out, "\"outputs\""));
    r = run_cli(check + (dir / "none.npz"));
    CHECK(r.code == 66);
    r = run_cli(check + in);  // no dq in IN
    CHECK(r.code == 65);
    CHECK(has(r.err, "no array 'dq'"));

    // attention-jvp: the tangents in IN, do_t in OUT
    const std::string tin = dir / "jvp.npz";
    REQUIRE(run_cli("check-kernel attention-jvp --generate heavy-tail --seed 4 --shape 2,32,16 "
                    "--dtype bf16 --inputs " +
                    tin)
                .code == 0);
    const KernelArrayFile tf(tin);
    kernels::AttentionProblem pt;
    load_attention_inputs(tin, pt);
    kernels::Array tq = tf.read("tq", false), tk = tf.read("tk", false), tv = tf.read("tv", false);
    kernels::Array o;
    kernels::baseline_jvp(pt, tq, tk, tv, f, kernels::Format::fp32, o);
    write_npz(good, {{"do_t", o.shape, &o.values, true}});
    const std::string tcheck =
        "check-kernel attention-jvp --dtype bf16 --inputs " + tin + " --output ";
    r = run_cli(tcheck + good);
    CHECK(r.code == 0);
    CHECK(has(r.out, "check-kernel attention-jvp: pass"));
    for (double& x : tv.values) x = 0;  // forgets the tv term
    kernels::baseline_jvp(pt, tq, tk, tv, f, kernels::Format::fp32, o);
    write_npz(bad, {{"do_t", o.shape, &o.values, true}});
    r = run_cli(tcheck + bad);
    CHECK(r.code == 1);
    CHECK(has(r.out, "check-kernel attention-jvp: wrong"));
    r = run_cli("check-kernel attention-jvp --inputs " + in + " --output " + good);
    CHECK(r.code == 65);  // a vjp case has no tangents
    CHECK(has(r.err, "no array 'tq'"));
}
