// Where a statement comes from (verify --list, the report's "statements" and "source"
// attributes, the rendered header) and the --regime filter: a filter matching nothing is a usage
// error, a run of 0 instances never says holds, a filter never adds search regimes it did not
// name.
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "attnspec/io/h5.hpp"
#include "attnspec/proofs/registry.hpp"
#include "test_support.hpp"

using attnspec::test::run_cli;
using attnspec::test::slurp;

namespace {
size_t count_of(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
}
}  // namespace

TEST_CASE("verify --list says reconstructed and names every check's source", "[cli][provenance]") {
    auto r = run_cli("verify --list");
    REQUIRE(r.code == 0);
    for (const auto& c : attnspec::proofs::registry()) {
        INFO(c.name);
        CHECK_FALSE(c.source.empty());
        const std::string line_start = c.name + "\treconstructed (" + c.source + ")\t";
        CHECK(r.out.find(line_start) != std::string::npos);
    }
    CHECK(count_of(r.out, "\treconstructed (") == attnspec::proofs::registry().size());
    // The check table (docs/checks.md, linked from the README) names the same source in the row
    // of each check.
    const std::string table = slurp(std::string(ATTNSPEC_SOURCE_DIR) + "/docs/checks.md");
    for (const auto& c : attnspec::proofs::registry()) {
        INFO(c.name);
        const auto row = table.find("| `" + c.name + "` |");
        REQUIRE(row != std::string::npos);
        const std::string line = table.substr(row, table.find('\n', row) - row);
        CHECK(line.find("| " + c.source + " |") != std::string::npos);
    }
}

TEST_CASE("a verify report records statements once at the root and each check's source",
          "[cli][provenance]") {
    const std::string dir = attnspec::test::temp_dir();
    auto r = run_cli("verify thm3.5 lemma3.7 --trials 12 -q --out " + dir + "/v.h5");
    INFO(r.err);
    REQUIRE(r.code == 0);
    attnspec::H5Reader h(dir + "/v.h5");
    const std::string st = h.attr_string("/", "statements");
    CHECK(st.find("reconstructed") != std::string::npos);
    CHECK(st.find("docs/SOURCES.md") != std::string::npos);
    for (const char* name : {"thm3.5", "lemma3.7"})
        CHECK(h.attr_string(std::string("/checks/") + name, "source") ==
              attnspec::proofs::find_check(name)->source);
    auto md = run_cli("report render " + dir + "/v.h5 --out " + dir + "/v.md");
    REQUIRE(md.code == 0);
    const std::string text = slurp(dir + "/v.md");
    CHECK(count_of(text, "Statements: " + st) == 1);
    CHECK(text.find("Statements: ") < text.find("## Summary"));  // in the header
    CHECK(text.find("Reconstructed statement; source: SC summary, Thm 3.5.") != std::string::npos);
}

TEST_CASE("a --regime filter that matches no regime is a usage error listing the regimes",
          "[cli][provenance][regime]") {
    auto r = run_cli("verify thm3.5 --regime nosuch --no-report -q");
    CHECK(r.code == 64);
    CHECK(r.out.find("holds") == std::string::npos);
    CHECK(r.err.find("'nosuch'") != std::string::npos);
    CHECK(r.err.find("thm3.5") != std::string::npos);
    CHECK(r.err.find("square/gaussian") != std::string::npos);
    CHECK(r.err.find("wide/rank-deficient") != std::string::npos);
    // Named checks: a filter that matches one check but not the other is still an error.
    auto two = run_cli("verify thm3.5 infsa.perron --regime square --no-report -q --trials 4");
    CHECK(two.code == 64);
    CHECK(two.err.find("infsa.perron") != std::string::npos);
    // A matching filter runs.
    auto ok = run_cli("verify thm3.5 --regime square/gaussian --trials 12 --no-report -q --json");
    CHECK(ok.code == 0);
    CHECK(ok.out.find("\"verdict\": \"holds\"") != std::string::npos);
    CHECK(ok.out.find("\"source\": \"SC summary, Thm 3.5\"") != std::string::npos);
    CHECK(ok.out.find("\"statements\": \"reconstructed") != std::string::npos);
}

TEST_CASE(
    "a run with no instance is inconclusive and fails CI, and so does no applicable instance too",
    "[cli][provenance][regime]") {
    // A time budget spent before the first instance: 0 instances ran.
    auto r = run_cli("verify thm3.5 --time-budget 1e-9 --trials 3 --no-report -q");
    CHECK(r.code == 2);
    CHECK(r.out.find("thm3.5: inconclusive") != std::string::npos);
    CHECK(r.out.find("no instance ran") != std::string::npos);
    CHECK(r.out.find("holds ") == r.out.find("holds   viol"));  // only the column header
    auto j = run_cli("verify thm3.5 --time-budget 1e-9 --trials 3 --no-report -q --json");
    CHECK(j.code == 2);
    CHECK(j.out.find("\"verdict\": \"holds\"") == std::string::npos);
    // Layer-normed tokens make X rank-deficient, so J is never full rank: every instance is
    // not applicable, and the run must not pass CI as if it had checked something.
    auto na = run_cli(
        "verify thm3.4 --regime d=D/gauss-1/s=1/layernorm --trials 400 --no-report -q "
        "--json");
    INFO(na.out);
    CHECK(na.code == 2);
    CHECK(na.out.find("\"verdict\": \"not_applicable\"") != std::string::npos);
    CHECK(run_cli("verify thm3.4 --regime d=D/gauss-1/s=1/layernorm --trials 400 --no-report -q "
                  "--fail-on violated")
              .code == 0);
}

TEST_CASE("a --regime filter adds the thm3.4 search regimes only when it names them",
          "[cli][provenance][regime]") {
    const std::string base = "verify thm3.4 --trials 400 --search-budget 1 --no-report -q --json ";
    auto plain = run_cli(base + "--regime d=D/gauss-1/s=1/gaussian");
    INFO(plain.err);
    REQUIRE((plain.code == 0 || plain.code == 1 || plain.code == 2));
    CHECK(plain.out.find("d=D/gauss-1/s=1/gaussian") != std::string::npos);
    CHECK(plain.out.find("search/") == std::string::npos);
    // Filters match regime names as substrings: "search/d=D" names the searches from the d=D
    // starts and not the N <= D shape searches ("search" alone would name both; which of them
    // then ran within --search-budget 1 s depended on their start order).
    auto named = run_cli(base + "--regime d=D/gauss-1/s=1/gaussian search/d=D");
    INFO(named.err);
    CHECK(named.out.find("\"search/d=D") != std::string::npos);
    CHECK(named.out.find("\"search/N") == std::string::npos);
}

TEST_CASE("scripts/check-links.sh fails on a link outside the repository or to a missing file",
          "[cli][provenance][links]") {
    const std::string dir = attnspec::test::temp_dir() + "/repo";
    const std::string script = std::string(ATTNSPEC_SOURCE_DIR) + "/scripts/check-links.sh";
    auto sh = [&](const std::string& cmd) {
        return std::system(("cd " + dir + " && " + cmd + " > ../out.txt 2>&1").c_str());
    };
    auto write = [&](const std::string& name, const std::string& text) {
        std::ofstream(dir + "/" + name) << text;
    };
    REQUIRE(std::system(("mkdir -p " + dir + "/docs").c_str()) == 0);
    REQUIRE(sh("git init -q . && git config user.email t@t && git config user.name t") == 0);
    write("docs/MATH.md", "# math\n");
    write("README.md", "See [the math](docs/MATH.md#sec) and [web](https://example.org).\n");
    REQUIRE(sh("git add -A && bash " + script + " .") == 0);  // clean tree passes
    write("README.md", "See [the math](../outside/MATH.md).\n");
    CHECK(sh("git add -A && bash " + script + " .") != 0);
    CHECK(slurp(dir + "/../out.txt").find("outside the repository") != std::string::npos);
    write("README.md", "See [the math](docs/NOPE.md).\n");
    CHECK(sh("git add -A && bash " + script + " .") != 0);
    CHECK(slurp(dir + "/../out.txt").find("missing file") != std::string::npos);
    write("README.md", "See `../" + std::string("shared/") + "design/MATH.md`.\n");
    CHECK(sh("git add -A && bash " + script + " .") != 0);
    CHECK(slurp(dir + "/../out.txt").find("README.md:1") != std::string::npos);
    // An untracked file is not the repository's business.
    write("README.md", "ok\n");
    write("notes.md", "[x](missing.md)\n");
    CHECK(sh("git add README.md && bash " + script + " .") == 0);
}
