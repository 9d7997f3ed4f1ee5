// The real-model analysis in `attnspec verify` (issue 11): --list names it, --dataset selects the
// heads (errors: malformed 64, unknown 66, '' for a named model check 64), --dataset '' drops it
// from --all, the report carries the tables with their attributes, thm3.4-model records replay.
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "test_support.hpp"

using namespace attnspec::test;

TEST_CASE("verify --list names the real-model analysis", "[cli][model]") {
    auto r = run_cli("verify --list");
    REQUIRE(r.code == 0);
    for (const char* c :
         {"model-weights-kappa", "model-kappa-J", "model-speca-lambda", "model-infsa"})
        CHECK(r.out.find(std::string(c) + "\treconstructed") != std::string::npos);
    CHECK(r.out.find("thm3.4-model\treconstructed (SC summary, Thm 3.4") != std::string::npos);
    auto h = run_cli("verify --help");
    CHECK(h.out.find("--dataset") != std::string::npos);
}

TEST_CASE("verify --dataset: malformed, unknown and empty selections", "[cli][model]") {
    auto bad = run_cli("verify model-infsa --dataset 'minilm-l6:x' -q --no-report");
    CHECK(bad.code == 64);
    CHECK(bad.err.find("--dataset") != std::string::npos);
    auto unknown = run_cli("verify model-infsa --dataset no-such-model -q --no-report");
    CHECK(unknown.code == 66);
    auto empty = run_cli("verify model-infsa --dataset '' -q --no-report");
    CHECK(empty.code == 64);
    CHECK(empty.err.find("model dataset") != std::string::npos);
    auto range = run_cli("verify model-infsa --dataset minilm-l6:9 -q --no-report");
    CHECK(range.code == 65);
    CHECK(range.err.find("layer 9 out of range") != std::string::npos);
}

TEST_CASE("verify --all --dataset '' runs no real-model check", "[cli][model]") {
    auto r = run_cli(
        "verify --all --dataset '' --trials 11 --search-evals 0 -q --no-report "
        "--fail-on never --json");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("\"thm3.5\"") != std::string::npos);
    CHECK(r.out.find("model-") == std::string::npos);
    CHECK(r.out.find("thm3.4-model") == std::string::npos);
}

TEST_CASE("the real-model experiments in a report: tables, attributes, a replayable thm3.4-model",
          "[cli][model]") {
    const std::string dir = attnspec::test::temp_dir();
    auto r = run_cli(
        "verify model-weights-kappa thm3.4-model model-infsa --dataset minilm-l6:2:4 "
        "-q --fail-on never --out " +
        dir + "/v.h5");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("model-infsa: experiment, no verdict") != std::string::npos);
    CHECK(r.out.find("cos_left: min") != std::string::npos);
    std::string out;
    const int rc = python(
        "import sys, h5py\n"
        "f = h5py.File(sys.argv[1], 'r')\n"
        "w = f['checks/model-weights-kappa']\n"
        "assert w.attrs['kind'] == 'experiment'\n"
        "assert w.attrs['rows'] == 18, w.attrs['rows']\n"
        "assert w['table'].attrs['kappa'].startswith('strict')\n"
        "i = f['checks/model-infsa']\n"
        "assert i.attrs['rows'] == 8, i.attrs['rows']\n"
        "assert i['table'].attrs['bias_form'].startswith('with biases')\n"
        "assert 'cos_left' in i['table'].attrs['finding']\n"
        "t = f['checks/thm3.4-model']\n"
        "assert t.attrs['kind'] == 'theorem' and t.attrs['instances'] == 1\n"
        "print('schema-ok')\n",
        dir + "/v.h5", &out);
    INFO(out);
    CHECK(rc == 0);
    CHECK(out.find("schema-ok") != std::string::npos);
    auto rep = run_cli("verify thm3.4-model --instance " + dir + "/v.h5 --fail-on never --json");
    INFO(rep.err);
    CHECK(rep.code == 0);
    CHECK(rep.out.find("\"check\": \"thm3.4-model\"") != std::string::npos);
    auto show = run_cli("report show " + dir + "/v.h5");
    CHECK(show.code == 0);
    CHECK(show.out.find("(not shown: the report or --json)") == std::string::npos);  // 18 rows
    std::system(("rm -rf " + dir).c_str());
}
