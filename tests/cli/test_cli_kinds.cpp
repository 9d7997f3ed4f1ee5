// Kinds of check (theorem, reading, experiment: proofs/registry.hpp), said by --list, the console,
// --json, the report and its page; only theorems decide the exit code unless --fail-on readings;
// the page's headline is the strongest robust violation with the strongest fragile one beside it;
// every experiment names its source, and specA-sweep says what it measures before its finding;
// scripts/check-reference.sh refuses a reference made from a dirty tree.
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "attnspec/io/h5.hpp"
#include "attnspec/proofs/registry.hpp"
#include "test_support.hpp"

using attnspec::proofs::CheckKind;
using namespace attnspec::test;

namespace {
const std::string kRef = std::string(ATTNSPEC_SOURCE_DIR) + "/reports/reference";
// An input file (reports/SCHEMA.md, "Attention input files") holding the head of each given
// thm3.4 counterexample file as /heads/<name>: a planted thm3.4 violation for --embedded.
const char* kHeadsFrom =
    "import sys, h5py\n"
    "with h5py.File(sys.argv[1], 'w') as f:\n"
    "    f.attrs['schema_version'] = '1.0'; f.attrs['kind'] = 'attnspec-input'\n"
    "    for arg in sys.argv[2:]:\n"
    "        name, path = arg.split('=')\n"
    "        r = h5py.File(path, 'r')['record']\n"
    "        g = f.create_group('heads/' + name)\n"
    "        for k in ('X', 'W_Q', 'W_K', 'W_V'): g[k] = r['instance'][k][()]\n"
    "        g.attrs['s'] = r['values'].attrs['s']\n";
}  // namespace

TEST_CASE("verify --list gives each check's kind, and the readings are Thm 3.8's three readings",
          "[cli][kinds]") {
    const auto r = run_cli("verify --list");
    REQUIRE(r.code == 0);
    std::set<std::string> readings;
    for (const auto& c : attnspec::proofs::registry()) {
        INFO(c.name);
        const std::string line = c.name + "\treconstructed (" + c.source + ")\t" +
                                 attnspec::proofs::to_string(c.kind) + "\t" + c.summary;
        CHECK(r.out.find(line) != std::string::npos);
        if (c.kind == CheckKind::reading) readings.insert(c.name);
    }
    CHECK(readings ==
          std::set<std::string>{"thm3.8-sufficient", "thm3.8-trained", "thm3.8-above-sigma1"});
    // named checks: those lines only (the names were taken and dropped: the whole table printed)
    const auto named = run_cli("verify --list thm3.5 infsa.perron");
    REQUIRE(named.code == 0);
    CHECK(named.out.rfind("thm3.5\t", 0) == 0);
    CHECK(named.out.find("\ninfsa.perron\t") != std::string::npos);
    CHECK(std::count(named.out.begin(), named.out.end(), '\n') == 2);
    const auto unknown = run_cli("verify --list thm9.9");
    CHECK(unknown.code == 64);
    CHECK(unknown.err.find("unknown check 'thm9.9'") != std::string::npos);
    // true sources (docs/SOURCES.md, checked against the summaries): the phrase "for lambda >= 2
    // under specific conditions" is not the SC summary's, Def 3.6 is not numbered there
    const auto* trained = attnspec::proofs::find_check("thm3.8-trained");
    CHECK(trained->source.find("earlier notes") != std::string::npos);
    CHECK(trained->source.find("not in the SC summary") != std::string::npos);
    CHECK(trained->source.find("is ours") != std::string::npos);
    for (const auto& c : attnspec::proofs::registry())
        CHECK(c.source.find("Def 3.6") == std::string::npos);
    const std::string lemma = slurp(std::string(ATTNSPEC_SOURCE_DIR) + "/proofs/lemma_3_7.md");
    CHECK(lemma.find("Source: SC summary") == std::string::npos);
    // docs/SOURCES.md names the same source in each check's row
    const std::string sources = slurp(std::string(ATTNSPEC_SOURCE_DIR) + "/docs/SOURCES.md");
    for (const auto& c : attnspec::proofs::registry()) {
        INFO(c.name);
        const auto row = sources.find("| `" + c.name + "`");
        REQUIRE(row != std::string::npos);
        const std::string line = sources.substr(row, sources.find('\n', row) - row);
        CHECK(line.find("| " + c.source + " |") != std::string::npos);
    }
}

TEST_CASE("a reading's violations decide the exit code only with --fail-on readings",
          "[cli][kinds]") {
    const std::string d = attnspec::test::temp_dir();
    const std::string run = "verify thm3.8-above-sigma1 --trials 48 -q ";
    const auto plain = run_cli(run + "--out " + d + "/v.h5");
    INFO(plain.err);
    REQUIRE(plain.out.find("thm3.8-above-sigma1: violated (reading)") != std::string::npos);
    CHECK(plain.code == 0);
    CHECK(plain.out.find("reconstructed statement, source: SC summary, Thm 3.8") !=
          std::string::npos);
    CHECK(run_cli(run + "--no-report --fail-on readings").code == 1);
    CHECK(run_cli(run + "--no-report --fail-on violated,readings").code == 1);
    CHECK(run_cli(run + "--no-report --fail-on inconclusive,readings").code == 1);
    CHECK(run_cli(run + "--no-report --fail-on violated").code == 0);
    CHECK(run_cli(run + "--no-report --fail-on never,readings").code == 64);
    CHECK(run_cli(run + "--no-report --fail-on readings,readings").code == 64);
    CHECK(run_cli(run + "--no-report --fail-on violated,inconclusive").code == 64);
    const auto j = run_cli(run + "--no-report --json");
    CHECK(j.out.find("\"kind\": \"reading\"") != std::string::npos);
    attnspec::H5Reader h(d + "/v.h5");
    CHECK(h.attr_string("/checks/thm3.8-above-sigma1", "kind") == "reading");
    // a replayed counterexample of a reading: violated, said to be a reading, exit 0 by default
    const std::string file = kRef + "/verify.counterexamples/thm3.8-above-sigma1-instance_64.h5";
    const auto rep = run_cli("verify thm3.8-above-sigma1 --instance " + file);
    CHECK(rep.out.find("thm3.8-above-sigma1: violated (reading)") != std::string::npos);
    CHECK(rep.out.find("reconstructed statement") != std::string::npos);
    CHECK(rep.code == 0);
    CHECK(run_cli("verify thm3.8-above-sigma1 --fail-on readings --instance " + file).code == 1);
    // a theorem's counterexample exits 1, and says robust
    const auto thm = run_cli("verify thm3.4 --instance " + kRef +
                             "/verify.counterexamples/thm3.4-instance_647.h5");
    CHECK(thm.code == 1);
    CHECK(thm.out.find("thm3.4: violated (theorem)") != std::string::npos);
    CHECK(thm.out.find("  robust violation\n") != std::string::npos);
    std::system(("rm -rf " + d).c_str());
}

TEST_CASE(
    "verify --all at the default seed: 0 when only readings are violated, 1 when a theorem is",
    "[cli][kinds]") {
    const std::string d = attnspec::test::temp_dir();
    const std::string all = "verify --all -q --trials 40 --search-evals 0 --no-report ";
    const auto r = run_cli(all + "--json");
    std::ofstream(d + "/all.json") << r.out;
    // the situation under test: some reading violated, no theorem violated (read from --json)
    std::string summary;
    REQUIRE(python("import sys, json\n"
                   "c = json.load(open(sys.argv[1]))['checks']\n"
                   "v = lambda k: sum(x['kind'] == k and x['verdict'] == 'violated' for x in c)\n"
                   "print(v('theorem'), v('reading'))\n"
                   "assert v('theorem') == 0 and v('reading') > 0\n",
                   d + "/all.json", &summary) == 0);
    INFO(summary);
    CHECK(r.code == 0);
    CHECK(run_cli(all + "--fail-on readings").code == 1);
    // a planted theorem violation: the head of a committed thm3.4 counterexample joins the run
    REQUIRE(python(kHeadsFrom, d + "/planted.h5 planted=" + kRef +
                                   "/verify.counterexamples/thm3.4-instance_647.h5") == 0);
    const auto p = run_cli(all + "--embedded " + d + "/planted.h5");
    CHECK(p.out.find("thm3.4: violated (theorem)") != std::string::npos);
    CHECK(p.out.find("first violation: regime embedded/planted, seed 0, robust violation") !=
          std::string::npos);
    CHECK(p.code == 1);
    std::system(("rm -rf " + d).c_str());
}

TEST_CASE("the page's headline is the strongest robust violation, the fragile one beside it",
          "[cli][kinds]") {
    const std::string d = attnspec::test::temp_dir();
    const std::string cx = kRef + "/verify.counterexamples/thm3.4-instance_";
    // instance_647 is robust (factor 17.85), instance_259 fragile (factor 388, J almost singular)
    REQUIRE(python(kHeadsFrom, d + "/h.h5 robust=" + cx + "647.h5 fragile=" + cx + "259.h5") == 0);
    const auto r = run_cli(
        "verify thm3.4 thm3.8-trained -q --regime embedded kW --search-evals 0 "
        "--embedded " +
        d + "/h.h5 --out " + d + "/v.h5");
    INFO(r.err);
    REQUIRE(r.code == 1);
    std::string ratio;
    REQUIRE(python("import sys, h5py\n"
                   "g = h5py.File(sys.argv[1], 'r')['checks/thm3.4/records']\n"
                   "by = {g[k].attrs['regime']: g[k]['values'].attrs for k in g}\n"
                   "assert by['embedded/robust']['violation_robust'] == 1\n"
                   "assert by['embedded/fragile']['violation_robust'] == 0\n"
                   "print('%.2g' % by['embedded/fragile']['sigma_min/sigma_max(J)'], end='')\n",
                   d + "/v.h5", &ratio) == 0);
    const auto md = run_cli("report render " + d + "/v.h5");
    REQUIRE(md.code == 0);
    const std::string page = md.out;
    const auto head = page.find("- Strongest robust violation: thm3.4, regime embedded/robust");
    const auto beside = page.find(
        "- Beside it, the strongest fragile violation (sigma_min/sigma_max(J) = " + ratio);
    CHECK(head != std::string::npos);
    CHECK(beside != std::string::npos);
    CHECK(head < beside);
    CHECK(page.find("regime embedded/fragile", beside) != std::string::npos);
    // theorems and readings counted apart, from the report's kinds
    CHECK(page.find("- Tested: 2 checks (1 theorem, 1 reading)") != std::string::npos);
    CHECK(page.find("Theorems: 0 hold, 1 violated; readings") != std::string::npos);
    CHECK(page.find("| thm3.8-trained | reading |") != std::string::npos);
    // the record lists say robust / fragile per record, and which replay from their file only
    CHECK(page.find("regime embedded/robust, seed 0, robust violation, from its file only") !=
          std::string::npos);
    CHECK(page.find("regime embedded/fragile, seed 0 (tightest), fragile violation "
                    "(sigma_min/sigma_max(J) "
                    "= " +
                    ratio) != std::string::npos);
    CHECK(page.find("none is drawn by a seed: search results or heads read from an input") !=
          std::string::npos);
    CHECK(
        page.find("Stored records (replayable from their seeds; `attnspec verify thm3.8-trained") !=
        std::string::npos);
    std::system(("rm -rf " + d).c_str());
}

TEST_CASE(
    "experiments carry their source, and specA-sweep says what it measures before its finding",
    "[cli][kinds]") {
    const std::string d = attnspec::test::temp_dir();
    const auto r = run_cli("verify specA-sweep --trials 48 -q --out " + d + "/v.h5");
    REQUIRE(r.code == 0);
    const std::string source = attnspec::proofs::find_check("specA-sweep")->source;
    attnspec::H5Reader h(d + "/v.h5");
    CHECK(h.attr_string("/checks/specA-sweep", "source") == source);
    CHECK(h.attr_string("/checks/specA-sweep/table", "weights").find("random, untrained") !=
          std::string::npos);
    const std::string page = run_cli("report render " + d + "/v.h5").out;
    CHECK(page.find("Source: " + source + ".") != std::string::npos);
    const auto measures = page.find("What it measures: kappa(J) on random, untrained heads");
    const auto finding = page.find("On these random, untrained heads, lambda = 10 lowers");
    CHECK(measures != std::string::npos);
    CHECK(finding != std::string::npos);
    CHECK(measures < finding);
    CHECK(page.find("lambda I_{D x d} added", measures) < finding);
    CHECK(page.find("token scales layernorm", measures) < finding);
    CHECK(r.out.find("  source: " + source) != std::string::npos);
    std::system(("rm -rf " + d).c_str());
}

TEST_CASE("check-reference.sh refuses a reference report made from a dirty tree", "[cli][kinds]") {
    const std::string d = attnspec::test::temp_dir();
    REQUIRE(std::system(("cp " + kRef + "/verify.h5 " + d + "/verify.h5").c_str()) == 0);
    REQUIRE(python("import sys, h5py\n"
                   "h5py.File(sys.argv[1], 'r+').attrs['git_dirty'] = 'true'\n",
                   d + "/verify.h5") == 0);
    const int rc = std::system(
        ("ATTNSPEC_REFERENCE_DIR=" + d + " ATTNSPEC_BIN=" + ATTNSPEC_CLI_PATH + " bash " +
         ATTNSPEC_SOURCE_DIR + "/scripts/check-reference.sh > " + d + "/out.txt 2>&1")
            .c_str());
    const std::string out = slurp(d + "/out.txt");
    INFO(out);
    CHECK(WIFEXITED(rc));
    CHECK(WEXITSTATUS(rc) == 1);
    CHECK(out.find("git_dirty = true") != std::string::npos);
    std::system(("rm -rf " + d).c_str());
}
