// attnspec check-kernel attention on inputs with NaN/Inf (docs/cli/check-kernel.md, "Non-finite
// inputs") through the executable: --generate writes the non-finite cases (attention only); a
// plain numpy float32 attention (max-subtracted softmax) passes with the expected NaN/Inf counted
// and none mismatched; the same output through numpy.nan_to_num is wrong (exit 1); the other
// operations refuse NaN/Inf inputs (65) and the non-finite cases (64).
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::test;

namespace {

// numpy float32 attention on argv[1] (no mask): o and lse to argv[2], and through
// numpy.nan_to_num to argv[3].
const char* kNumpyKernel = R"PY(
import sys
import numpy as np
z = np.load(sys.argv[1])
q, k, v = (z[n].astype(np.float32) for n in 'qkv')
s = np.float32(1 / np.sqrt(q.shape[-1]))
with np.errstate(all='ignore'):
    S = np.einsum('hid,hjd->hij', q, k) * s
    m = S.max(-1, keepdims=True)
    E = np.exp(S - m)
    l = E.sum(-1, keepdims=True)
    O = np.einsum('hij,hjd->hid', E / l, v)
    lse = (m + np.log(l))[..., 0]
np.savez(sys.argv[2], o=O, lse=lse)
np.savez(sys.argv[3], o=np.nan_to_num(O), lse=np.nan_to_num(lse))
)PY";

}  // namespace

TEST_CASE("check-kernel attention: NaN/Inf inputs and their stated propagation", "[cli]") {
    for (const char* name : {"nan-q", "inf-k", "nan-v", "inf-v"}) {
        CAPTURE(name);
        TempDir dir;
        const std::string in = dir / "in.npz", out = dir / "out.npz", bad = dir / "bad.npz";
        REQUIRE(run_cli(std::string("check-kernel attention --generate ") + name +
                        " --seed 3 --shape 2,32,8 --inputs " + in)
                    .code == 0);
        REQUIRE(python(kNumpyKernel, in + " " + out + " " + bad) == 0);
        const std::string check = "check-kernel attention --inputs " + in;
        CliResult r = run_cli(check + " --output " + out);
        CHECK(r.code == 0);
        CHECK(has(r.out, "check-kernel attention: pass"));
        CHECK(has(r.out, "break the stated propagation"));
        r = run_cli(check + " --output " + out + " --json");
        CHECK(r.code == 0);
        CHECK(has(r.out, "\"nonfinite_mismatch\": 0"));
        CHECK_FALSE(has(r.out, "\"nonfinite_expected\": 0"));
        r = run_cli(check + " --output " + bad + " --json");
        CHECK(r.code == 1);
        CHECK(has(r.out, "\"verdict\": \"wrong\""));
        CHECK_FALSE(has(r.out, "\"nonfinite_mismatch\": 0"));
    }
}

TEST_CASE("check-kernel: NaN/Inf inputs are for attention only", "[cli]") {
    TempDir dir;
    const std::string in = dir / "in.npz", vin = dir / "vjp.npz";
    REQUIRE(run_cli("check-kernel attention --generate nan-k --seed 1 --shape 16,8 --inputs " + in)
                .code == 0);
    CliResult r = run_cli(
        "check-kernel attention-vjp --generate nan-k --seed 1 --shape 16,8 --inputs " + vin);
    CHECK(r.code == 64);
    CHECK(has(r.err, "the non-finite cases are for check-kernel attention only"));
    r = run_cli("check-kernel pure-infsa --inputs " + in + " --output " + in);
    CHECK(r.code == 65);
    CHECK(has(r.err, "holds NaN or Inf (an input must be finite)"));
}
