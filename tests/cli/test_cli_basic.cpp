// The attnspec executable: help, version, exit codes, JSON, report read back with h5py, atomicity
// under kill.
#include <unistd.h>

#include <fstream>

#include "test_support.hpp"

using namespace attnspec::test;

TEST_CASE("help, version and usage errors", "[cli]") {
    auto r = run_cli("--help");
    CHECK(r.code == 0);
    CHECK(r.out.find("verify") != std::string::npos);
    CHECK(run_cli("").code == 64);
    CHECK(run_cli("--version").out.find("attnspec ") == 0);
    auto u = run_cli("frobnicate");
    CHECK(u.code == 64);
    CHECK(u.err.find("unknown command 'frobnicate'") != std::string::npos);
    CHECK(run_cli("verify --no-such-option").code == 64);
    CHECK(run_cli("verify").code == 64);
    CHECK(run_cli("verify thm9.9").code == 64);
    CHECK(run_cli("verify thm3.5 --shape 4x").code == 64);
    CHECK(run_cli("verify thm3.5 --fail-on sometimes").code == 64);
    auto h = run_cli("verify --help");
    CHECK(h.code == 0);
    CHECK(h.out.find("example") != std::string::npos);
    // a bare word where a command takes no positional argument was dropped (ran the defaults)
    for (const char* c :
         {"neumann 64 --no-report", "info extra", "cond 3x3 --no-report", "fidelity x --no-report",
          "jacobian 4 --no-report", "gpu-check now --no-report"}) {
        INFO(c);
        const auto p = run_cli(c);
        CHECK(p.code == 64);
        CHECK(p.err.find("unexpected argument '") != std::string::npos);
        CHECK(p.err.find("takes no positional arguments") != std::string::npos);
    }
    auto i = run_cli("info --json");
    CHECK(i.code == 0);
    CHECK(i.out.find("\"schema_version\"") != std::string::npos);
    CHECK(i.out.find("\"cuda\"") != std::string::npos);
}

TEST_CASE("verify thm3.5 --json reports holds and writes a report h5py can read", "[cli]") {
    const std::string dir = attnspec::test::temp_dir();
    auto r = run_cli("verify thm3.5 --trials 48 --seed 9 --json --out " + dir + "/v.h5");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("\"verdict\": \"holds\"") != std::string::npos);
    CHECK(r.out.find("\"n_violated\": 0") != std::string::npos);
    std::string py_out;
    const int py_rc = python(
        "import sys, h5py\n"
        "f = h5py.File(sys.argv[1], 'r')\n"
        "assert f.attrs['schema_version'] == '1.0'\n"
        "for k in ['tool_version', 'git_sha', 'git_dirty', 'command_line', 'created_utc', 'host',\n"
        "          'seed', 'compiler', 'eigen_version', 'spectra_version', 'hdf5_version', "
        "'cuda']:\n"
        "    assert k in f.attrs, k\n"
        "assert f.attrs['seed'] == '9'\n"
        "g = f['checks/thm3.5']\n"
        "assert g.attrs['verdict'] == 'holds' and g.attrs['instances'] == 48\n"
        "assert g['instances/ratio'].shape == (48,)\n"
        "assert (g['instances/ratio'][:] <= 1 + 1e-12).all()\n"
        "rec = g['records'][list(g['records'])[0]]\n"
        "W, C = rec['instance/W'][:], rec['instance/C'][:]\n"
        "import numpy as np\n"
        "s = np.linalg.svd(W, compute_uv=False); t = np.linalg.svd(W + C, compute_uv=False)\n"
        "assert np.allclose(t, s + s[0], rtol=1e-10), (s, t)\n"
        "k = float(rec['values'].attrs['kappa(W+C)'])\n"
        "assert abs(k - t[0] / t[-1]) <= 1e-10 * k\n"
        "print('h5py-ok')\n",
        dir + "/v.h5", &py_out);
    INFO(py_out);
    CHECK(py_rc == 0);
    CHECK(py_out.find("h5py-ok") != std::string::npos);
    auto s = run_cli("report show " + dir + "/v.h5");
    CHECK(s.code == 0);
    CHECK(s.out.find("thm3.5: holds") != std::string::npos);
    auto md = run_cli("report render " + dir + "/v.h5 --out " + dir + "/v.md");
    CHECK(md.code == 0);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("bad paths and files give the documented exit codes", "[cli]") {
    const std::string dir = attnspec::test::temp_dir();
    CHECK(run_cli("verify thm3.5 --trials 12 --out " + dir + "/missing/dir/v.h5").code == 73);
    CHECK(run_cli("report show " + dir + "/nope.h5").code == 66);
    { std::ofstream(dir + "/bad.h5") << "garbage"; }
    auto r = run_cli("report show " + dir + "/bad.h5");
    CHECK(r.code == 65);
    CHECK(r.err.find("not an HDF5 file") != std::string::npos);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("killing verify mid-run never touches the target", "[cli]") {
    const std::string dir = attnspec::test::temp_dir(), target = dir + "/v.h5";
    { std::ofstream(target) << "previous"; }
    for (const char* sig : {"KILL", "TERM"}) {
        const std::string cmd = "(" + std::string(ATTNSPEC_CLI_PATH) +
                                " verify thm3.5 --thorough --trials 200000 -q --out " + target +
                                " >/dev/null 2>&1 & pid=$!; sleep 0.7; kill -" + sig +
                                " $pid; wait $pid) 2>/dev/null";
        std::system(cmd.c_str());
        std::ifstream f(target);
        std::string content;
        f >> content;
        CHECK(content == "previous");
    }
    // SIGTERM removes its temp file; SIGKILL cannot (at most one dot-file beside the target).
    auto left = std::system(("test $(ls -A " + dir + " | grep -v '^v.h5$' | wc -l) -le 1").c_str());
    CHECK(left == 0);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("violations are written as instance files that replay to the same verdict", "[cli]") {
    const std::string dir = attnspec::test::temp_dir();
    // the false reading "lambda > sigma_1 alone" is refuted on the anti-aligned family; a reading
    // decides the exit code only with --fail-on readings
    auto r =
        run_cli("verify thm3.8-above-sigma1 -q --json --fail-on readings --out " + dir + "/v.h5");
    REQUIRE(r.code == 1);
    const std::string list = dir + "/list";
    std::system(("ls " + dir + "/v.counterexamples/*.h5 > " + list).c_str());
    std::ifstream lf(list);
    std::string first;
    std::getline(lf, first);
    REQUIRE(!first.empty());
    auto rep =
        run_cli("verify thm3.8-above-sigma1 --instance " + first + " --json --fail-on readings");
    CHECK(rep.code == 1);
    CHECK(rep.out.find("\"verdict\": \"violated\"") != std::string::npos);
    // the report's own first violated record replays too, and the wrong check is refused
    CHECK(
        run_cli("verify thm3.8-above-sigma1 --fail-on readings --instance " + dir + "/v.h5").code ==
        1);
    CHECK(run_cli("verify thm3.5 --instance " + first).code == 65);
    CHECK(run_cli("verify thm3.8-above-sigma1 --instance " + dir + "/none.h5").code == 66);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("embedded input files: clear errors for missing and malformed files", "[cli]") {
    const std::string dir = attnspec::test::temp_dir();
    CHECK(run_cli("verify thm3.4 -q --search-budget 0 --embedded " + dir + "/none.h5 --out " + dir +
                  "/v.h5")
              .code == 66);
    { std::ofstream(dir + "/bad.h5") << "garbage"; }
    CHECK(run_cli("verify thm3.4 -q --search-budget 0 --embedded " + dir + "/bad.h5 --out " + dir +
                  "/v.h5")
              .code == 65);
    // an HDF5 file without /heads
    auto r = run_cli("verify thm3.5 --trials 12 -q --out " + dir + "/r.h5");
    REQUIRE(r.code == 0);
    auto e = run_cli("verify thm3.4 -q --search-budget 0 --embedded " + dir + "/r.h5 --out " + dir +
                     "/v.h5");
    CHECK(e.code == 65);
    CHECK(e.err.find("no /heads group") != std::string::npos);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("jacobian --svd: kappa from J J^T agrees with numpy's SVD of the stored J", "[cli]") {
    const std::string dir = attnspec::test::temp_dir();
    for (const char* wrt : {"weights", "input"}) {
        auto r = run_cli(std::string("jacobian --random 10,8,3 --seed 3 --svd full --wrt ") + wrt +
                         " --json --out " + dir + "/j.h5");
        INFO(r.err);
        REQUIRE(r.code == 0);
        // Independent reference: LAPACK gesdd through numpy on the dense J written to the report.
        std::string out;
        const int rc = python(
            "import sys, h5py, numpy as np\n"
            "g = h5py.File(sys.argv[1], 'r')['jacobian/head_0']\n"
            "J = g['J'][:] if 'J' in g else g['J_X'][:]\n"
            "s = np.linalg.svd(J, compute_uv=False)\n"
            "k = g['spectrum/kappa_strict'].attrs['value']\n"
            "lo, hi = g['spectrum/kappa_strict'].attrs['enclosure_lo'], "
            "g['spectrum/kappa_strict'].attrs['enclosure_hi']\n"
            "ref = s[0] / s[-1]\n"
            "# numpy's own error on kappa ~ kappa * n * eps; the engine's enclosure must hold it\n"
            "assert abs(k - ref) <= 1e-8 * ref, (k, ref)\n"
            "assert lo - 1e-10 * ref <= ref <= hi + 1e-10 * ref, (lo, ref, hi)\n"
            "print('svd-ok')\n",
            dir + "/j.h5", &out);
        INFO(out);
        CHECK(rc == 0);
        CHECK(out.find("svd-ok") != std::string::npos);
    }
    CHECK(run_cli("jacobian --random 10,8,3 --svd sideways --out " + dir + "/x.h5").code == 64);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("every registered check replays its stored records", "[cli]") {
    const std::string dir = attnspec::test::temp_dir();
    auto r = run_cli("verify --all -q --trials 40 --search-budget 0 --fail-on never --out " + dir +
                     "/v.h5");
    REQUIRE(r.code == 0);
    for (const char* c :
         {"thm3.3", "thm3.4", "thm3.5", "lemma3.7", "thm3.8", "thm3.8-sufficient", "thm3.8-trained",
          "thm3.8-above-sigma1", "specA-sweep", "infsa.neumann", "infsa.perron"}) {
        auto rep = run_cli(std::string("verify ") + c + " --instance " + dir +
                           "/v.h5 --fail-on never --json");
        INFO(c << ": " << rep.err);
        CHECK(rep.code == 0);
        CHECK(rep.out.find("\"check\": \"" + std::string(c) + "\"") != std::string::npos);
    }
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("the top-level --help lists every command of the table, info and report take --json",
          "[cli]") {
    auto h = run_cli("--help");
    REQUIRE(h.code == 0);
    size_t last = 0;
    for (const char* c : {"cond", "fidelity", "info", "jacobian", "neumann", "report", "verify"}) {
        const size_t at = h.out.find(std::string("\n  ") + c + " ");
        INFO(c);
        CHECK(at != std::string::npos);
        CHECK(at > last);  // in table order
        last = at;
    }
    for (const char* c : {"info --help", "report --help", "verify --help"}) {
        auto r = run_cli(c);
        INFO(c);
        CHECK(r.code == 0);
        CHECK(r.out.find("--json") != std::string::npos);
    }
    auto v = run_cli("verify --help");
    for (const char* o : {"--seed", "--out", "--no-report"})
        CHECK(v.out.find(o) != std::string::npos);
}

TEST_CASE("verify --no-report writes neither a report nor counterexample files", "[cli]") {
    const std::string dir = attnspec::test::temp_dir();
    // thm3.8-above-sigma1 is refuted: without --no-report it writes counterexamples (test above).
    // It is a reading of Thm 3.8, not a theorem: its violation sets the exit status only with
    // --fail-on readings (test_cli_kinds)
    auto r =
        run_cli("verify thm3.8-above-sigma1 -q --no-report --json --fail-on violated,readings");
    CHECK(r.code == 1);
    CHECK(r.out.find("\"verdict\": \"violated\"") != std::string::npos);
    CHECK(r.out.find("\"report\"") == std::string::npos);
    auto h = run_cli("verify thm3.5 --trials 12 -q --no-report");
    CHECK(h.code == 0);
    CHECK(h.out.find("thm3.5: holds") != std::string::npos);
    CHECK(h.out.find("report:") == std::string::npos);
    // nothing written in the working directory of the run either
    const std::string cmd = "cd " + dir + " && " + ATTNSPEC_CLI_PATH +
                            " verify thm3.8-above-sigma1 -q --no-report >/dev/null 2>&1; "
                            "test -z \"$(ls -A " +
                            dir + ")\"";
    CHECK(std::system(cmd.c_str()) == 0);
    CHECK(run_cli("verify thm3.5 --trials 12 --no-report --out " + dir + "/v.h5").code == 64);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("a library error about a parameter names the option that sets it", "[cli]") {
    // proofs::check_run_options refuses kappa_lambda with Error::parameter() = "kappa_lambda";
    // main() appends the option from flag_for_parameter. Malformed numbers are refused by the
    // CLI's parse helpers, which name the option themselves.
    auto r = run_cli("verify thm3.5 --trials=-1");
    CHECK(r.code == 64);
    CHECK(r.err.find("--trials expects an integer from 1 to 2147483647, got '-1'") !=
          std::string::npos);
    auto k = run_cli("verify thm3.4 --kappa-lambda loose");
    CHECK(k.code == 64);
    CHECK(k.err.find("(option --kappa-lambda)") != std::string::npos);
    auto t = run_cli("verify thm3.5 --time-budget=-2");
    CHECK(t.code == 64);
    CHECK(t.err.find("--time-budget expects") != std::string::npos);
}
