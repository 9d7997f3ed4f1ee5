// verify --shard i/n and report merge (issue 13, "Sweeps beyond one machine"): the shards of a
// run, merged, give the unsharded run's report and counterexample files (compare-reports --rtol 0
// --counterexamples), for n = 1, 2, 3 and 5 (more shards than checks: an empty shard); shards
// that are not the n parts of one run are refused with 65 and nothing is written. The MPI run is
// tests/mpi/verify_mpi.sh (a CTest entry of MPI builds).
#include <sys/stat.h>

#include <fstream>
#include <iterator>

#include "test_support.hpp"

using namespace attnspec::test;

namespace {
// Four fast checks; thm3.8-above-sigma1 has violated instances, hence counterexample files.
const std::string kSel =
    "verify thm3.5 thm3.8 thm3.8-above-sigma1 infsa.neumann --trials 8 -q --fail-on never ";

// Runs shard i/n of kSel (plus `extra`) into dir/<stem>i.h5.
void run_shards(const std::string& dir, const std::string& stem, int n,
                const std::string& extra = "") {
    for (int i = 0; i < n; ++i) {
        const auto r =
            run_cli(kSel + extra + "--shard " + std::to_string(i) + "/" + std::to_string(n) +
                    " --out " + dir + "/" + stem + std::to_string(i) + ".h5");
        INFO(r.err);
        REQUIRE(r.code == 0);
    }
}
std::string files(const std::string& dir, const std::string& stem, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += " " + dir + "/" + stem + std::to_string(i) + ".h5";
    return s;
}
}  // namespace

TEST_CASE("verify --shard: merged shards equal the unsharded run for n = 1, 2, 3, 5",
          "[cli][shard]") {
    const std::string dir = attnspec::test::temp_dir();
    auto full = run_cli(kSel + "--out " + dir + "/full.h5");
    REQUIRE(full.code == 0);
    REQUIRE(exists(dir + "/full.counterexamples"));
    for (int n : {1, 2, 3, 5}) {
        const std::string stem = "n" + std::to_string(n) + "s";
        run_shards(dir, stem, n);
        const std::string merged = dir + "/merged" + std::to_string(n) + ".h5";
        const auto m = run_cli("report merge" + files(dir, stem, n) + " --out " + merged);
        INFO("n = " << n << ": " << m.err);
        REQUIRE(m.code == 0);
        CHECK(m.out.find("merged " + std::to_string(n) +
                         " shard(s), 4 check(s) and 2 "
                         "counterexample file(s)") != std::string::npos);
        CHECK(compare_reports(dir + "/full.h5", merged, "--rtol 0 --counterexamples",
                              dir + "/cmp.txt") == 0);
        INFO(slurp(dir + "/cmp.txt"));
    }
    // 4 checks over 5 shards: one shard holds none and says so in its attributes
    const std::string py =
        std::string("import h5py, sys\n") + "n = 0\nfor i in range(5):\n    f = h5py.File('" + dir +
        "/n5s%d.h5' % i, 'r')\n    if f.attrs['shard_checks'] == '':\n" +
        "        assert len(f['checks']) == 0; n += 1\n" + "sys.exit(0 if n == 1 else 1)\n";
    CHECK(python(py) == 0);
    // the comparison can fail: another seed differs from the unsharded run
    REQUIRE(run_cli(kSel + "--seed 7 --out " + dir + "/seed7.h5").code == 0);
    CHECK(compare_reports(dir + "/full.h5", dir + "/seed7.h5", "--rtol 0 --counterexamples",
                          dir + "/cmp.txt") == 1);
    sh("rm -rf " + dir);
}

TEST_CASE("report merge refuses shards of different runs, duplicates and missing ones",
          "[cli][shard]") {
    const std::string dir = attnspec::test::temp_dir();
    run_shards(dir, "a", 3);
    run_shards(dir, "b", 3, "--seed 7 ");
    run_shards(dir, "c", 2);
    const std::string out = " --out " + dir + "/m.h5";
    struct Case {
        std::string shards, message;
    };
    const std::vector<Case> cases = {
        {dir + "/a0.h5 " + dir + "/b1.h5 " + dir + "/a2.h5",
         "different options (seed=7 vs seed=20251)"},
        {dir + "/a0.h5 " + dir + "/a1.h5 " + dir + "/a1.h5", "are both shard 1 of 3"},
        {dir + "/a0.h5 " + dir + "/a2.h5", "shard(s) 1 of 3 missing"},
        {dir + "/a0.h5 " + dir + "/c1.h5 " + dir + "/a2.h5",
         "different numbers of shards (2 vs 3)"},
        {dir + "/a0.h5 " + dir + "/a1.h5 " + dir + "/a2.h5 " + dir + "/full.h5",
         "is not a shard report"},
    };
    REQUIRE(run_cli(kSel + "--out " + dir + "/full.h5").code == 0);
    for (const auto& c : cases) {
        const auto r = run_cli("report merge " + c.shards + out);
        INFO(c.shards << ": " << r.err);
        CHECK(r.code == 65);
        CHECK(r.err.find(c.message) != std::string::npos);
        CHECK(!exists(dir + "/m.h5"));
    }
    // a shard whose counterexample file went missing
    sh("rm " + dir + "/a0.counterexamples/* " + dir + "/a1.counterexamples/* " + dir +
       "/a2.counterexamples/* 2>/dev/null");
    const auto r = run_cli("report merge" + files(dir, "a", 3) + out);
    CHECK(r.code == 65);
    CHECK(r.err.find("counterexample file(s)") != std::string::npos);
    CHECK(!exists(dir + "/m.h5"));
    sh("rm -rf " + dir);
}

TEST_CASE("verify --shard and report merge: bad usage exits 64", "[cli][shard]") {
    for (const std::string bad : {"3/3", "1", "-1/2", "0/0", "a/b", "1/2/3"}) {
        const auto r = run_cli("verify thm3.5 --trials 2 --no-report --shard " + bad);
        INFO(bad << ": " << r.err);
        CHECK(r.code == 64);
        CHECK(r.err.find("--shard '" + bad + "'") != std::string::npos);
    }
    CHECK(run_cli("report merge a.h5 b.h5").code == 64);   // no --out
    CHECK(run_cli("report merge --out m.h5").code == 64);  // no shard
    CHECK(run_cli("report show a.h5 b.h5").code == 64);    // one FILE
    const auto m = run_cli("verify thm3.5 --trials 2 --mpi --shard 0/2");
    CHECK(m.code == 64);
    CHECK(m.err.find("not with --shard") != std::string::npos);
    CHECK(run_cli("verify thm3.5 --instance x.h5 --shard 0/2").code == 64);
    CHECK(run_cli("report merge /nonexistent/s0.h5 --out /tmp/never.h5").code == 66);
}

#ifdef ATTNSPEC_TESTS_NO_MPI
TEST_CASE("verify --mpi in a build without MPI exits 69 and writes nothing", "[cli][shard]") {
    const std::string dir = attnspec::test::temp_dir();
    const auto r = run_cli("verify thm3.5 --trials 2 --mpi --out " + dir + "/r.h5");
    CHECK(r.code == 69);
    CHECK(r.err.find("built without MPI") != std::string::npos);
    CHECK(!exists(dir + "/r.h5"));
    sh("rm -rf " + dir);
}
#endif
