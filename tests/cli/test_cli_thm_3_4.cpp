// verify thm3.4 search options: a seed reproduces the report (search bounded by evaluations), a
// wall-clock cap is recorded with whether it was reached, bad values are usage errors.
#include <cstdlib>
#include <string>

#include "test_support.hpp"

using namespace attnspec::test;

namespace {
const std::string kSmall =
    "verify thm3.4 -q --regime d=D/gauss-0.1/s=1/gaussian search/d=D 'search/N<=D(4,8,4)' "
    "--embedded '' --fail-on never ";
}

TEST_CASE("verify thm3.4: two runs of one seed give reports that compare equal", "[cli]") {
    const std::string dir = attnspec::test::temp_dir();
    for (const char* name : {"a", "b"}) {
        auto r = run_cli(kSmall + "--seed 3 --search-evals 90 --out " + dir + "/" + name + ".h5");
        INFO(r.err);
        REQUIRE(r.code == 0);
        CHECK(r.out.find("search budget 90 evaluations") != std::string::npos);
        CHECK(r.out.find("Wall-clock cap") == std::string::npos);  // none given
    }
    const int rc = compare_reports(dir + "/a.h5", dir + "/b.h5", "", dir + "/cmp.txt");
    CHECK(rc == 0);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("verify thm3.4: --search-seconds is a cap the output records, and bad values are usage",
          "[cli]") {
    auto r = run_cli(kSmall + "--no-report --search-evals 100000 --search-seconds 0.001");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("Wall-clock cap 0.001 s: reached") != std::string::npos);
    CHECK(run_cli("verify thm3.4 --search-evals=-5").code == 64);
    CHECK(run_cli("verify thm3.4 --search-seconds=-1").code == 64);
}
