// attnspec jacobian end to end: help, JSON, exit codes, and the report read back with h5py and
// checked against an independent numpy complex-step Jacobian (layout + vec convention).
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>

#include "test_support.hpp"

using namespace attnspec::test;

namespace {

// numpy witness: complex-step J (h = 1e-30) of the head(s) in a report (X and s shared or per
// head, biases b_* when stored), compared with the stored J. Tolerance: relative Frobenius error <=
// 64 n u, n = N + D + d: the C++ grid measures the routes within 8 n u of each other relative to
// |J| on unsaturated instances (no lambda = 10); numpy's complex step adds rounding of the same
// order -> 8x headroom.
const char* kCheck = R"PY(
import sys, h5py, numpy as np
u = np.finfo(float).eps / 2
f = h5py.File(sys.argv[1], 'r'); g = f['jacobian']
wrt = g.attrs['wrt']
wrt = wrt.decode() if isinstance(wrt, bytes) else wrt
worst = 0.0
for h in range(int(g.attrs['H'])):
    gh = g['head_%d' % h]
    X = gh['X'][()] if 'X' in gh else g['X'][()]      # X per head, or shared
    s = float(gh.attrs['s'] if 's' in gh.attrs else g.attrs['s'])
    N, D = X.shape
    W = [gh[k][()] + (gh['C' + k[1:]][()] if 'C' + k[1:] in gh else 0) for k in ('W_Q', 'W_K', 'W_V')]
    d = W[0].shape[1]
    B = [gh[k][()] if k in gh else np.zeros(d) for k in ('b_Q', 'b_K', 'b_V')]  # biases (d,)
    def A(X, WQ, WK, WV):
        L = s * (X @ WQ + B[0]) @ (X @ WK + B[1]).T
        E = np.exp(L - L.real.max(axis=1, keepdims=True))
        return (E / E.sum(axis=1, keepdims=True)) @ (X @ WV + B[2])
    args = [X.astype(complex)] + [w.astype(complex) for w in W]
    targets = [1, 2, 3] if wrt == 'weights' else [0]
    cols = []
    for t in targets:
        M = args[t]
        for k in range(M.size):
            a, b = k % M.shape[0], k // M.shape[0]   # column-major vec index
            P = [x.copy() for x in args]; P[t][a, b] += 1e-30j
            cols.append(A(*P).imag.flatten(order='F') / 1e-30)
    Jref = np.array(cols).T
    J = gh['J' if wrt == 'weights' else 'J_X'][()]
    assert J.shape == Jref.shape, (J.shape, Jref.shape)
    err = np.linalg.norm(J - Jref) / max(np.linalg.norm(J), np.linalg.norm(Jref))
    worst = max(worst, err / ((N + D + d) * u))
print('worst ratio', worst)
sys.exit(0 if worst <= 64 else 1)
)PY";

}  // namespace

TEST_CASE("jacobian --help teaches every option with examples", "[cli][jacobian]") {
    const auto r = run_cli("jacobian --help");
    CHECK(r.code == 0);
    for (const char* opt : {"--input", "--random", "--seed", "--token-dist", "--weight-scale",
                            "--wrt", "--scale", "--correction", "--heads", "--max-memory",
                            "--store-limit", "--bias", "--out", "--json", "examples:"})
        CHECK(r.out.find(opt) != std::string::npos);
}

TEST_CASE("jacobian: random instance, JSON, report matches numpy complex step", "[cli][jacobian]") {
    const std::string dir = temp_dir();
    auto r = run_cli("jacobian --random 5,3,2 --seed 4 --json --out " + dir + "/w.h5");
    REQUIRE(r.code == 0);
    CHECK(r.out.rfind("{\n  \"schema_version\"", 0) == 0);
    CHECK(r.out.find("\"cols\": 18") != std::string::npos);
    CHECK(python(kCheck, dir + "/w.h5") == 0);
    r = run_cli(
        "jacobian --random 3,6,2 --heads 2 --wrt input --scale invsqrt --correction svd "
        "--token-dist layernorm --out " +
        dir + "/x.h5");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("layer: ||J_X||_F") != std::string::npos);
    CHECK(python(kCheck, dir + "/x.h5") == 0);
    // A planted corruption of the stored J must fail the witness.
    const char* corrupt =
        "import h5py,sys\nf=h5py.File(sys.argv[1],'r+')\nf['jacobian/head_0/J'][1,2]+=1e-6\n";
    REQUIRE(python(corrupt, dir + "/w.h5") == 0);
    CHECK(python(kCheck, dir + "/w.h5") == 1);
}

TEST_CASE("jacobian: HDF5 input with heads and stored corrections", "[cli][jacobian]") {
    const std::string dir = temp_dir();
    const char* make = R"PY(
import sys, h5py, numpy as np
r = np.random.default_rng(3)
with h5py.File(sys.argv[1], 'w') as f:
    f['X'] = r.standard_normal((4, 5)); f.attrs['s'] = 0.5
    for h in range(2):
        for k in ('W_Q', 'W_K', 'W_V'):
            f['heads/%d/%s' % (h, k)] = r.standard_normal((5, 3)) / 3
        f['heads/%d/C_V' % h] = 2 * np.eye(5, 3)
with h5py.File(sys.argv[2], 'w') as f:
    f['X'] = np.full((4, 5), np.nan); f['W_Q'] = f['W_K'] = f['W_V'] = np.ones((5, 3))
with h5py.File(sys.argv[3], 'w') as f:
    f['X'] = np.ones((4, 5)); f['W_Q'] = f['W_V'] = np.ones((5, 3)); f['W_K'] = np.ones((4, 3))
)PY";
    REQUIRE(python(make, dir + "/in.h5 " + dir + "/nan.h5 " + dir + "/shape.h5") == 0);
    auto r = run_cli("jacobian --input " + dir + "/in.h5 --json --out " + dir + "/r.h5");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("\"H\": 2") != std::string::npos);
    CHECK(r.out.find("\"s\": 0.5") != std::string::npos);
    CHECK(r.out.find("\"correction\": \"given\"") != std::string::npos);
    CHECK(python(kCheck, dir + "/r.h5") == 0);
    r = run_cli("jacobian --input " + dir + "/in.h5 --correction svd");
    CHECK(r.code == 64);  // conflicts with the stored corrections
    r = run_cli("jacobian --input " + dir + "/nan.h5 --out " + dir + "/n.h5");
    CHECK(r.code == 65);
    CHECK(r.err.find("NaN") != std::string::npos);
    r = run_cli("jacobian --input " + dir + "/shape.h5 --out " + dir + "/n.h5");
    CHECK(r.code == 65);
    CHECK(r.err.find("W_K") != std::string::npos);
}

TEST_CASE("jacobian: --store-limit keeps J out of the report", "[cli][jacobian]") {
    const std::string dir = temp_dir();
    const auto r = run_cli("jacobian --random 4,3,2 --store-limit 0 --json --out " + dir + "/s.h5");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("\"stored\": false") != std::string::npos);
    const char* probe =
        "import h5py,sys\ng=h5py.File(sys.argv[1],'r')['jacobian']\n"
        "sys.exit(0 if 'J' not in g['head_0'] and g['X'].shape == (4, 3) else 1)\n";
    CHECK(python(probe, dir + "/s.h5") == 0);
}

TEST_CASE("jacobian: refusals and exit codes", "[cli][jacobian]") {
    auto r = run_cli("jacobian --random 128,384,32 --max-memory 1GiB");
    CHECK(r.code == 65);
    CHECK(r.err.find("would need 1.1 GiB") != std::string::npos);
    CHECK(run_cli("jacobian --input /nonexistent/in.h5").code == 66);
    CHECK(run_cli("jacobian --random 3,3").code == 64);
    CHECK(run_cli("jacobian --random 3,3,3 --wrt bias").code == 64);
    CHECK(run_cli("jacobian --random 3,3,3 --correction lambda:-2").code == 64);
    CHECK(run_cli("jacobian").code == 64);
    CHECK(run_cli("jacobian --random 3,3,3 --out /nonexistent/dir/r.h5").code == 73);
}

TEST_CASE("jacobian: the embedded dataset (X per head) is an input", "[cli][jacobian]") {
    const std::string dir = temp_dir();
    const std::string in =
        std::string(ATTNSPEC_SOURCE_DIR) + "/datasets/embedded/attention_heads.h5";
    auto r = run_cli("jacobian --input " + in + " --json --out " + dir + "/e.h5");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("\"H\": 4") != std::string::npos);
    CHECK(r.out.find("\"shared_X\": false") != std::string::npos);
    CHECK(r.out.find("\"frobenius_layer\": null") != std::string::npos);
    CHECK(r.out.find("\"iid-gauss-16x32x8\"") != std::string::npos);
    CHECK(python(kCheck, dir + "/e.h5") == 0);
    const char* probe =
        "import h5py,sys\ng=h5py.File(sys.argv[1],'r')['jacobian']\n"
        "ok = 'X' not in g and 'frobenius_layer' not in g.attrs and g.attrs['shared_X'] == 'no'\n"
        "ok = ok and g['head_2/X'].shape == (24, 16) and g['head_2'].attrs['name'] == "
        "'layernorm-24x16x4'\nsys.exit(0 if ok else 1)\n";
    CHECK(python(probe, dir + "/e.h5") == 0);
    r = run_cli("jacobian --input " + in + " --wrt input --no-report");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("layer: not reported (each head has its own X") != std::string::npos);
    CHECK(r.out.find("head 1 (ill-conditioned-w-10x6x3; N, D, d = 10, 6, 3") != std::string::npos);
    CHECK(run_cli("jacobian --input " + in + " --heads 2 --no-report").code == 65);
}

TEST_CASE("jacobian: --no-report writes nothing, --out with it is a usage error",
          "[cli][jacobian]") {
    const std::string dir = temp_dir();
    auto r = run_cli("jacobian --random 4,3,2 --seed 2 --no-report --json");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("\"report\": null") != std::string::npos);
    CHECK(r.out.find("\"frobenius_layer\": ") != std::string::npos);
    r = run_cli("jacobian --random 4,3,2 --seed 2 --no-report");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("no report") != std::string::npos);
    r = run_cli("jacobian --random 4,3,2 --no-report --out " + dir + "/n.h5");
    CHECK(r.code == 64);
    CHECK(python("import os,sys\nsys.exit(1 if os.listdir(sys.argv[1]) else 0)\n", dir) == 0);
    CHECK(run_cli("jacobian --help").out.find("--no-report") != std::string::npos);
}

TEST_CASE("jacobian: an input with biases, --bias keep and drop", "[cli][jacobian][bias]") {
    const std::string dir = temp_dir();
    const char* make = R"PY(
import sys, h5py, numpy as np
r = np.random.default_rng(5)
with h5py.File(sys.argv[1], 'w') as f:
    f['X'] = r.standard_normal((4, 5)); f.attrs['s'] = 0.5
    for h in range(2):
        for k in ('W_Q', 'W_K', 'W_V'):
            f['heads/%d/%s' % (h, k)] = r.standard_normal((5, 3)) / 2
    for k in ('b_Q', 'b_K', 'b_V'):
        f['heads/0/' + k] = 2 * r.standard_normal(3)
    f['heads/1/b_K'] = 2 * r.standard_normal(3)
with h5py.File(sys.argv[2], 'w') as f:
    f['X'] = np.ones((4, 5)); f['W_Q'] = f['W_K'] = f['W_V'] = np.ones((5, 3))
    f['b_Q'] = np.ones(4)
)PY";
    REQUIRE(python(make, dir + "/in.h5 " + dir + "/bad.h5") == 0);
    auto r = run_cli("jacobian --input " + dir + "/in.h5 --out " + dir + "/keep.h5");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("with biases (b_Q, b_K, b_V)") != std::string::npos);
    CHECK(python(kCheck, dir + "/keep.h5") == 0);  // J at the biased heads
    const char* attrs = R"PY(
import sys, h5py
g = h5py.File(sys.argv[1], 'r')['jacobian']
assert g.attrs['bias_form'] == sys.argv[2], g.attrs['bias_form']
assert g['head_0/b_V'].shape == (3,) and 'b_Q' not in g['head_1'], list(g['head_1'])
)PY";
    CHECK(python(attrs, dir + "/keep.h5 'with biases (b_Q, b_K, b_V)'") == 0);
    // Planted: the witness without head 0's b_Q no longer matches the stored J.
    const char* strip =
        "import h5py,sys\nf=h5py.File(sys.argv[1],'r+')\ndel f['jacobian/head_0/b_Q']\n";
    REQUIRE(python(strip, dir + "/keep.h5") == 0);
    CHECK(python(kCheck, dir + "/keep.h5") == 1);

    r = run_cli("jacobian --input " + dir + "/in.h5 --bias drop --json --out " + dir + "/drop.h5");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("\"bias_form\": \"bias-free (paper form)\"") != std::string::npos);
    CHECK(python(kCheck, dir + "/drop.h5") == 0);  // no b_* stored: the bias-free J
    const char* none = R"PY(
import sys, h5py
g = h5py.File(sys.argv[1], 'r')['jacobian']
assert not any(k.startswith('b_') for h in ('head_0', 'head_1') for k in g[h]), 'bias stored'
)PY";
    CHECK(python(none, dir + "/drop.h5") == 0);

    r = run_cli("jacobian --random 4,3,2 --no-report");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("bias-free (input has no biases)") != std::string::npos);
    r = run_cli("jacobian --random 4,3,2 --bias maybe --no-report");
    CHECK(r.code == 64);
    CHECK(r.err.find("--bias") != std::string::npos);
    r = run_cli("jacobian --input " + dir + "/bad.h5 --no-report");
    CHECK(r.code == 65);
    CHECK(r.err.find("/b_Q has shape (4,), expected (3,)") != std::string::npos);
}
