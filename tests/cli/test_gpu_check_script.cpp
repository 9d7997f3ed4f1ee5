// scripts/gpu-check.sh on a small bundle folder made here: its verdicts and exit codes (0 all
// passed on a device, 1 a check failed, 2 a benchmark's peer unavailable or a target missed, 69
// no device: nothing failed, nothing checked), that a skipped step, a missing peer or a missed
// target is never called passed, its cap table (the caps fit the 8-minute budget) and its output
// (three files). The bundle's `attnspec` is this build's CLI where the no-device path is under
// test (gpu-check really exits 69 here); the gpu test program, the benchmark and
// compute-sanitizer are small scripts whose exit codes and output the cases set (FAKE_TESTS_RC,
// FAKE_BENCH_RC, FAKE_BENCH_SAY, FAKE_SAN_RC, FAKE_CLI_RC), standing in for programs that need a
// device. scripts/gpu-bundle.sh: --help, usage, and on a fake build of small ELF programs its glibc
// floor, MANIFEST and the `run --where-cuda` lookup (LD_LIBRARY_PATH, nvidia-* wheels).
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "attnspec/gpu/base/driver_probe.hpp"
#include "attnspec/gpu/check/gpu_check.hpp"
#include "test_support.hpp"

using namespace attnspec::test;

namespace {

namespace fs = std::filesystem;

void write_script(const std::string& path, const std::string& body) {
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    REQUIRE(std::system(("chmod +x " + path).c_str()) == 0);
}

const std::string kCheck = std::string("bash ") + ATTNSPEC_SOURCE_DIR + "/scripts/gpu-check.sh ";
const std::string kBundle = std::string("bash ") + ATTNSPEC_SOURCE_DIR + "/scripts/gpu-bundle.sh ";

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
    write_script(top + "/bench/bench_fake",
                 "echo 'fake bench'; [ -n \"$FAKE_BENCH_SAY\" ] && echo \"$FAKE_BENCH_SAY\"\n"
                 "exit ${FAKE_BENCH_RC:-69}");
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
    std::string summary, report;
    std::set<std::string> files;  // what the output folder holds
};

// Runs gpu-check.sh [OPTS] DIR/out DIR/attnspec-gpu with the environment assignments `env`
// (sanitizer: DIR's fake unless env sets ATTNSPEC_SANITIZER).
ScriptRun run_script(const std::string& dir, const std::string& env, const std::string& opts = "") {
    const std::string out = dir + "/out";
    REQUIRE(std::system(("rm -rf " + out).c_str()) == 0);
    const CliResult sh =
        run_shell_merged("env ATTNSPEC_SANITIZER=" + dir + "/compute-sanitizer " + env + " " +
                         kCheck + opts + " " + out + " " + dir + "/attnspec-gpu");
    ScriptRun r;
    r.code = sh.code;
    r.summary = slurp(out + "/summary.txt");
    r.report = slurp(out + "/gpu_check.txt");
    if (fs::is_directory(out))
        for (const auto& e : fs::directory_iterator(out))
            r.files.insert(e.path().filename().string());
    return r;
}

const std::set<std::string> kOutputFiles = {"summary.txt", "gpu_check.txt", "logs.tar.gz"};

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
    // one twin per process, this build's CLI
    for (const char* twin : attnspec::gpu::kTwinNames)
        CHECK(has(r.summary, "check-quick-" + std::string(twin) + ": skipped: no device, exit 69"));
    CHECK(has(r.summary, "check-full-svd: skipped: no device, exit 69"));
    CHECK(has(r.summary, "memcheck: skipped: no device, nothing checked (exit 1"));
    CHECK(has(r.summary, "racecheck: skipped: no device, nothing checked (exit 1"));
    CHECK(has(r.summary, "bench_fake: skipped: no device, exit 69"));
    CHECK(has(r.summary, "info: info, exit 0"));
    CHECK(has(r.summary, "check-full-jacobian_spectrum: not run, optional (pass --vit"));
    CHECK(has(r.summary, "result: NO DEVICE: 15 check(s) skipped"));
    CHECK_FALSE(has(r.summary, "passed"));
    CHECK_FALSE(has(r.summary, "FAILED"));
    // Three files, and only these: the device tool brings back at most 8.
    CHECK(r.files == kOutputFiles);
    CHECK(has(r.report, "=== check-quick-svd: "));  // every gpu-check step's output, in order
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
    CHECK(has(all.summary, "check-quick-perron_tiled: passed, exit 0"));
    CHECK(has(all.summary, "memcheck: passed, exit 0"));
    CHECK(has(all.summary, "bench_fake: passed, exit 0"));
    CHECK(has(all.summary, "result: all 15 checks passed on the device; optional ViT-B step not"));
    CHECK_FALSE(has(all.summary, "skipped"));
    CHECK(all.files == kOutputFiles);
    // --vit: the full jacobian_spectrum set (the ViT-B case) runs last, in its own process.
    const ScriptRun vit = run_script(dir, ok, "--vit");
    CHECK(vit.code == 0);
    CHECK(has(vit.summary, "check-full-jacobian_spectrum: passed, exit 0"));
    CHECK(has(vit.summary, "result: all 16 checks passed on the device\n"));
    CHECK(has(vit.report, "gpu-check --twin jacobian_spectrum --out"));

    // Planted failures, one at a time: each is named, and the run exits 1.
    const ScriptRun twin = run_script(dir, ok + " FAKE_CLI_RC=1");  // a twin disagrees
    CHECK(twin.code == 1);
    CHECK(has(twin.summary, "check-quick-linear_infsa: FAILED, exit 1"));
    CHECK(has(twin.summary, "result: FAILED: 11 check(s) failed: check-quick-linear_infsa "));
    const ScriptRun load = run_script(dir, ok + " FAKE_CLI_RC=72");  // backend there, no load
    CHECK(load.code == 1);
    CHECK(has(load.summary, "check-quick-svd: FAILED, the GPU backend failed to load"));
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
    CHECK(has(mixed.summary, "check-quick-svd: skipped: no device, exit 69"));
    // A spent budget runs nothing and passes nothing.
    const ScriptRun spent = run_script(dir, ok + " ATTNSPEC_GPU_BUDGET=3");
    INFO(spent.summary);
    CHECK(spent.code == 1);
    CHECK(has(spent.summary, "gpu-tests: FAILED, not run (budget of 3 s spent)"));
    CHECK_FALSE(has(spent.summary, ": passed,"));
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("gpu-check.sh never calls a benchmark without its peer or off target passed",
          "[cli][gpu-script]") {
    const std::string dir = make_bundle_dir(false);
    const std::string ok = "FAKE_TESTS_RC=0 FAKE_BENCH_RC=0 FAKE_SAN_RC=0 FAKE_CLI_RC=0";
    // The bench exits 0 but its PyTorch peer did not run (bench_spec_attention_cuda's words).
    const ScriptRun peer = run_script(
        dir, ok + " FAKE_BENCH_SAY='peer unavailable (no PyTorch with CUDA?): no ratio'");
    INFO(peer.summary);
    CHECK(peer.code == 2);
    CHECK(has(peer.summary, "bench_fake: peer unavailable, exit 0"));
    CHECK(has(peer.summary, "result: NOT ALL PASSED: 14 passed, none failed, but 1 benchmark(s)"));
    CHECK(has(peer.summary, "bench_fake (peer unavailable)"));
    CHECK_FALSE(has(peer.summary, "bench_fake: passed"));
    CHECK_FALSE(has(peer.summary, "result: all"));
    const ScriptRun miss =
        run_script(dir, ok + " FAKE_BENCH_SAY='target missed: ratio 1.30 (target <= 1.1)'");
    CHECK(miss.code == 2);
    CHECK(has(miss.summary, "bench_fake: target missed, exit 0"));
    CHECK_FALSE(has(miss.summary, "result: all"));
    const ScriptRun met =
        run_script(dir, ok + " FAKE_BENCH_SAY='target met: ratio 0.90 (target <= 1.1)'");
    CHECK(met.code == 0);
    CHECK(has(met.summary, "bench_fake: passed, exit 0"));
    // A failure elsewhere still wins over a benchmark that fell short.
    const ScriptRun both =
        run_script(dir, ok + " FAKE_TESTS_RC=1 FAKE_BENCH_SAY='PyTorch peer unavailable'");
    CHECK(both.code == 1);
    CHECK(has(both.summary, "bench_fake: peer unavailable"));
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("gpu-check.sh: the step caps fit the 8-minute budget and --help, --caps exit 0",
          "[cli][gpu-script]") {
    const std::string dir = attnspec::test::temp_dir();
    const CliResult caps = run_shell_merged(kCheck + "--caps");
    INFO(caps.out);
    CHECK(caps.code == 0);
    long sum = 0, total = -1, rows = 0;
    std::vector<std::string> twins;
    std::vector<std::string> filters;
    std::istringstream in(caps.out);
    for (std::string line; std::getline(in, line);) {
        std::istringstream words(line);
        std::string first, second;
        words >> first >> second;
        if (!first.empty() && first.find_first_not_of("0123456789") == std::string::npos &&
            second == "s") {
            sum += std::stol(first);
            ++rows;
        } else if (line.rfind("caps total: ", 0) == 0) {
            total = std::stol(line.substr(12));
        } else if (line.rfind("twins: ", 0) == 0) {
            std::istringstream t(line.substr(7));
            for (std::string w; t >> w;) twins.push_back(w);
        } else if (line.find(" filter: ") != std::string::npos) {
            std::istringstream f(line.substr(line.find(" filter: ") + 9));
            for (std::string p; std::getline(f, p, ',');) filters.push_back(p);
        }
    }
    CHECK(rows >= 20);    // every step has its row
    CHECK(sum == total);  // the table's own total
    CHECK(sum <= 480);    // 8 minutes, whatever hangs
    // One process per twin: the script's twins are the CLI's.
    CHECK(twins == std::vector<std::string>(std::begin(attnspec::gpu::kTwinNames),
                                            std::end(attnspec::gpu::kTwinNames)));
    // compute-sanitizer's narrow filters name tests that exist: each pattern (Catch2, a trailing
    // *) opens a TEST_CASE name in tests/gpu/.
    std::string gpu_tests;
    for (const auto& e :
         fs::recursive_directory_iterator(std::string(ATTNSPEC_SOURCE_DIR) + "/tests/gpu"))
        if (e.is_regular_file()) gpu_tests += slurp(e.path().string());
    REQUIRE(filters.size() >= 3);
    for (const std::string& p : filters) {
        INFO(p);
        CHECK(has(gpu_tests, "TEST_CASE(\"" + p.substr(0, p.find('*'))));
    }
    const CliResult help = run_shell_merged(kCheck + "--help");
    CHECK(help.code == 0);
    CHECK(has(help.out, "caps total: "));
    CHECK(has(help.out, "--vit"));
    CHECK(run_shell_merged(kCheck + "-h").code == 0);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("gpu-check.sh refuses a missing bundle and bad usage", "[cli][gpu-script]") {
    const std::string dir = attnspec::test::temp_dir();
    CHECK(run_shell_merged(kCheck + dir + "/out " + dir + "/missing.tar.xz").code == 66);
    CHECK(run_shell_merged(kCheck + dir + "/out " + dir).code == 66);  // a folder without run
    CHECK(run_shell_merged(kCheck).code == 64);
    CHECK(run_shell_merged(kCheck + "a b c").code == 64);
    CHECK(run_shell_merged(kCheck + "--no-such-option " + dir).code == 64);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("gpu-bundle.sh: --help, usage, glibc floor and where the CUDA libraries come from",
          "[cli][gpu-script]") {
    const std::string dir = attnspec::test::temp_dir();
    const CliResult help = run_shell_merged(kBundle + "--help");
    CHECK(help.code == 0);  // never taken as an output path
    CHECK(has(help.out, "glibc floor"));
    CHECK(has(help.out, "--python PY"));
    CHECK(run_shell_merged(kBundle + "-h").code == 0);
    CHECK(run_shell_merged(kBundle).code == 64);
    CHECK(run_shell_merged(kBundle + "a.tar.xz b.tar.xz").code == 64);
    CHECK(run_shell_merged(kBundle + "--no-such-option a.tar.xz").code == 64);

    // A fake build of small ELF programs, packed without building.
    if (!fs::exists("/bin/true")) return;
    const std::string build = dir + "/build";
    REQUIRE(std::system(("mkdir -p " + build + "/cli " + build + "/gpu " + build + "/tests && " +
                         "cp /bin/true " + build + "/cli/attnspec && cp /bin/true " + build +
                         "/gpu/libattnspec_gpu.so && cp /bin/true " + build +
                         "/tests/attnspec_tests_gpu")
                            .c_str()) == 0);
    const CliResult pack =
        run_shell_merged("env ATTNSPEC_BUNDLE_NO_BUILD=1 ATTNSPEC_BUNDLE_BUILD=" + build + " " +
                         kBundle + dir + "/b.tar.xz");
    INFO(pack.out);
    REQUIRE(pack.code == 0);
    CHECK(has(pack.out, "glibc floor: 2."));  // /bin/true needs some GLIBC_2.x
    CHECK(has(pack.out, "this host: CUDA libraries: "));
    REQUIRE(std::system(("tar -C " + dir + " -xJf " + dir + "/b.tar.xz").c_str()) == 0);
    const std::string top = dir + "/attnspec-gpu";
    const std::string manifest = slurp(top + "/MANIFEST");
    CHECK(has(manifest, "glibc floor: 2."));
    CHECK(has(manifest, "CUDA libraries needed: "));
    // `run` takes the CUDA libraries from /usr/local/cuda, LD_LIBRARY_PATH, then the nvidia-*
    // wheels of $ATTNSPEC_PYTHON; a library no real CUDA has makes the later sources visible.
    const std::string lib = "libattnspec_fake_cudart.so.99";
    { std::ofstream(top + "/MANIFEST") << "CUDA libraries needed: " << lib << "\n"; }
    REQUIRE(std::system(("mkdir -p " + dir + "/site/nvidia/cuda_runtime/lib " + dir + "/ldp && " +
                         "touch " + dir + "/site/nvidia/cuda_runtime/lib/" + lib + " " + dir +
                         "/ldp/" + lib)
                            .c_str()) == 0);
    write_script(dir + "/python", "echo " + dir + "/site");  // answers the site-packages query
    const std::string where = top + "/run --where-cuda";
    const CliResult wheels =
        run_shell_merged("env LD_LIBRARY_PATH= ATTNSPEC_PYTHON=" + dir + "/python " + where);
    CHECK(wheels.code == 0);
    CHECK(has(wheels.out, "CUDA libraries: from the nvidia-* wheels of " + dir + "/python (" + dir +
                              "/site/nvidia/cuda_runtime/lib)"));
    const CliResult ld = run_shell_merged("env LD_LIBRARY_PATH=" + dir +
                                          "/ldp ATTNSPEC_PYTHON=" + dir + "/python " + where);
    CHECK(ld.code == 0);
    CHECK(has(ld.out, "CUDA libraries: from LD_LIBRARY_PATH"));
    const CliResult missing =
        run_shell_merged("env LD_LIBRARY_PATH= ATTNSPEC_PYTHON=" + dir + "/nothing " + where);
    CHECK(missing.code == 1);
    CHECK(has(missing.out, "CUDA libraries: not found (needed: " + lib));
    std::system(("rm -rf " + dir).c_str());
}
