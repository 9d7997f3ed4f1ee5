// attnspec check-kernel neumann through the executable: --generate writes its stress cases
// (rank-one among them); a plain numpy Neumann kernel in float32 (np.linalg.solve of
// (I - G) O = G V) passes at fp32 with exit 0; the same kernel returning (I - G)^-1 V (the
// identity not removed) exits 1 with the verdict "wrong", lists in --json's "files" the
// reproducer, report and JUnit XML it wrote, and its reproducer replays with --gamma/--eps to the
// same verdict; --gamma outside (0, 1), --eps <= 0 and --mask are usage errors.
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::test;

namespace {

// A plain numpy Neumann kernel on argv[1] (gamma 0.9, eps 1e-6, float32): writes o to argv[2],
// and to argv[3] (I - G)^-1 V instead of ((I - G)^-1 - I) V.
const char* kNumpyNeumann = R"PY(
import sys
import numpy as np
z = np.load(sys.argv[1])
q, k, v = (z[n].astype(np.float32) for n in 'qkv')
A = np.maximum(np.float32(0), np.einsum('hid,hjd->hij', q, k) / np.float32(q.shape[-1]))
F = np.sqrt((A * A).sum((1, 2)))
G = np.float32(0.9) * A / (F[:, None, None] + np.float32(1e-6))
M = np.eye(q.shape[1], dtype=np.float32)[None] - G
np.savez(sys.argv[2], o=np.linalg.solve(M, G @ v).astype(np.float32))
np.savez(sys.argv[3], o=np.linalg.solve(M, v).astype(np.float32))
)PY";

// The strings of --json's "files" array, in order.
std::vector<std::string> files_of(const std::string& json) {
    std::vector<std::string> files;
    const auto at = json.find("\"files\": [");
    if (at == std::string::npos) return {"(no files member)"};
    const auto end = json.find(']', at);
    for (auto q = json.find('"', at + 9); q < end; q = json.find('"', q + 1)) {
        const auto close = json.find('"', q + 1);
        files.push_back(json.substr(q + 1, close - q - 1));
        q = close;
    }
    return files;
}

}  // namespace

TEST_CASE("check-kernel neumann: a numpy kernel passes, the identity kept is wrong", "[cli]") {
    TempDir dir;
    const std::string in = dir / "in.npz", out = dir / "out.npz", bad = dir / "bad.npz";
    CliResult r = run_cli(
        "check-kernel neumann --generate rank-one --seed 3 --shape 2,48,16 "
        "--inputs " +
        in + " --json");
    REQUIRE(r.code == 0);
    CHECK(files_of(r.out) == std::vector<std::string>{in});
    REQUIRE(python(kNumpyNeumann, in + " " + out + " " + bad) == 0);
    const std::string check = "check-kernel neumann --gamma 0.9 --inputs " + in;
    r = run_cli(check + " --output " + out + " --json");
    CHECK(r.code == 0);
    CHECK(has(r.out, "\"verdict\": \"pass\""));
    CHECK(files_of(r.out).empty());
    const std::string report = dir / "r.h5", junit = dir / "j.xml", repro = dir / "r.repro.npz";
    r = run_cli(check + " --output " + bad + " --json --out " + report + " --junit " + junit);
    CHECK(r.code == 1);
    CHECK(has(r.out, "\"verdict\": \"wrong\""));
    CHECK(has(r.out, "\"gamma\": 0.9"));
    CHECK(files_of(r.out) == std::vector<std::string>{repro, report, junit});
    REQUIRE(exists(repro));
    CHECK(exists(report));
    CHECK(has(slurp(junit), "<property name=\"gamma\" value=\"0.9\"/>"));
    CHECK(python("import sys, h5py\nf = h5py.File(sys.argv[1], 'r')['check_kernel']\n"
                 "sys.exit(0 if (f.attrs['gamma'], f.attrs['eps'], f.attrs['op']) == "
                 "(0.9, 1e-6, 'neumann') else 1)",
                 report) == 0);
    r = run_cli("check-kernel neumann --inputs " + repro + " --output " + repro +
                " --dtype fp32 --accumulate fp32 --gamma 0.9 --eps 1e-06 --factor 2");
    CHECK(r.code == 1);
    CHECK(has(r.out, "check-kernel neumann: wrong"));
    r = run_cli("check-kernel neumann --inputs " + in + " --output " + out);
    CHECK(r.code == 1);  // gamma 0.95 against a kernel run with 0.9
}

TEST_CASE("check-kernel neumann: gamma, eps and mask are usage errors", "[cli]") {
    TempDir dir;
    const std::string in = dir / "a.npz";
    REQUIRE(run_cli("check-kernel neumann --generate gaussian --seed 1 --shape 8,4 --inputs " + in)
                .code == 0);
    const std::string check = "check-kernel neumann --inputs " + in + " --output " + in;
    for (const char* g : {"0", "1", "1.5", "-0.2"}) {
        const CliResult r = run_cli(check + " --gamma " + g);
        CHECK(r.code == 64);
        CHECK(has(r.err, "--gamma must be in (0, 1)"));
    }
    CliResult r = run_cli(check + " --eps 0");
    CHECK(r.code == 64);
    CHECK(has(r.err, "--eps must be > 0"));
    r = run_cli(check + " --mask causal");
    CHECK(r.code == 64);
    CHECK(has(r.err, "--mask does not apply"));
    // N above 2048: a data error from the shapes, before anything N x N is allocated
    const std::string big = dir / "big.npz";
    REQUIRE(
        run_cli("check-kernel neumann --generate gaussian --seed 1 --shape 2049,2 --inputs " + big)
            .code == 0);
    const std::string big_o = dir / "big_o.npz";
    REQUIRE(python("import sys, numpy as np\nnp.savez(sys.argv[1], o=np.zeros((2049, 2), "
                   "np.float32))",
                   big_o) == 0);
    r = run_cli("check-kernel neumann --inputs " + big + " --output " + big_o);
    CHECK(r.code == 65);
    CHECK(has(r.err, "exceeds neumann's limit of 2048"));
}
