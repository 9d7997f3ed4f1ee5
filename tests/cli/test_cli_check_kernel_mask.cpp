// attnspec check-kernel attention --mask boolean|additive through the executable: --generate
// writes a reproducible mask with fully masked rows; a plain numpy float16 kernel applying the
// mask passes (with the mask stored as float 0/1 or as numpy bool); the same kernel reading the
// mask transposed, or (additive) with its sign flipped, exits 1 with "wrong"; a missing mask
// exits 66, a mask with --mask none 64, a mask of the wrong shape 65, linear-infsa 64.
#include "attnspec/io/kernel_files.hpp"
#include "attnspec/io/tensor_files.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::test;

namespace {

// argv: IN, kind, OUT (correct), TRANSPOSED, FLIPPED, IN_BOOL. Scores, softmax and PV in
// float32, P and O stored as float16; fully masked rows come out NaN (PyTorch's math path).
const char* kNumpyMasked = R"PY(
import sys
import numpy as np
z = np.load(sys.argv[1])
kind = sys.argv[2]
q, k, v = (z[n].astype(np.float32) for n in 'qkv')
M = z['mask'].astype(np.float32)
s = np.float32(1 / np.sqrt(q.shape[-1]))
S = np.einsum('hid,hjd->hij', q, k) * s
def run(M):
    X = np.where(M != 0, S, -np.inf) if kind == 'boolean' else S + M
    with np.errstate(invalid='ignore'):
        m = X.max(-1, keepdims=True)
        E = np.exp(X - m)
        l = E.sum(-1, keepdims=True)
        P = (E / l).astype(np.float16)
    O = np.einsum('hij,hjd->hid', P.astype(np.float32), v).astype(np.float16)
    return O, (m + np.log(l))[..., 0].astype(np.float32)
O, L = run(M)
np.savez(sys.argv[3], o=O, lse=L)
np.savez(sys.argv[4], o=run(np.swapaxes(M, 1, 2))[0])
np.savez(sys.argv[5], o=run(np.where(np.isfinite(M), -M, M))[0])
np.savez(sys.argv[6], q=z['q'], k=z['k'], v=z['v'], mask=M != 0)
)PY";

}  // namespace

TEST_CASE("check-kernel attention masks: numpy kernels pass, mask faults are wrong", "[cli]") {
    for (const std::string kind : {"boolean", "additive"}) {
        INFO(kind);
        TempDir dir;
        const std::string in = dir / "in.npz", out = dir / "out.npz", tr = dir / "tr.npz",
                          fl = dir / "fl.npz", in_bool = dir / "in_bool.npz";
        const std::string gen =
            "check-kernel attention --generate gaussian --seed 2 --shape "
            "2,48,16 --dtype fp16 --mask " +
            kind + " --inputs ";
        CliResult r = run_cli(gen + in);
        REQUIRE(r.code == 0);
        CHECK(has(r.out, "mask (" + kind + ")"));
        REQUIRE(run_cli(gen + (dir / "again.npz")).code == 0);
        CHECK(slurp(in) == slurp(dir / "again.npz"));
        CHECK(KernelArrayFile(in).read("mask", true).shape == std::vector<std::int64_t>{2, 48, 48});
        REQUIRE(python(kNumpyMasked,
                       in + " " + kind + " " + out + " " + tr + " " + fl + " " + in_bool) == 0);
        const std::string check = "check-kernel attention --dtype fp16 --mask " + kind + " ";
        r = run_cli(check + "--inputs " + in + " --output " + out);
        CHECK(r.code == 0);
        CHECK(has(r.out, "check-kernel attention: pass"));
        CHECK(has(r.out, "(6 fully masked)"));  // rows 7, 23, 39 of each head
        r = run_cli(check + "--inputs " + in + " --output " + tr);
        CHECK(r.code == 1);
        CHECK(has(r.out, "check-kernel attention: wrong"));
        if (kind == "additive") {
            r = run_cli(check + "--inputs " + in + " --output " + fl);
            CHECK(r.code == 1);
            CHECK(has(r.out, "check-kernel attention: wrong"));
        } else {  // the mask as numpy bool (|b1)
            CHECK(run_cli(check + "--inputs " + in_bool + " --output " + out).code == 0);
        }
    }
}

TEST_CASE("check-kernel attention masks: missing, unexpected and misshapen masks", "[cli]") {
    TempDir dir;
    const std::string plain = dir / "plain.npz", masked = dir / "masked.npz";
    REQUIRE(
        run_cli("check-kernel attention --generate gaussian --shape 24,8 --inputs " + plain).code ==
        0);
    REQUIRE(run_cli("check-kernel attention --generate gaussian --shape 24,8 --mask boolean "
                    "--inputs " +
                    masked)
                .code == 0);
    const std::string out = dir / "out.npz";
    {  // any array o of the right shape: v
        const kernels::Array v = KernelArrayFile(plain).read("v", false);
        write_npz(out, {{"o", v.shape, &v.values, true}});
    }
    CliResult r =
        run_cli("check-kernel attention --mask additive --inputs " + plain + " --output " + out);
    CHECK(r.code == 66);
    CHECK(has(r.err, "no array 'mask'"));
    r = run_cli("check-kernel attention --inputs " + masked + " --output " + out);
    CHECK(r.code == 64);
    CHECK(has(r.err, "--mask boolean or additive"));
    r = run_cli("check-kernel attention --mask causal --inputs " + masked + " --output " + out);
    CHECK(r.code == 64);
    // A (24, 23) mask for N_q = N_k = 24.
    {
        const KernelArrayFile f(plain);
        const kernels::Array q = f.read("q", false), k = f.read("k", false), v = f.read("v", false);
        const std::vector<double> ones(24 * 23, 1.0);
        write_npz(dir / "bad.npz", {{"q", q.shape, &q.values, true},
                                    {"k", k.shape, &k.values, true},
                                    {"v", v.shape, &v.values, true},
                                    {"mask", {24, 23}, &ones, true}});
    }
    r = run_cli("check-kernel attention --mask boolean --inputs " + (dir / "bad.npz") +
                " --output " + out);
    CHECK(r.code == 65);
    CHECK(has(r.err, "boolean mask has shape (24, 23), expected (24, 24)"));
    r = run_cli("check-kernel linear-infsa --mask boolean --inputs " + masked + " --output " + out);
    CHECK(r.code == 64);
    CHECK(has(r.err, "it has no mask or scale"));
    CHECK(run_cli("check-kernel attention --generate gaussian --shape 24,8 --mask causal "
                  "--inputs " +
                  (dir / "c.npz"))
              .code == 64);
}
