// scripts/gpu-check.sh on a small bundle folder made here: its verdicts and exit codes
// (0 all passed on a device, 1 a check failed, 69 no device: nothing failed, nothing checked), and
// that a skipped step is never called passed. The bundle's `attnspec` is this build's CLI where
// the no-device path is under test (gpu-check really exits 69 here); the gpu test program, the
// benchmark and compute-sanitizer are small scripts whose exit codes the cases set
// (FAKE_TESTS_RC, FAKE_BENCH_RC, FAKE_SAN_RC), standing in for programs that need a device.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "attnspec/gpu/base/driver_probe.hpp"
#include "test_support.hpp"

namespace {

void write_script(const std::string& path, const std::string& body) {
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    REQUIRE(std::system(("chmod +x " + path).c_str()) == 0);
}

std::string slurp(const std::string& p) {
    std::ifstream f(p);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// DIR/attnspec-gpu/ laid out as scripts/gpu-bundle.sh packs it; `real_cli`: bin/attnspec is this
// build's CLI, else a script that exits $FAKE_CLI_RC.
std::string make_bundle_dir(bool real_cli) {
    const std::string dir = attnspec::test::temp_dir();
    const std::string top = dir + "/attnspec-gpu";
    REQUIRE(std::system(("mkdir -p " + top + "/bin " + top + "/tests " + top + "/bench").c_str()) ==
            0);
    if (real_cli)
        REQUIRE(
            std::system(("ln -s " + std::string(ATTNSPEC_CLI_PATH) + " " + top + "/bin/attnspec")
                            .c_str()) == 0);
    else
        write_script(top + "/bin/attnspec", "echo \"fake attnspec $*\"; exit ${FAKE_CLI_RC:-0}");
    write_script(top + "/tests/attnspec_tests_gpu",
                 "echo 'SKIP or not: fake gpu tests'; exit ${FAKE_TESTS_RC:-77}");
    write_script(top + "/bench/bench_fake", "echo 'fake bench'; exit ${FAKE_BENCH_RC:-69}");
    write_script(top + "/run",
                 "here=$(cd \"$(dirname \"$0\")\" && pwd); p=$1; shift\n"
                 "for d in bin tests bench; do [ -x \"$here/$d/$p\" ] && exec \"$here/$d/$p\" "
                 "\"$@\"; done\nexit 64");
    write_script(dir + "/compute-sanitizer",
                 "echo '========= fake sanitizer'; exit ${FAKE_SAN_RC:-1}");
    return dir;
}

struct ScriptRun {
    int code = -1;
    std::string summary;
};

// Runs gpu-check.sh DIR with the environment assignments `env` (sanitizer: DIR's fake unless env
// sets ATTNSPEC_SANITIZER).
ScriptRun run_script(const std::string& dir, const std::string& env) {
    const std::string cmd = "env ATTNSPEC_SANITIZER=" + dir + "/compute-sanitizer " + env +
                            " bash " + ATTNSPEC_SOURCE_DIR + "/scripts/gpu-check.sh " + dir + " >" +
                            dir + "/stdout 2>&1 </dev/null";
    const int status = std::system(cmd.c_str());
    ScriptRun r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.summary = slurp(dir + "/summary.txt");
    return r;
}

bool has(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("gpu-check.sh without a device exits 69 and calls nothing passed", "[cli][gpu-script]") {
    if (attnspec::gpu::describe_driver(attnspec::gpu::probe_driver(),
                                       attnspec::gpu::build_cuda_version())
            .usable)
        return;  // a device: this build's gpu-check would run the twins for real
    const std::string dir = make_bundle_dir(true);
    const ScriptRun r = run_script(dir, "");
    INFO(r.summary);
    CHECK(r.code == 69);
    CHECK(has(r.summary, "gpu-tests: skipped: no device, exit 77"));
    CHECK(has(r.summary, "gpu-check: skipped: no device, exit 69"));  // this build's CLI
    CHECK(has(r.summary, "memcheck: skipped: no device, nothing checked (exit 1"));
    CHECK(has(r.summary, "racecheck: skipped: no device, nothing checked (exit 1"));
    CHECK(has(r.summary, "bench_fake: skipped: no device, exit 69"));
    CHECK(has(r.summary, "info: info, exit 0"));
    CHECK(has(r.summary, "result: NO DEVICE: 5 check(s) skipped"));
    CHECK_FALSE(has(r.summary, "passed"));
    CHECK_FALSE(has(r.summary, "FAILED"));
    // A sanitizer that returns 0 without a device checked nothing either.
    const ScriptRun z = run_script(dir, "FAKE_SAN_RC=0");
    CHECK(z.code == 69);
    CHECK(has(z.summary, "memcheck: skipped: no device, nothing checked (exit 0"));
    CHECK_FALSE(has(z.summary, "passed"));
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("gpu-check.sh exits 0 only when every check ran and passed", "[cli][gpu-script]") {
    const std::string dir = make_bundle_dir(false);
    const std::string ok = "FAKE_TESTS_RC=0 FAKE_BENCH_RC=0 FAKE_SAN_RC=0 FAKE_CLI_RC=0";
    const ScriptRun all = run_script(dir, ok);
    INFO(all.summary);
    CHECK(all.code == 0);
    CHECK(has(all.summary, "gpu-tests: passed, exit 0"));
    CHECK(has(all.summary, "memcheck: passed, exit 0"));
    CHECK(has(all.summary, "result: all 5 checks passed on the device"));
    CHECK_FALSE(has(all.summary, "skipped"));

    // Planted failures, one at a time: each is named, and the run exits 1.
    const ScriptRun twin = run_script(dir, ok + " FAKE_CLI_RC=1");  // a twin disagrees
    CHECK(twin.code == 1);
    CHECK(has(twin.summary, "gpu-check: FAILED, exit 1"));
    CHECK(has(twin.summary, "result: FAILED: 1 check(s) failed: gpu-check;"));
    const ScriptRun san = run_script(dir, ok + " FAKE_SAN_RC=1");  // a sanitizer finding
    CHECK(san.code == 1);
    CHECK(has(san.summary, "memcheck: FAILED, exit 1"));
    CHECK(has(san.summary, "racecheck: FAILED, exit 1"));
    const ScriptRun none = run_script(dir, ok + " ATTNSPEC_SANITIZER=");  // no sanitizer, device
    CHECK(none.code == 1);
    CHECK(has(none.summary, "sanitizer: FAILED, not run: compute-sanitizer not found"));
    // A test failure on a machine whose gpu-check says "no device": the failure wins.
    const ScriptRun mixed = run_script(dir, "FAKE_TESTS_RC=1 FAKE_CLI_RC=69");
    CHECK(mixed.code == 1);
    CHECK(has(mixed.summary, "gpu-tests: FAILED, exit 1"));
    CHECK(has(mixed.summary, "gpu-check: skipped: no device, exit 69"));
    // A spent budget runs nothing and passes nothing.
    const ScriptRun spent = run_script(dir, ok + " ATTNSPEC_GPU_BUDGET=3");
    INFO(spent.summary);
    CHECK(spent.code == 1);
    CHECK(has(spent.summary, "gpu-tests: FAILED, not run (budget of 3 s spent)"));
    CHECK_FALSE(has(spent.summary, ": passed,"));
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("gpu-check.sh refuses a missing bundle and bad usage", "[cli][gpu-script]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::string script =
        std::string("bash ") + ATTNSPEC_SOURCE_DIR + "/scripts/gpu-check.sh ";
    const auto code = [](const std::string& cmd) {
        const int s = std::system((cmd + " >/dev/null 2>&1").c_str());
        return WIFEXITED(s) ? WEXITSTATUS(s) : -1;
    };
    CHECK(code(script + dir + " " + dir + "/missing.tar.xz") == 66);
    CHECK(code(script) == 64);
    CHECK(code(script + "a b c") == 64);
    std::system(("rm -rf " + dir).c_str());
}
