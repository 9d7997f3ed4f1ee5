// attnspec check-kernel attention, attention-vjp and attention-jvp on inputs with NaN/Inf
// (docs/cli/check-kernel.md, "Non-finite inputs") through the executable: --generate writes the
// non-finite cases of each operation; plain numpy float32 kernels (max-subtracted softmax) pass
// with the expected NaN/Inf counted and none mismatched; the same outputs through numpy.nan_to_num
// are wrong (exit 1); a case of another operation is refused (64). neumann: a numpy float32 LU
// solve passes on nan-v and inf-k, its numpy.nan_to_num is wrong (linear-infsa's, pure-infsa's and
// the Python parity: tests/python/test_package_testing_infsa_nonfinite.py).
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

// numpy float32 derivatives of attention (no mask) on argv[2] for argv[1] = vjp or jvp: dq, dk,
// dv or do_t to argv[3], and through numpy.nan_to_num to argv[4].
const char* kNumpyDerivative = R"PY(
import sys
import numpy as np
z = np.load(sys.argv[2])
q, k, v = (z[n].astype(np.float32) for n in 'qkv')
s = np.float32(1 / np.sqrt(q.shape[-1]))
e = lambda spec, *a: np.einsum(spec, *a)
with np.errstate(all='ignore'):
    S = e('hid,hjd->hij', q, k) * s
    E = np.exp(S - S.max(-1, keepdims=True))
    P = E / E.sum(-1, keepdims=True)
    if sys.argv[1] == 'vjp':
        do = z['do'].astype(np.float32)
        O = e('hij,hjd->hid', P, v)
        dS = P * (e('hid,hjd->hij', do, v) - (do * O).sum(-1, keepdims=True))
        out = dict(dq=s * e('hij,hjd->hid', dS, k), dk=s * e('hij,hid->hjd', dS, q),
                   dv=e('hij,hid->hjd', P, do))
    else:
        tq, tk, tv = (z[n].astype(np.float32) for n in ('tq', 'tk', 'tv'))
        ds = s * (e('hid,hjd->hij', tq, k) + e('hid,hjd->hij', q, tk))
        W = P * (ds - (P * ds).sum(-1, keepdims=True))
        out = dict(do_t=e('hij,hjd->hid', W, v) + e('hij,hjd->hid', P, tv))
np.savez(sys.argv[3], **out)
np.savez(sys.argv[4], **{n: np.nan_to_num(a) for n, a in out.items()})
)PY";

// numpy float32 Neumann kernel on argv[1] (gamma 0.95, eps 1e-6; ReLU as np.maximum: NaN stays):
// O = (I - G)^-1 (G V) by numpy.linalg.solve (LAPACK LU) per head, NaN where LAPACK meets a zero
// pivot (NaN in G can give one), to argv[2], through numpy.nan_to_num to argv[3].
const char* kNumpyNeumann = R"PY(
import sys
import numpy as np
z = np.load(sys.argv[1])
q, k, v = (z[n].astype(np.float32) for n in 'qkv')
with np.errstate(all='ignore'):
    a = np.maximum(np.float32(0), np.einsum('hid,hjd->hij', q, k) / np.float32(q.shape[-1]))
    f = np.sqrt((a * a).sum(axis=(-2, -1), keepdims=True))
    G = np.float32(0.95) * a / (f + np.float32(1e-6))
    I = np.eye(q.shape[-2], dtype=np.float32)
    O = np.empty(v.shape, np.float32)
    for h in range(len(G)):
        try:
            O[h] = np.linalg.solve(I - G[h], G[h] @ v[h])
        except np.linalg.LinAlgError:
            O[h] = np.nan
np.savez(sys.argv[2], o=O)
np.savez(sys.argv[3], o=np.nan_to_num(O))
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

TEST_CASE("check-kernel attention-vjp and jvp: NaN/Inf inputs and their propagation", "[cli]") {
    for (const char* name :
         {"nan-q", "inf-k", "nan-v", "nan-do", "inf-do", "nan-tq", "inf-tk", "nan-tv", "inf-v"}) {
        const std::string n = name;
        for (const char* op : {"vjp", "jvp"}) {
            const bool vjp = std::string(op) == "vjp";
            if ((n.size() == 6 && n[4] == 'd' && !vjp) || (n.size() == 6 && n[4] == 't' && vjp))
                continue;  // a direction case of the other derivative
            CAPTURE(name, op);
            TempDir dir;
            const std::string in = dir / "in.npz", out = dir / "out.npz", bad = dir / "bad.npz";
            const std::string cmd = std::string("check-kernel attention-") + op;
            REQUIRE(run_cli(cmd + " --generate " + n + " --seed 4 --shape 2,24,8 --inputs " + in)
                        .code == 0);
            REQUIRE(python(kNumpyDerivative, std::string(op) + " " + in + " " + out + " " + bad) ==
                    0);
            CliResult r = run_cli(cmd + " --inputs " + in + " --output " + out + " --json");
            CHECK(r.code == 0);
            CHECK(has(r.out, "\"nonfinite_mismatch\": 0"));
            CHECK(has(r.out, "break the stated propagation"));
            r = run_cli(cmd + " --inputs " + in + " --output " + bad);
            CHECK(r.code == 1);
            CHECK(has(r.out, ": wrong"));
        }
    }
}

TEST_CASE("check-kernel: NaN/Inf inputs for attention, derivatives, linear and pure InfSA",
          "[cli]") {
    TempDir dir;
    const std::string in = dir / "in.npz", vin = dir / "vjp.npz";
    REQUIRE(run_cli("check-kernel attention --generate nan-k --seed 1 --shape 16,8 --inputs " + in)
                .code == 0);
    CliResult r = run_cli(
        "check-kernel attention-jvp --generate nan-do --seed 1 --shape 16,8 --inputs " + vin);
    CHECK(r.code == 64);
    CHECK(has(r.err, "nan-do: not a non-finite case of this operation"));
    r = run_cli("check-kernel attention --generate inf-tq --seed 1 --shape 16,8 --inputs " + vin);
    CHECK(r.code == 64);
    r = run_cli("check-kernel neumann --generate nan-do --seed 1 --shape 16,8 --inputs " + vin);
    CHECK(r.code == 64);
    CHECK(has(r.err, "attention, linear-infsa, pure-infsa, neumann: nan-q .. inf-v"));
    REQUIRE(
        run_cli("check-kernel linear-infsa --generate nan-q --seed 1 --shape 16,8 --inputs " + vin)
            .code == 0);
}

TEST_CASE("check-kernel neumann: NaN/Inf inputs and their stated propagation", "[cli]") {
    for (const char* name : {"nan-v", "inf-k"}) {
        CAPTURE(name);
        TempDir dir;
        const std::string in = dir / "in.npz", out = dir / "out.npz", bad = dir / "bad.npz";
        REQUIRE(run_cli(std::string("check-kernel neumann --generate ") + name +
                        " --seed 3 --shape 2,24,8 --inputs " + in)
                    .code == 0);
        REQUIRE(python(kNumpyNeumann, in + " " + out + " " + bad) == 0);
        const std::string check = "check-kernel neumann --inputs " + in;
        CliResult r = run_cli(check + " --output " + out + " --json");
        INFO(r.out << r.err);
        CHECK(r.code == 0);
        CHECK(has(r.out, "\"verdict\": \"pass\""));
        CHECK(has(r.out, "\"nonfinite_mismatch\": 0"));
        CHECK_FALSE(has(r.out, "\"nonfinite_expected\": 0"));
        r = run_cli(check + " --output " + bad);
        CHECK(r.code == 1);
        CHECK(has(r.out, "check-kernel neumann: wrong"));
        CHECK(has(r.out, "break the stated propagation"));
    }
}
