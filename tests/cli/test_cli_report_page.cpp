// `report render FILE --out DIR`: DIR/report.md with the figures of the figures script placed in
// their sections, the whole directory written atomically (a failed script leaves no DIR and keeps
// a previous one), --no-figures, and `--out F.md` writing the Markdown alone as before. The
// figures script is a stub written by the test (ATTNSPEC_RENDER_SCRIPT): it writes the manifest of
// the contract (reports/SCHEMA.md, "Rendered report directory") or fails as told by STUB_MODE.
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "test_support.hpp"

using namespace attnspec::test;

namespace {

const char* kStub =
    "import os, sys\n"
    "a = sys.argv[1:]\n"
    "out = a[a.index('--out') + 1]\n"
    "open(os.environ['STUB_LOG'], 'w').write(' '.join(a))\n"
    "mode = os.environ.get('STUB_MODE', 'ok')\n"
    "print('stub: drawing', file=sys.stderr)\n"
    "if mode == 'refuse':\n"
    "    print('stub: old report', file=sys.stderr); sys.exit(65)\n"
    "if mode == 'nomatplotlib': sys.exit(69)\n"
    "if mode == 'crash': sys.exit(3)\n"
    "for n in ('a', 'b'):\n"
    "    open(out + '/' + n + '.svg', 'w').write('<svg/>')\n"
    "    open(out + '/' + n + '.png', 'wb').write(b'png')\n"
    "rows = ['id\\tsection\\tsvg\\tpng\\tcaption',\n"
    "        'a\\tneumann\\ta.svg\\ta.png\\tTruncation error against K',\n"
    "        'b\\tsummary\\tb.svg\\tb.png\\tOverview']\n"
    "if mode == 'badmanifest': rows.append('c\\tneumann\\t../c.svg\\tc.png\\tescapes')\n"
    "open(out + '/figures.tsv', 'w').write('\\n'.join(rows) + '\\n')\n"
    "open(out + '/figures.json', 'w').write('{}')\n"
    "if mode == 'partial': sys.exit(1)\n";

struct Fixture {
    std::string d = attnspec::test::temp_dir();
    Fixture() {
        std::ofstream(d + "/stub.py") << kStub;
        ::setenv("ATTNSPEC_RENDER_SCRIPT", (d + "/stub.py").c_str(), 1);
        ::setenv("ATTNSPEC_PYTHON", ATTNSPEC_PYTHON, 1);
        ::setenv("STUB_LOG", (d + "/stub.log").c_str(), 1);
        ::setenv("STUB_MODE", "ok", 1);
        const auto r = run_cli("neumann --tokens 16 --dh 4 --out " + d + "/n.h5");
        REQUIRE(r.code == 0);
    }
    ~Fixture() {
        ::unsetenv("ATTNSPEC_RENDER_SCRIPT"), ::unsetenv("ATTNSPEC_PYTHON");
        ::unsetenv("STUB_LOG"), ::unsetenv("STUB_MODE");
        std::system(("rm -rf " + d).c_str());
    }
    attnspec::test::CliResult render(const std::string& out, const std::string& mode,
                                     const std::string& extra = "") {
        ::setenv("STUB_MODE", mode.c_str(), 1);
        std::remove((d + "/stub.log").c_str());
        return run_cli("report render " + d + "/n.h5 --out " + out + extra);
    }
};
}  // namespace

TEST_CASE("report render --out DIR writes report.md with the figures in their sections",
          "[cli][report]") {
    Fixture f;
    const std::string out = f.d + "/page";
    const auto r = f.render(out, "ok");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.err.find("stub: drawing") != std::string::npos);  // the script's progress on stderr
    CHECK(r.err.find("2 figures") != std::string::npos);
    const std::string log = slurp(f.d + "/stub.log");
    CHECK(log.find("--report " + f.d + "/n.h5 --out ") == 0);
    CHECK(log.substr(log.size() - 8) == "/figures");
    const std::string md = slurp(out + "/report.md");
    const auto sec = md.find("## Neumann kernel"), prov = md.find("## Provenance"),
               fig = md.find("![Truncation error against K](figures/a.png)"),
               over = md.find("![Overview](figures/b.png)");
    REQUIRE(fig != std::string::npos);
    REQUIRE(over != std::string::npos);
    CHECK((sec < fig && fig < prov));
    CHECK((md.find("## Summary") < over && over < sec));
    CHECK(md.find("(figures/a.svg)") != std::string::npos);
    CHECK(exists(out + "/figures/figures.json"));
    CHECK(exists(out + "/figures/a.png"));
    CHECK(temps_in(f.d) == 0);
    // The temp of a killed render (a pid above any pid_max: gone) is removed by the next one.
    ::mkdir((f.d + "/.page.tmp.99999999.abcdef").c_str(), 0755);
    std::ofstream(f.d + "/.page.tmp.99999999.abcdef/report.md") << "half";
    // A second render replaces the directory as a whole, but only while it holds nothing but
    // the page it wrote (its manifest): a file of the user's keeps it (73, the file named).
    std::ofstream(out + "/report.md") << "old";
    std::ofstream(out + "/stale.txt") << "from before";
    const auto kept = f.render(out, "ok");
    CHECK(kept.code == 73);
    CHECK(kept.err.find("stale.txt") != std::string::npos);
    CHECK(slurp(out + "/stale.txt") == "from before");
    std::remove((out + "/stale.txt").c_str());
    REQUIRE(f.render(out, "ok").code == 0);
    CHECK(slurp(out + "/report.md") == md);
    CHECK(exists(out + "/.attnspec-page"));
    CHECK(temps_in(f.d) == 0);
}

TEST_CASE("report render --out DIR: a failing figures script leaves no DIR and keeps the old one",
          "[cli][report]") {
    Fixture f;
    struct Case {
        const char* mode;
        int code;
        const char* says;
    };
    for (const Case& c : {Case{"refuse", 65, "refused"}, Case{"nomatplotlib", 69, "matplotlib"},
                          Case{"crash", 70, "exit 3"}, Case{"partial", 70, "exit 1"},
                          Case{"badmanifest", 70, "contract"}}) {
        const auto r = f.render(f.d + "/new", c.mode);
        INFO(c.mode << ": " << r.err);
        CHECK(r.code == c.code);
        CHECK(r.err.find(c.says) != std::string::npos);
        CHECK(!exists(f.d + "/new"));
        CHECK(temps_in(f.d) == 0);
    }
    REQUIRE(f.render(f.d + "/page", "ok").code == 0);
    const std::string before = slurp(f.d + "/page/report.md");
    CHECK(f.render(f.d + "/page", "refuse").code == 65);
    CHECK(slurp(f.d + "/page/report.md") == before);
    CHECK(exists(f.d + "/page/figures/a.png"));
    ::setenv("ATTNSPEC_RENDER_SCRIPT", (f.d + "/missing.py").c_str(), 1);
    const auto m = f.render(f.d + "/new", "ok");
    CHECK(m.code == 66);
    CHECK(m.err.find("--no-figures") != std::string::npos);
    CHECK(!exists(f.d + "/new"));
    // $ATTNSPEC_FIGURES_SCRIPT goes before $ATTNSPEC_RENDER_SCRIPT (its older name).
    ::setenv("ATTNSPEC_RENDER_SCRIPT", (f.d + "/stub.py").c_str(), 1);
    ::setenv("ATTNSPEC_FIGURES_SCRIPT", (f.d + "/missing-too.py").c_str(), 1);
    const auto g = f.render(f.d + "/new", "ok");
    ::unsetenv("ATTNSPEC_FIGURES_SCRIPT");
    CHECK(g.code == 66);
    CHECK(g.err.find("missing-too.py") != std::string::npos);
    CHECK(!exists(f.d + "/new"));
}

TEST_CASE("report render --no-figures and --out F.md write the Markdown alone", "[cli][report]") {
    Fixture f;
    const auto r = f.render(f.d + "/page", "crash", " --no-figures");  // the script is not run
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(!exists(f.d + "/stub.log"));
    CHECK(!exists(f.d + "/page/figures"));
    const std::string md = slurp(f.d + "/page/report.md");
    CHECK(md.rfind("# attnspec neumann report\n", 0) == 0);
    CHECK(md.find("![") == std::string::npos);
    const auto m = f.render(f.d + "/page.md", "crash");
    REQUIRE(m.code == 0);
    CHECK(!exists(f.d + "/stub.log"));
    CHECK(slurp(f.d + "/page.md") == md);  // the same page, as a file
    // stdout: the same Markdown
    CHECK(run_cli("report render " + f.d + "/n.h5").out == md);
}

TEST_CASE("report render --out DIR never replaces a directory that is not a rendered page",
          "[cli][report]") {
    Fixture f;
    ::mkdir((f.d + "/mine").c_str(), 0755);
    std::ofstream(f.d + "/mine/notes.txt") << "keep";
    const auto r = f.render(f.d + "/mine", "ok");
    CHECK(r.code == 73);
    CHECK(r.err.find("without a report.md") != std::string::npos);
    CHECK(slurp(f.d + "/mine/notes.txt") == "keep");
    CHECK(f.render(f.d + "/no/such/dir", "ok").code == 73);
    CHECK(f.render(f.d + "/n.h5", "ok").code == 64);  // the input itself
    ::mkdir((f.d + "/empty").c_str(), 0755);          // an empty directory is a new page
    CHECK(f.render(f.d + "/empty", "ok").code == 0);
    CHECK(exists(f.d + "/empty/report.md"));
}
