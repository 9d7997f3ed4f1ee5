// Experiments (specA-sweep): printed as a table, no verdict, no effect on the exit code; stored
// as /checks/<name> with kind = "experiment" and a table/ group (reports/SCHEMA.md), rendered by
// `report render`, and their example curves replay.
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "test_support.hpp"

using namespace attnspec::test;

TEST_CASE("verify prints an experiment as a table and exits on the theorems alone", "[cli]") {
    const std::string dir = attnspec::test::temp_dir();
    auto r = run_cli("verify thm3.5 specA-sweep --trials 48 -q --out " + dir + "/v.h5");
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(r.out.find("specA-sweep: experiment, no verdict") != std::string::npos);
    CHECK(r.out.find("lambda = 10 lowers kappa(J)") != std::string::npos);
    // with a refuted reading beside it, counted (--fail-on readings), the exit code is that
    // reading's
    CHECK(run_cli("verify thm3.8-above-sigma1 specA-sweep --trials 48 -q --no-report --fail-on "
                  "readings")
              .code == 1);
    auto j = run_cli("verify specA-sweep --trials 48 -q --no-report --json");
    CHECK(j.code == 0);
    CHECK(j.out.find("\"kind\": \"experiment\"") != std::string::npos);
    for (const char* axis : {"\"tokens\"", "\"placement\"", "\"scale\"", "\"lambda\""})
        CHECK(j.out.find(axis) != std::string::npos);
    CHECK(j.out.find("\"n_holds\"") == std::string::npos);  // no verdict counts

    // The report: kind attributes and the table, read back with h5py.
    std::string out;
    const int rc = python(
        "import sys, h5py\n"
        "f = h5py.File(sys.argv[1], 'r')\n"
        "assert f['checks/thm3.5'].attrs['kind'] == 'theorem'\n"
        "e = f['checks/specA-sweep']\n"
        "assert e.attrs['kind'] == 'experiment'\n"
        "assert 'verdict' not in e.attrs and 'n_holds' not in e.attrs\n"
        "axes = e.attrs['axes'].split(',')\n"
        "assert axes == ['tokens', 'placement', 'scale', 'lambda'], axes\n"
        "n = e.attrs['rows']\n"
        "for c in axes + e.attrs['columns'].split(','):\n"
        "    assert e['table/' + c].shape == (n,), c\n"
        "assert n == 3 * 2 * 2 * 11, n\n"
        "print('schema-ok')\n",
        dir + "/v.h5", &out);
    INFO(out);
    CHECK(rc == 0);
    CHECK(out.find("schema-ok") != std::string::npos);

    auto md = run_cli("report render " + dir + "/v.h5");
    CHECK(md.code == 0);
    CHECK(md.out.find("## specA-sweep (experiment)") != std::string::npos);
    CHECK(md.out.find("| tokens | placement | scale | lambda |") != std::string::npos);
    auto show = run_cli("report show " + dir + "/v.h5");
    CHECK(show.code == 0);
    CHECK(show.out.find("specA-sweep: experiment over") != std::string::npos);
    // an example curve replays, with no verdict and exit 0
    auto rep = run_cli("verify specA-sweep --instance " + dir + "/v.h5");
    CHECK(rep.code == 0);
    CHECK(rep.out.find("experiment record, no verdict") != std::string::npos);
    CHECK(rep.out.find("curve") != std::string::npos);
    std::system(("rm -rf " + dir).c_str());
}
