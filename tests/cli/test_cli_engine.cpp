// attnspec jacobian on the spectral engine's path (issue 13): --svd forms no dense J unless
// --store-j (or the small --store-limit) asks for it, long solves show progress on stderr
// (--quiet silences it), and the auto fallback to a full eigensolve is announced.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "test_support.hpp"

using namespace attnspec::test;

namespace {

// Exit 0 when head_0 of the report holds J of shape (rows, cols) (argv[2], argv[3]; 0 0: no J)
// and a spectrum, and the section's `stored` attribute starts with argv[4].
const char* kProbe = R"PY(
import sys, h5py
g = h5py.File(sys.argv[1], 'r')['jacobian']
h = g['head_0']
shape = (int(sys.argv[2]), int(sys.argv[3]))
ok = ('J' in h and h['J'].shape == shape) if shape != (0, 0) else 'J' not in h
stored = g.attrs['stored']
stored = stored.decode() if isinstance(stored, bytes) else stored
sys.exit(0 if ok and 'spectrum' in h and stored.startswith(sys.argv[4]) else 1)
)PY";

}  // namespace

TEST_CASE("jacobian --svd: kappa(J) forms no dense J, --store-j stores it", "[cli][engine]") {
    const std::string dir = temp_dir();
    // J is 256 x 3072 (6 MiB), above a 4 MiB budget: the engine's path needs only the 256^2
    // Gram matrix, so kappa(J) succeeds under it.
    const std::string run = "jacobian --random 32,128,8 --seed 1 --svd auto ";
    auto r = run_cli(run + "--max-memory 4MiB --json --out " + dir + "/a.h5");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(has(r.out, "\"stored\": false"));
    CHECK(has(r.out, "\"kappa_strict\""));
    CHECK(has(r.err, "not formed"));
    CHECK(python(kProbe, dir + "/a.h5 0 0 no") == 0);
    // Planted: the probe must see a J that is there.
    CHECK(python(kProbe, dir + "/a.h5 256 3072 no") == 1);
    // --store-j needs the dense J: under the same budget it is refused before any work.
    r = run_cli(run + "--max-memory 4MiB --store-j --out " + dir + "/b.h5");
    CHECK(r.code == 65);
    CHECK(has(r.err, "--max-memory"));
    // Without the budget --store-j forms J and writes it, with the same spectrum.
    r = run_cli(run + "--store-j --json --out " + dir + "/c.h5");
    REQUIRE(r.code == 0);
    CHECK(has(r.out, "\"stored\": true"));
    CHECK(python(kProbe, dir + "/c.h5 256 3072 yes") == 0);
    // Above the default --store-limit (16 MiB) J is not formed with --svd either.
    r = run_cli("jacobian --random 64,128,16 --svd extremal -q --out " + dir + "/d.h5");
    REQUIRE(r.code == 0);
    CHECK(has(r.out, "(not formed)"));
    CHECK(python(kProbe, dir + "/d.h5 0 0 no") == 0);
    CHECK(run_cli("jacobian --random 4,3,2 --store-j --no-report").code == 64);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("jacobian --svd: progress on stderr, --quiet and --json silence it", "[cli][engine]") {
    const std::string cmd = "jacobian --random 24,32,4 --seed 2 --svd full --no-report";
    const auto r = run_cli(cmd);
    INFO(r.err);
    REQUIRE(r.code == 0);
    // Not a TTY here: one line per tenth of each stage, the last at its end.
    CHECK(has(r.err, "[kappa(J): Cholesky] 100/100 %"));
    CHECK(has(r.err, "[kappa(J): Lanczos]"));
    CHECK(has(r.err, "[kappa(J): eigensolve] 100/100 %"));
    {  // the refinement's last line: its count of J and J^T products, done = total
        const std::size_t at = r.err.rfind("[kappa(J): refinement] ");
        REQUIRE(at != std::string::npos);
        const std::string line = r.err.substr(at, r.err.find('\n', at) - at);
        INFO(line);
        long done = -1, total = -2;
        CHECK(std::sscanf(line.c_str(), "[kappa(J): refinement] %ld/%ld products", &done, &total) ==
              2);
        CHECK(done == total);
        CHECK(done >= 4);
    }
    // J J^T from the factors (jacobian_gram_outer): d (d + 1) / 2 = 10 blocks, before the engine.
    CHECK(has(r.err, "[kappa(J): J J^T] 10/10 blocks"));
    CHECK(r.err.find("J J^T] 10/10") < r.err.find("[kappa(J): Cholesky]"));
    for (const char* quiet : {" -q", " --quiet", " --json"}) {
        const auto q = run_cli(cmd + quiet);
        CHECK(q.code == 0);
        CHECK_FALSE(has(q.err, "[kappa"));
    }
}

TEST_CASE("jacobian: forming J shows its progress, --quiet silences it", "[cli][engine]") {
    // J = [J_Q, J_K, J_V]: 3 d = 12 column groups; J_X: D = 32 (one per column of X).
    for (const auto& [args, line] :
         {std::pair<std::string, std::string>{"", "[J: forming] 12/12 column groups"},
          {" --wrt input", "[J_X: forming] 32/32 column groups"}}) {
        const std::string cmd = "jacobian --random 24,32,4 --seed 2 --no-report" + args;
        const auto r = run_cli(cmd);
        INFO(r.err);
        REQUIRE(r.code == 0);
        CHECK(has(r.err, line));
        const auto q = run_cli(cmd + " -q");
        CHECK(q.code == 0);
        CHECK_FALSE(has(q.err, "forming"));
    }
}

TEST_CASE("jacobian --svd auto: the fallback to all eigenvalues is announced", "[cli][engine]") {
    const std::string dir = temp_dir();
    // Planted rank deficiency: W_V = 0 makes J = [0, 0, J_V] with rank <= d min(N, D) = 16 of
    // 24 rows, so Lanczos cannot prove full rank and auto falls back to dsyevd.
    const char* make = R"PY(
import sys, h5py, numpy as np
r = np.random.default_rng(7)
with h5py.File(sys.argv[1], 'w') as f:
    f['X'] = r.standard_normal((12, 8)); f.attrs['s'] = 0.5
    f['W_Q'] = r.standard_normal((8, 2)) / 3; f['W_K'] = r.standard_normal((8, 2)) / 3
    f['W_V'] = np.zeros((8, 2))
)PY";
    REQUIRE(python(make, dir + "/def.h5") == 0);
    auto r = run_cli("jacobian --input " + dir + "/def.h5 --svd auto --full-upto 8 --no-report -q");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(has(r.err, "falling back to all eigenvalues of the 24 x 24 Gram matrix"));
    CHECK(has(r.err, "expect about"));
    CHECK(has(r.out, "spectrum (G=JJ^T: LAPACK dsyevd"));
    // A full-rank head of the same shape stays on the extremal path without a word.
    r = run_cli("jacobian --random 12,8,2 --seed 3 --svd auto --full-upto 8 --no-report -q");
    REQUIRE(r.code == 0);
    CHECK_FALSE(has(r.err, "falling back"));
    CHECK(has(r.out, "Spectra Lanczos (largest)"));
    // --full-upto belongs to auto.
    CHECK(run_cli("jacobian --random 12,8,2 --svd full --full-upto 8 --no-report").code == 64);
    CHECK(run_cli("jacobian --random 12,8,2 --full-upto 8 --no-report").code == 64);
    const auto h = run_cli("jacobian --help");
    for (const char* opt : {"--store-j", "--full-upto", "--quiet", "--store-limit"})
        CHECK(has(h.out, opt));
    std::system(("rm -rf " + dir).c_str());
}
