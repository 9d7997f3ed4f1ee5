// verify --threads (issue 13): reports bit-identical for any thread count, compared by
// scripts/compare-reports.py --rtol 0, and a planted difference (another seed) that the same
// comparison catches.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "test_support.hpp"

using namespace attnspec::test;

namespace {
// Fast checks, one with violations (counterexample files), with few instances each.
const std::string kChecks =
    "verify thm3.5 thm3.8 thm3.8-above-sigma1 infsa.neumann thm3.3 --trials 12 -q "
    "--fail-on readings ";

void verify_to(const std::string& args, const std::string& out) {
    auto r = run_cli(kChecks + args + " --out " + out);
    INFO(r.err);
    REQUIRE(r.code == 1);  // thm3.8-above-sigma1 (a reading, counted here) is expected violated
}
}  // namespace

TEST_CASE("verify --threads 1 and --threads 3 give reports and counterexamples that compare equal",
          "[cli][parallel]") {
    const std::string dir = attnspec::test::temp_dir();
    verify_to("--threads 1", dir + "/t1.h5");
    verify_to("--threads 3", dir + "/t3.h5");
    CHECK(compare_reports(dir + "/t1.h5", dir + "/t3.h5", "--rtol 0", dir + "/cmp.txt") == 0);
    const int found = std::system(("ls " + dir + "/t1.counterexamples/*.h5 > /dev/null").c_str());
    REQUIRE(found == 0);
    const int same_files =
        std::system(("cd " + dir + "/t1.counterexamples && for f in *.h5; do " + ATTNSPEC_PYTHON +
                     " " + ATTNSPEC_SOURCE_DIR + "/scripts/compare-reports.py --rtol 0 $f ../" +
                     "t3.counterexamples/$f > /dev/null || exit 1; done")
                        .c_str());
    CHECK(same_files == 0);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("verify --threads: a planted difference (another --seed) is caught by the comparison",
          "[cli][parallel]") {
    const std::string dir = attnspec::test::temp_dir();
    verify_to("--threads 3 --seed 1", dir + "/a.h5");
    verify_to("--threads 3 --seed 2", dir + "/b.h5");
    CHECK(compare_reports(dir + "/a.h5", dir + "/b.h5", "--rtol 0", dir + "/cmp.txt") == 1);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("verify --threads 0 is a usage error naming the option", "[cli][parallel]") {
    for (const char* bad : {"0", "-2", "many"}) {
        auto r = run_cli(std::string("verify thm3.5 --no-report --threads ") + bad);
        CHECK(r.code == 64);
        CHECK(r.err.find("--threads") != std::string::npos);
    }
}

TEST_CASE("verify --help and its page teach --threads", "[cli][parallel]") {
    auto r = run_cli("verify --help");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("--threads") != std::string::npos);
    // The serial example moved with the long help to the command's page.
    std::ifstream in(std::string(ATTNSPEC_SOURCE_DIR) + "/docs/cli/verify.md");
    REQUIRE(in.good());
    const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(page.find("verify --all --threads 1") != std::string::npos);
}

TEST_CASE("verify --threads 2: checks side by side fail as a serial run would, first check first",
          "[cli][parallel]") {
    // Both checks throw (the filter matches none of their regimes); the error is the first one's
    // in command-line order whatever check ends first, as with --threads 1.
    for (const std::string threads : {"1", "2"}) {
        auto a =
            run_cli("verify thm3.5 lemma3.7 --regime no-such --no-report -q --threads " + threads);
        CHECK(a.code == 64);
        CHECK(a.err.find("no regime of thm3.5") != std::string::npos);
        auto b =
            run_cli("verify lemma3.7 thm3.5 --regime no-such --no-report -q --threads " + threads);
        CHECK(b.code == 64);
        CHECK(b.err.find("no regime of lemma3.7") != std::string::npos);
    }
}

TEST_CASE(
    "verify --threads 2: the real-model checks side by side (HDF5 reads under the runner "
    "lock) give the serial run's report",
    "[cli][parallel]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::string args =
        "verify thm3.4-model model-kappa-J model-weights-kappa --dataset minilm-l6:0 -q --out ";
    auto one = run_cli(args + dir + "/s1.h5 --threads 1");
    auto two = run_cli(args + dir + "/s2.h5 --threads 2");
    INFO(one.err << two.err);
    REQUIRE(one.code == two.code);
    REQUIRE((one.code == 0 || one.code == 1));
    CHECK(compare_reports(dir + "/s1.h5", dir + "/s2.h5", "--rtol 0", dir + "/cmp.txt") == 0);
    std::system(("rm -rf " + dir).c_str());
}
