// What a run writes (issue 14) and every violation replays (issue 12), through the executable:
// outputs checked before any work (special files 73, an input 64), default report names per
// check selection, a failed write (file too large, full or read-only file system) keeping the
// previous report with exit 74/73 and no temp, concurrent runs leaving one consistent report and
// counterexample directory, every violated record written (capped) and replayable from its file
// alone, and strict seeds in instance files.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "test_support.hpp"

using namespace attnspec::test;

namespace {
const std::string kCli = ATTNSPEC_CLI_PATH;

// The number of entries of `dir` (hidden ones included).
int count_entries(const std::string& dir) {
    return static_cast<int>(attnspec::test::entries(dir).size());
}
// A Q/K input file for neumann/fidelity and an attention-head input for jacobian, in `dir`.
void make_inputs(const std::string& dir) {
    REQUIRE(python("import sys, h5py, numpy as np\n"
                   "r = np.random.default_rng(1)\n"
                   "with h5py.File(sys.argv[1] + '/qk.h5', 'w') as f:\n"
                   "    f['Q'] = r.standard_normal((8, 4)); f['K'] = r.standard_normal((8, 4))\n",
                   dir, nullptr, dir + "/py.out") == 0);
    REQUIRE(sh("cp " + std::string(ATTNSPEC_SOURCE_DIR) + "/datasets/embedded/attention_heads.h5 " +
               dir + "/heads.h5") == 0);
}
}  // namespace

TEST_CASE("an output that is a special file is refused with 73 before any work", "[cli][outputs]") {
    const std::string dir = attnspec::test::temp_dir();
    make_inputs(dir);
    REQUIRE(::mkfifo((dir + "/fifo").c_str(), 0644) == 0);
    ::mkdir((dir + "/adir").c_str(), 0755);
    const bool dev = ::mknod((dir + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
    std::vector<std::string> outs = {dir + "/fifo", dir + "/adir"};
    if (dev) outs.push_back(dir + "/null");
    for (const auto& out : outs) {
        for (const std::string& cmd :
             std::vector<std::string>{"verify thm3.5 --trials 4 -q", "neumann --tokens 16 --dh 4",
                                      "fidelity --tokens 16", "jacobian --random 4,3,2",
                                      "cond --input " + dir + "/heads.h5 --matrix /X",
                                      "report render " + dir + "/heads.h5"}) {
            // report render --out DIR takes a directory: test_cli_report_page.cpp
            if (out == dir + "/adir" && cmd.rfind("report", 0) == 0) continue;
            const auto r = run_cli(cmd + " --out " + out);
            INFO(cmd << " --out " << out << ": " << r.err);
            CHECK(r.code == 73);
            CHECK(r.err.find("regular files or new paths") != std::string::npos);
        }
    }
    struct stat s {};
    CHECK((::stat((dir + "/fifo").c_str(), &s) == 0 && S_ISFIFO(s.st_mode)));
    if (dev) CHECK((::stat((dir + "/null").c_str(), &s) == 0 && S_ISCHR(s.st_mode)));
    CHECK(count_entries(dir + "/adir") == 0);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("an output equal to an input is refused with 64 and the input is untouched",
          "[cli][outputs]") {
    const std::string dir = attnspec::test::temp_dir();
    make_inputs(dir);
    REQUIRE(
        run_cli("verify thm3.8-above-sigma1 -q --fail-on readings --out " + dir + "/v.h5").code ==
        1);
    REQUIRE(sh("cp " + dir + "/v.counterexamples/$(ls " + dir + "/v.counterexamples | head -1) " +
               dir + "/inst.h5") == 0);
    REQUIRE(::symlink((dir + "/qk.h5").c_str(), (dir + "/qk_link.h5").c_str()) == 0);
    const std::string qk = slurp(dir + "/qk.h5"), heads = slurp(dir + "/heads.h5"),
                      v = slurp(dir + "/v.h5"), inst = slurp(dir + "/inst.h5");
    for (const std::string& cmd : std::vector<std::string>{
             "cond --input " + dir + "/heads.h5 --matrix /X --out " + dir + "/heads.h5",
             "neumann --input " + dir + "/qk.h5 --out " + dir + "/qk.h5",
             "neumann --input " + dir + "/qk_link.h5 --out " + dir + "/./qk.h5",
             "fidelity --input " + dir + "/qk.h5 --out " + dir + "/qk.h5",
             "jacobian --input " + dir + "/heads.h5 --out " + dir + "/heads.h5",
             "report render " + dir + "/v.h5 --out " + dir + "/v.h5",
             "verify thm3.8-above-sigma1 --instance " + dir + "/inst.h5 --out " + dir + "/inst.h5",
         }) {
        const auto r = run_cli(cmd);
        INFO(cmd << ": " << r.err);
        CHECK(r.code == 64);
        CHECK(r.err.find("refusing to overwrite an input") != std::string::npos);
    }
    CHECK(slurp(dir + "/qk.h5") == qk);
    CHECK(slurp(dir + "/heads.h5") == heads);
    CHECK(slurp(dir + "/v.h5") == v);
    CHECK(slurp(dir + "/inst.h5") == inst);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("an output that cannot be created fails with 73 before computing", "[cli][outputs]") {
    const std::string dir = attnspec::test::temp_dir(), bad = dir + "/missing/r.h5";
    // each command logs when it starts its work: none of those lines may appear
    auto r = run_cli("neumann --tokens 64 --dh 4 --out " + bad);
    CHECK(r.code == 73);
    CHECK(r.err.find("LU of") == std::string::npos);
    CHECK(r.err.find("No such file or directory") != std::string::npos);
    r = run_cli("jacobian --random 8,4,2 --out " + bad);
    CHECK(r.code == 73);
    CHECK(r.err.find("computed in") == std::string::npos);
    r = run_cli("verify thm3.5 --trials 20 --out " + bad);
    CHECK(r.code == 73);
    CHECK(r.err.find("[thm3.5]") == std::string::npos);
    r = run_cli("cond --input " + dir + "/none.h5 --matrix /X --out " + bad);
    CHECK(r.code == 73);  // the output is checked even before the input is opened
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("default verify report names differ per check selection", "[cli][outputs]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::string in_dir = "cd " + dir + " && " + kCli + " ";
    REQUIRE(sh(in_dir + "verify thm3.5 --trials 8 -q >/dev/null 2>&1") == 0);
    const std::string first = slurp(dir + "/reports/out/verify-thm3.5.h5");
    REQUIRE(!first.empty());
    REQUIRE(sh(in_dir + "verify thm3.5 lemma3.7 --trials 8 -q >/dev/null 2>&1") == 0);
    REQUIRE(sh(in_dir + "verify lemma3.7 thm3.5 --trials 8 -q >/dev/null 2>&1") == 0);
    CHECK(slurp(dir + "/reports/out/verify-thm3.5.h5") == first);  // not overwritten
    CHECK(count_entries(dir + "/reports/out") == 2);               // one name for one selection
    CHECK(sh("test -f " + dir + "/reports/out/verify-lemma3.7+thm3.5.h5") == 0);
    CHECK(run_cli("verify --help").out.find("verify-all.h5") != std::string::npos);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE(
    "a write that fails (file too large, like a full disk) exits 74, keeps the previous "
    "report and leaves no temp",
    "[cli][outputs]") {
    const std::string dir = attnspec::test::temp_dir();
    REQUIRE(
        run_cli("verify thm3.8-above-sigma1 -q --fail-on readings --out " + dir + "/v.h5").code ==
        1);
    const std::string before = slurp(dir + "/v.h5");
    const int files_before = count_entries(dir + "/v.counterexamples");
    REQUIRE(files_before > 0);
    // SIGXFSZ ignored: write() fails with EFBIG past 1 KiB, the report's and the instance files'
    for (const std::string& limit : std::vector<std::string>{"2", "64"}) {
        const int rc = sh("sh -c 'ulimit -f " + limit + "; trap \"\" XFSZ; exec " + kCli +
                          " verify thm3.8-above-sigma1 -q --seed 5 --out " + dir +
                          "/v.h5' >/dev/null 2>" + dir + "/../err_" + limit);
        const std::string err = slurp(dir + "/../err_" + limit);
        std::remove((dir + "/../err_" + limit).c_str());
        INFO("ulimit -f " << limit << ": " << err);
        CHECK(rc == 74);  // not 73, not a crash at exit
        CHECK(err.find("File too large") != std::string::npos);
        CHECK(slurp(dir + "/v.h5") == before);
        CHECK(count_entries(dir) == 2);  // v.h5 and v.counterexamples: no temp, no staging
        CHECK(count_entries(dir + "/v.counterexamples") == files_before);
    }
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("a full and a read-only file system: 74 / 73, previous report kept, no temp",
          "[cli][outputs]") {
    const std::string dir = attnspec::test::temp_dir(), mnt = dir + "/mnt";
    ::mkdir(mnt.c_str(), 0755);
    if (sh("mount -t tmpfs -o size=1m tmpfs " + mnt + " 2>/dev/null") != 0) {
        WARN(
            "SKIP: cannot mount a tmpfs here (needs CAP_SYS_ADMIN); the ulimit test covers the "
            "failed write");
        std::system(("rm -rf " + dir).c_str());
        return;
    }
    REQUIRE(run_cli("verify thm3.5 --trials 8 -q --out " + mnt + "/v.h5").code == 0);
    const std::string before = slurp(mnt + "/v.h5");
    sh("dd if=/dev/zero of=" + mnt + "/fill bs=4k 2>/dev/null");  // until the disk is full
    auto r = run_cli("verify thm3.5 --trials 8 -q --seed 3 --out " + mnt + "/v.h5");
    INFO(r.err);
    CHECK(r.code == 74);
    CHECK(r.err.find("No space left on device") != std::string::npos);
    CHECK(slurp(mnt + "/v.h5") == before);
    CHECK(count_entries(mnt) == 2);  // v.h5 and fill
    sh("rm " + mnt + "/fill; mount -o remount,ro " + mnt);
    r = run_cli("verify thm3.5 --trials 8 -q --seed 3 --out " + mnt + "/v.h5");
    INFO(r.err);
    CHECK(r.code == 73);
    CHECK(r.err.find("Read-only file system") != std::string::npos);
    CHECK(slurp(mnt + "/v.h5") == before);
    sh("umount " + mnt);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("SIGTERM leaves no temp, and the next run removes what SIGKILL left", "[cli][outputs]") {
    const std::string dir = attnspec::test::temp_dir(), out = dir + "/v.h5";
    const auto killed = [&](const char* sig) {
        sh("(" + kCli + " verify thm3.5 --thorough --trials 200000 -q --out " + out +
           " >/dev/null 2>&1 & pid=$!; sleep 0.7; kill -" + sig + " $pid; wait $pid) 2>/dev/null");
    };
    killed("TERM");
    CHECK(count_entries(dir) == 0);  // neither the temp file nor the staging directory
    killed("KILL");
    CHECK(count_entries(dir) == 2);  // what SIGKILL cannot clean: the temp and the staging dir
    REQUIRE(run_cli("verify thm3.5 --trials 8 -q --out " + out).code == 0);
    CHECK(count_entries(dir) == 1);  // the next run removed them: only v.h5
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE(
    "two concurrent verify runs on one path leave one complete report and its own "
    "counterexamples",
    "[cli][outputs]") {
    const std::string dir = attnspec::test::temp_dir(), out = dir + "/v.h5";
    for (int round = 0; round < 3; ++round) {
        sh("(" + kCli + " verify thm3.8-above-sigma1 -q --seed 11 --out " + out + " & " + kCli +
           " verify thm3.8-above-sigma1 -q --seed 12 --out " + out + " & wait) >/dev/null 2>&1");
        // the report validates, is one of the two runs, and every counterexample file in its
        // directory comes from that same run
        CHECK(
            python("import sys, os, h5py\n"
                   "f = h5py.File(sys.argv[1], 'r')\n"
                   "cl = f.attrs['command_line']\n"
                   "assert f.attrs['seed'] in ('11', '12'), f.attrs['seed']\n"
                   "g = f['checks/thm3.8-above-sigma1']\n"
                   "names = sorted(os.listdir(sys.argv[2]))\n"
                   "assert len(names) == g.attrs['counterexample_files'] > 0, names\n"
                   "for n in names:\n"
                   "    assert h5py.File(os.path.join(sys.argv[2], n), 'r').attrs['command_line'] "
                   "== cl, n\n",
                   out + " " + dir + "/v.counterexamples", nullptr, dir + "/py.out") == 0);
        CHECK(count_entries(dir) == 3);  // v.h5, v.counterexamples, py.out
    }
    INFO(slurp(dir + "/py.out"));
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("every violated record is written (capped at 64) and replays from its file alone",
          "[cli][outputs]") {
    const std::string dir = attnspec::test::temp_dir(), alone = dir + "/alone";
    ::mkdir(alone.c_str(), 0755);
    auto r = run_cli("verify thm3.8-above-sigma1 --fail-on readings --out " + dir + "/v.h5");
    REQUIRE(r.code == 1);
    CHECK(r.err.find("written (cap 64)") != std::string::npos);
    REQUIRE(python("import sys, os, h5py\n"
                   "g = h5py.File(sys.argv[1], 'r')['checks/thm3.8-above-sigma1']\n"
                   "n = len(os.listdir(sys.argv[2]))\n"
                   "assert g.attrs['counterexample_cap'] == 64\n"
                   "assert n == g.attrs['counterexample_files'] == min(64, g.attrs['n_violated'])\n"
                   "assert g.attrs['counterexample_dir'] == 'v.counterexamples'\n",
                   dir + "/v.h5 " + dir + "/v.counterexamples", nullptr, dir + "/py.out") == 0);
    // each file replays on its own, away from the report, to the same verdict
    REQUIRE(sh("ls " + dir + "/v.counterexamples > " + dir + "/names") == 0);
    std::ifstream names(dir + "/names");
    int replayed = 0;
    for (std::string n; std::getline(names, n);) {
        sh("cp " + dir + "/v.counterexamples/" + n + " " + alone + "/x.h5");
        const auto rep = run_cli(
            "verify thm3.8-above-sigma1 --json --fail-on readings --instance " + alone + "/x.h5");
        INFO(n << ": " << rep.err);
        CHECK(rep.code == 1);
        CHECK(rep.out.find("\"verdict\": \"violated\"") != std::string::npos);
        ++replayed;
    }
    CHECK(replayed == 64);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("an instance file's seed is parsed strictly: 65 naming the attribute", "[cli][outputs]") {
    const std::string dir = attnspec::test::temp_dir();
    REQUIRE(
        run_cli("verify thm3.8-above-sigma1 -q --fail-on readings --out " + dir + "/v.h5").code ==
        1);
    REQUIRE(sh("cp " + dir + "/v.counterexamples/$(ls " + dir + "/v.counterexamples | head -1) " +
               dir + "/i.h5") == 0);
    for (const std::string& seed :
         std::vector<std::string>{"not-a-number", "123456789012345678901234567890", "-1"}) {
        REQUIRE(python("import sys, h5py\n"
                       "h5py.File(sys.argv[1], 'a')['record'].attrs['seed'] = sys.argv[2]\n",
                       dir + "/i.h5 " + seed, nullptr, dir + "/py.out") == 0);
        const auto r = run_cli("verify thm3.8-above-sigma1 --instance " + dir + "/i.h5");
        INFO(seed << ": " << r.err);
        CHECK(r.code == 65);
        CHECK(r.err.find("attribute 'seed'") != std::string::npos);
        CHECK(r.err.find("stoull") == std::string::npos);
    }
    std::system(("rm -rf " + dir).c_str());
}
