// attnspec check-kernel linear-infsa through the executable: --generate writes a reproducible
// stress case (the attention cases and relu-zero, dominant-key); a plain numpy Linear-InfSA
// (float32 arithmetic, q_bar and the output stored as float16) passes at fp16 with exit 0; the
// same kernel with its query pooled by a plain mean instead of energy pooling exits 1 with the
// verdict "wrong", and its reproducer replays with --gamma/--eps to the same verdict; --mask or
// --scale with linear-infsa and --gamma with attention are usage errors.
// pure-infsa the same way: a plain numpy kernel passes, its Frobenius norm over one row is wrong.
#include "attnspec/io/kernel_files.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::test;

namespace {

// A plain numpy Linear-InfSA on argv[1] (gamma 0.9); writes o to argv[2], and to argv[3] the
// same with the query pooled by a plain mean.
const char* kNumpyLinearInfsa = R"PY(
import sys
import numpy as np
z = np.load(sys.argv[1])
q, k, v = (z[n].astype(np.float16) for n in 'qkv')
def run(mean_pool):
    qf, kf, vf = (x.astype(np.float32) for x in (q, k, v))
    c = np.float32(1 / np.sqrt(q.shape[-1]))
    qt = qf * c
    e = np.ones(qt.shape[:-1], np.float32) if mean_pool else np.linalg.norm(qt, axis=-1)
    qb = np.einsum('hi,hid->hd', e, qt) / (e.sum(-1)[:, None] + np.float32(1e-6))
    qb = qb.astype(np.float16).astype(np.float32)
    s = np.maximum(np.float32(0), np.einsum('hd,hjd->hj', qb, kf * c))
    p = np.float32(0.9) * np.einsum('hj,hjd->hd', s / (s.sum(-1)[:, None] + np.float32(1e-6)), vf)
    return np.broadcast_to(p[:, None, :], q.shape).astype(np.float16)
np.savez(sys.argv[2], o=run(False))
np.savez(sys.argv[3], o=run(True))
)PY";

// A plain numpy one-hop InfSA on argv[1]: A+ = ReLU(Q K^T / d) in float32 stored as float16,
// o = 0.95 A+ V / (||A+||_F + 1e-6) stored as float16, to argv[2]; to argv[3] with the norm of
// A+'s first row instead of its Frobenius norm.
const char* kNumpyPureInfsa = R"PY(
import sys
import numpy as np
z = np.load(sys.argv[1])
q, k, v = (z[n].astype(np.float32) for n in 'qkv')
A = np.maximum(np.float32(0), np.einsum('hid,hjd->hij', q, k) / np.float32(q.shape[-1]))
A = A.astype(np.float16).astype(np.float32)
for name, F in ((sys.argv[2], np.sqrt((A * A).sum((1, 2)))),
                (sys.argv[3], np.sqrt((A[:, 0] * A[:, 0]).sum(-1)))):
    o = np.float32(0.95) * np.einsum('hij,hjd->hid', A, v) / (F[:, None, None] + np.float32(1e-6))
    np.savez(name, o=o.astype(np.float16))
)PY";

}  // namespace

TEST_CASE("check-kernel linear-infsa: a plain numpy kernel passes, mean pooling is wrong",
          "[cli]") {
    TempDir dir;
    const std::string in = dir / "in.npz", out = dir / "out.npz", bad = dir / "bad.npz";
    REQUIRE(run_cli("check-kernel linear-infsa --generate heavy-tail --seed 7 --shape 2,64,32 "
                    "--dtype fp16 --inputs " +
                    in)
                .code == 0);
    REQUIRE(python(kNumpyLinearInfsa, in + " " + out + " " + bad) == 0);
    const std::string check = "check-kernel linear-infsa --dtype fp16 --gamma 0.9 --inputs " + in;
    CliResult r = run_cli(check + " --output " + out);
    CHECK(r.code == 0);
    CHECK(has(r.out, "check-kernel linear-infsa: pass"));
    r = run_cli(check + " --output " + bad + " --json");
    CHECK(r.code == 1);
    CHECK(has(r.out, "\"verdict\": \"wrong\""));
    CHECK(has(r.out, "\"gamma\": 0.9"));
    // its reproducer replays with --gamma/--eps (no --mask or --scale: usage errors here)
    const std::string repro = dir / "bad.repro.npz";
    REQUIRE(exists(repro));
    r = run_cli("check-kernel linear-infsa --inputs " + repro + " --output " + repro +
                " --dtype fp16 --accumulate fp32 --gamma 0.9 --eps 1e-06 --factor 2");
    CHECK(r.code == 1);
    CHECK(has(r.out, "check-kernel linear-infsa: wrong"));
    r = run_cli("check-kernel linear-infsa --dtype fp16 --inputs " + in + " --output " + out);
    CHECK(r.code == 1);  // gamma 0.95 against a kernel run with 0.9
}

TEST_CASE("check-kernel linear-infsa: its own stress cases, usage errors", "[cli]") {
    TempDir dir;
    const std::string gen = "check-kernel linear-infsa --generate relu-zero --shape 2,16,8 ";
    REQUIRE(run_cli(gen + "--seed 5 --dtype bf16 --inputs " + (dir / "a.npz")).code == 0);
    REQUIRE(run_cli(gen + "--seed 5 --dtype bf16 --inputs " + (dir / "b.npz")).code == 0);
    CHECK(slurp(dir / "a.npz") == slurp(dir / "b.npz"));
    CliResult r = run_cli("check-kernel attention --generate relu-zero --shape 2,16,8 --inputs " +
                          (dir / "c.npz"));
    CHECK(r.code == 64);  // an attention stress case it is not
    const std::string in = dir / "a.npz";
    r = run_cli("check-kernel linear-infsa --mask causal --inputs " + in + " --output " + in);
    CHECK(r.code == 64);
    CHECK(has(r.err, "--mask does not apply"));
    r = run_cli("check-kernel attention --gamma 0.5 --inputs " + in + " --output " + in);
    CHECK(r.code == 64);
    CHECK(has(r.err, "--gamma does not apply"));
    r = run_cli("check-kernel linear-infsa --eps -1 --inputs " + in + " --output " + in);
    CHECK(r.code == 64);
}

TEST_CASE("check-kernel pure-infsa: a plain numpy kernel passes, a one-row norm is wrong",
          "[cli]") {
    TempDir dir;
    const std::string in = dir / "in.npz", out = dir / "out.npz", bad = dir / "bad.npz";
    REQUIRE(run_cli("check-kernel pure-infsa --generate spike-v --seed 3 --shape 2,48,16 "
                    "--dtype fp16 --inputs " +
                    in)
                .code == 0);
    REQUIRE(python(kNumpyPureInfsa, in + " " + out + " " + bad) == 0);
    const std::string check = "check-kernel pure-infsa --dtype fp16 --inputs " + in;
    CliResult r = run_cli(check + " --output " + out);
    CHECK(r.code == 0);
    CHECK(has(r.out, "check-kernel pure-infsa: pass"));
    r = run_cli(check + " --output " + bad);
    CHECK(r.code == 1);
    CHECK(has(r.out, "check-kernel pure-infsa: wrong"));
}
