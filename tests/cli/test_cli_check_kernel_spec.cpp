// attnspec check-kernel spec-attention through the executable: --generate writes a reproducible
// stress case (x, w_q, w_k, w_v); a plain numpy SpecA (float32 arithmetic, W + C from float64)
// passes with exit 0 under --correction lambda and svd; the same kernel without C_V, or with the
// SVD correction scaled by sigma_r, exits 1 with "wrong", and its reproducer replays with
// --correction/--lambda to the same verdict; --junit and --out carry the correction; bad lambda,
// shapes and options are usage (64) or data (65) errors naming what is wrong.
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::test;

namespace {

// A plain numpy SpecA on argv[1] with lambda = argv[2] ("svd": the SVD correction); writes the
// output to argv[3], to argv[4] the same with a planted fault (C_V omitted for lambda, sigma_r
// instead of sigma_1 for svd).
const char* kNumpySpecA = R"PY(
import sys
import numpy as np
z = np.load(sys.argv[1])
x = z['x'].astype(np.float64)
W = [z[n].astype(np.float64) for n in ('w_q', 'w_k', 'w_v')]
def corr(w, fault):
    if sys.argv[2] == 'svd':
        U, s, Vt = np.linalg.svd(w, full_matrices=False)
        return (s[-1] if fault else s[0]) * U @ Vt
    return float(sys.argv[2]) * np.eye(*w.shape)
def run(fault):
    Wp = [(w + (0 if fault and i == 2 and sys.argv[2] != 'svd' else corr(w, fault))).astype(np.float32)
          for i, w in enumerate(W)]
    xf = x.astype(np.float32)
    Q, K, V = (xf @ w for w in Wp)
    L = (Q @ K.T) / np.float32(np.sqrt(Wp[0].shape[1]))
    P = np.exp(L - L.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    return (P @ V).astype(np.float32)
np.savez(sys.argv[3], o=run(False))
np.savez(sys.argv[4], o=run(True))
)PY";

}  // namespace

TEST_CASE("check-kernel spec-attention: a plain numpy kernel passes, planted faults are wrong",
          "[cli]") {
    TempDir dir;
    const std::string in = dir / "in.npz", out = dir / "out.npz", bad = dir / "bad.npz";
    REQUIRE(run_cli("check-kernel spec-attention --generate rank-deficient-w --seed 4 --shape "
                    "48,24,8 --inputs " +
                    in)
                .code == 0);
    for (const char* corr : {"10", "svd"}) {
        INFO(corr);
        REQUIRE(python(kNumpySpecA, in + " " + corr + " " + out + " " + bad) == 0);
        const std::string check =
            std::string("check-kernel spec-attention --inputs ") + in +
            (std::string(corr) == "svd" ? " --correction svd" : " --correction lambda --lambda 10");
        CliResult r = run_cli(check + " --output " + out);
        CHECK(r.code == 0);
        CHECK(has(r.out, "check-kernel spec-attention: pass"));
        r = run_cli(check + " --output " + bad + " --json --junit " + (dir / "j.xml") + " --out " +
                    (dir / "r.h5"));
        CHECK(r.code == 1);
        CHECK(has(r.out, "\"verdict\": \"wrong\""));
        CHECK(has(slurp(dir / "j.xml"), "name=\"correction\""));
        // the reproducer replays with the same correction to the same verdict
        const std::string repro = dir / "r.repro.npz";
        REQUIRE(exists(repro));
        r = run_cli("check-kernel spec-attention --inputs " + repro + " --output " + repro +
                    " --dtype fp32 --accumulate fp32 --mask none --scale 0.353553390593273731" +
                    (std::string(corr) == "svd" ? " --correction svd"
                                                : " --correction lambda --lambda 10") +
                    " --factor 2");
        CHECK(r.code == 1);
        CHECK(has(r.out, "check-kernel spec-attention: wrong"));
        CHECK(has(slurp(repro), "--correction"));
    }
    // lambda 10 against a kernel run with the SVD correction
    CHECK(run_cli("check-kernel spec-attention --inputs " + in + " --output " + out).code == 1);
}

TEST_CASE("check-kernel spec-attention: stress cases, usage and data errors", "[cli]") {
    TempDir dir;
    const std::string gen = "check-kernel spec-attention --generate large-lambda --shape 2,16,8,4 ";
    CliResult r = run_cli(gen + "--seed 5 --dtype bf16 --inputs " + (dir / "a.npz"));
    REQUIRE(r.code == 0);
    CHECK(has(r.out, "--lambda 100"));
    REQUIRE(run_cli(gen + "--seed 5 --dtype bf16 --inputs " + (dir / "b.npz")).code == 0);
    CHECK(slurp(dir / "a.npz") == slurp(dir / "b.npz"));
    r = run_cli("check-kernel spec-attention --generate spike-v --shape 16,8,4 --inputs " +
                (dir / "c.npz"));
    CHECK(r.code == 64);
    r = run_cli("check-kernel spec-attention --generate gaussian --shape 16,8 --inputs " +
                (dir / "c.npz"));
    CHECK(r.code == 64);
    const std::string in = dir / "a.npz";
    const std::string check = "check-kernel spec-attention --inputs " + in + " --output " + in;
    r = run_cli(check + " --lambda -1");
    CHECK(r.code == 64);
    r = run_cli(check + " --correction polar");
    CHECK(r.code == 64);
    CHECK(has(r.err, "correction"));
    r = run_cli(check + " --correction svd --lambda 3");
    CHECK(r.code == 64);
    r = run_cli("check-kernel attention --lambda 3 --inputs " + in + " --output " + in);
    CHECK(r.code == 64);
    CHECK(has(r.err, "--lambda does not apply"));
    r = run_cli(check);  // IN has no o
    CHECK(r.code == 65);
    // x's columns must match the weights' rows: w_k with 7 rows
    REQUIRE(python("import sys, numpy as np\n"
                   "np.savez(sys.argv[1], x=np.ones((6, 8)), w_q=np.ones((8, 4)), "
                   "w_k=np.ones((7, 4)), w_v=np.ones((8, 4)))\n"
                   "np.savez(sys.argv[2], o=np.ones((6, 4)))\n",
                   (dir / "s.npz") + " " + (dir / "o.npz")) == 0);
    r = run_cli("check-kernel spec-attention --inputs " + (dir / "s.npz") + " --output " +
                (dir / "o.npz"));
    CHECK(r.code == 65);
    CHECK(has(r.err, "w_k has shape (7, 4)"));
    r = run_cli("check-kernel spec-attention --correction svd --inputs " + (dir / "s.npz") +
                " --output " + (dir / "o.npz"));
    CHECK(r.code == 65);  // the shapes are checked before any SVD
}

TEST_CASE("check-kernel spec-attention: NaN/Inf in x or a weight", "[cli]") {
    TempDir dir;
    const std::string in = dir / "in.npz", out = dir / "out.npz", bad = dir / "bad.npz";
    // A plain numpy float32 SpecA (lambda 10) on argv[1], causal: the output to argv[2], through
    // numpy.nan_to_num to argv[3].
    const char* kernel = R"PY(
import sys
import numpy as np
z = np.load(sys.argv[1])
with np.errstate(all='ignore'):
    Wp = [(z[n].astype(np.float64) + 10 * np.eye(*z[n].shape)).astype(np.float32)
          for n in ('w_q', 'w_k', 'w_v')]
    xf = z['x'].astype(np.float32)
    Q, K, V = (xf @ w for w in Wp)
    L = (Q @ K.T) / np.float32(np.sqrt(Wp[0].shape[1]))
    L = np.where(np.tril(np.ones(L.shape, bool)), L, -np.inf)
    P = np.exp(L - L.max(1, keepdims=True))
    P /= P.sum(1, keepdims=True)
    O = (P @ V).astype(np.float32)
np.savez(sys.argv[2], o=O)
np.savez(sys.argv[3], o=np.nan_to_num(O))
)PY";
    CliResult r = run_cli(
        "check-kernel spec-attention --generate nan-x --seed 3 --shape 32,16,8 "
        "--inputs " +
        in);
    REQUIRE(r.code == 0);
    CHECK(has(r.out, "case nan-x"));
    REQUIRE(python(kernel, in + " " + out + " " + bad) == 0);
    const std::string check = "check-kernel spec-attention --mask causal --inputs " + in;
    r = run_cli(check + " --output " + out + " --json");
    CHECK(r.code == 0);
    CHECK(has(r.out, "\"verdict\": \"pass\""));
    CHECK(has(r.out, "\"nonfinite_mismatch\": 0"));
    CHECK_FALSE(has(r.out, "\"nonfinite_expected\": 0,"));
    r = run_cli(check + " --output " + bad + " --out " + (dir / "r.h5"));
    CHECK(r.code == 1);
    CHECK(has(r.out, "check-kernel spec-attention: wrong"));
    // the reproducer keeps the NaN and replays to the same verdict
    const std::string repro = dir / "r.repro.npz";
    REQUIRE(exists(repro));
    r = run_cli("check-kernel spec-attention --inputs " + repro + " --output " + repro +
                " --mask causal --correction lambda --lambda 10");
    CHECK(r.code == 1);
    CHECK(has(r.out, "check-kernel spec-attention: wrong"));
    // a non-finite weight under the SVD correction, and NaN under a boolean mask, are data errors
    REQUIRE(run_cli("check-kernel spec-attention --generate inf-w --seed 3 --shape 32,16,8 "
                    "--inputs " +
                    in)
                .code == 0);
    r = run_cli("check-kernel spec-attention --correction svd --inputs " + in + " --output " + out);
    CHECK(r.code == 65);
    CHECK(has(r.err, "the SVD correction of a non-finite weight is not defined"));
    REQUIRE(run_cli("check-kernel spec-attention --generate nan-x --seed 3 --shape 32,16,8 "
                    "--mask boolean --inputs " +
                    in)
                .code == 0);
    r = run_cli("check-kernel spec-attention --mask boolean --inputs " + in + " --output " + out);
    CHECK(r.code == 65);
    CHECK(has(r.err, "holds NaN or Inf"));
}
