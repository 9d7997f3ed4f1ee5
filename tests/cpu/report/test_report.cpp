// HDF5 report writer/reader: row-major layout, attributes, atomic commit, errors; check records
// and counterexample files written and read back (report/check_records.hpp).
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "attnspec/base/errors.hpp"
#include "attnspec/io/report_writer.hpp"
#include "attnspec/report/check_records.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::code_of;

TEST_CASE("report round trip keeps shapes row-major and attributes typed", "[report]") {
    const std::string dir = test::temp_dir(), path = dir + "/r.h5";
    Eigen::MatrixXd X(2, 3);
    X << 1, 2, 3, 4, 5, 6;
    {
        ReportWriter w(path, Provenance{"attnspec test", 42, {{"cuda", "none"}}});
        H5Group g = w.root().group("data");
        g.write("X", X);
        g.attr("gamma", 0.95);
        g.attr("name", "héllo");  // UTF-8
        g.write("labels", std::vector<std::string>{"a", "bb"});
        w.commit();
    }
    H5Reader r(path);
    CHECK(r.attr_string("/", "schema_version") == kSchemaVersion);
    CHECK(r.attr_string("/", "seed") == "42");
    CHECK(r.shape("/data/X") == std::vector<hsize_t>{2, 3});
    CHECK(r.matrix("/data/X") == X);
    CHECK(r.attr_double("/data", "gamma") == 0.95);
    CHECK(r.attr_string("/data", "name") == "héllo");
    CHECK(r.strings("/data/labels") == std::vector<std::string>{"a", "bb"});
    CHECK(code_of([&] { r.matrix("/data/missing"); }) == ExitCode::DataError);
    CHECK(code_of([&] { r.matrix("/nogroup/X"); }) == ExitCode::DataError);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("an uncommitted report leaves the target untouched and no temp behind", "[report]") {
    const std::string dir = test::temp_dir(), path = dir + "/r.h5";
    { std::ofstream(path) << "previous"; }
    {
        ReportWriter w(path, Provenance{"t", 1, {}});
        w.root().group("g").attr("x", 1.0);
        // destroyed without commit (as on an exception mid-run)
    }
    std::ifstream f(path);
    std::string content;
    f >> content;
    CHECK(content == "previous");
    CHECK(std::system(("test $(ls -A " + dir + " | wc -l) -eq 1").c_str()) == 0);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("report errors carry the documented exit codes", "[report]") {
    const std::string dir = test::temp_dir();
    CHECK(code_of([&] { ReportWriter w(dir + "/no/such/dir/r.h5", Provenance{}); }) ==
          ExitCode::CantCreate);
    CHECK(code_of([&] { H5Reader r(dir + "/missing.h5"); }) == ExitCode::NoInput);
    { std::ofstream(dir + "/text.h5") << "not hdf5 at all"; }
    CHECK(code_of([&] { H5Reader r(dir + "/text.h5"); }) == ExitCode::DataError);
    // truncated HDF5: a valid file cut in half
    {
        ReportWriter w(dir + "/full.h5", Provenance{});
        w.root().write("X", Eigen::MatrixXd::Random(300, 300).eval());
        w.commit();
    }
    CHECK(std::system(("head -c 20000 " + dir + "/full.h5 > " + dir + "/cut.h5").c_str()) == 0);
    CHECK(code_of([&] {
              H5Reader r(dir + "/cut.h5");
              r.matrix("/X");
          }) == ExitCode::DataError);
    // NaN refused unless allowed
    {
        ReportWriter w(dir + "/nan.h5", Provenance{});
        Eigen::MatrixXd M = Eigen::MatrixXd::Ones(2, 2);
        M(1, 1) = std::nan("");
        w.root().write("M", M);
        w.commit();
    }
    H5Reader r(dir + "/nan.h5");
    CHECK(code_of([&] { r.matrix("/M"); }) == ExitCode::DataError);
    CHECK(std::isnan(r.matrix("/M", true)(1, 1)));
    if (::geteuid() != 0) {  // root ignores permissions
        ::mkdir((dir + "/ro").c_str(), 0555);
        CHECK(code_of([&] { ReportWriter w(dir + "/ro/r.h5", Provenance{}); }) ==
              ExitCode::CantCreate);
    }
    std::system(("chmod -R u+w " + dir + "; rm -rf " + dir).c_str());
}

namespace {
// A run of two instances of a made-up check: one holds, one is violated.
CheckRun two_instance_run() {
    CheckRun run;
    run.check = "demo";
    run.claim = "a <= b";
    run.seed = 7;
    run.headline = "bound";
    for (int i = 0; i < 2; ++i) {
        CheckResult r;
        r.check = "demo";
        r.claim = run.claim;
        r.regime = i == 0 ? "small" : "large";
        r.seed = 100 + i;
        const double a = i == 0 ? 1.0 : 3.0;
        r.comparisons.push_back(compare("bound", "a", a, Interval::point(a), Relation::le, "b", 2.0,
                                        Interval::point(2.0)));
        r.values.emplace_back("lambda", 10.0 + i);
        r.instance.emplace_back("W", Eigen::MatrixXd::Constant(2, 3, a));
        r.finalize();
        run.results.push_back(r);
    }
    run.summarize();
    return run;
}
}  // namespace

TEST_CASE("check records read back through io/check_records as written", "[report][records]") {
    const std::string dir = test::temp_dir(), path = dir + "/r.h5";
    const CheckRun run = two_instance_run();
    {
        ReportWriter w(path, Provenance{"attnspec test", 7, {}});
        write_check_runs(w.root(), {run});
        w.commit();
    }
    H5Reader r(path);
    const auto runs = read_check_runs(r);
    REQUIRE(runs.size() == 1);
    const CheckRunSummary& s = runs[0];
    CHECK(s.name == "demo");
    CHECK(s.claim == "a <= b");
    CHECK(s.verdict == "violated");
    CHECK(s.headline == "bound");
    CHECK(s.instances == 2);
    CHECK(s.counts[0] == 1);
    CHECK(s.counts[1] == 1);
    REQUIRE(s.regimes.size() == 2);
    CHECK(s.regimes[0].regime == "small");
    CHECK(s.regimes[1].counts[1] == 1);
    // the violated instance and the tightest one (the same here) are stored in full
    REQUIRE(s.records.size() == 1);
    const StoredRecord& rec = s.records[0];
    CHECK(rec.check == "demo");
    CHECK(rec.regime == "large");
    CHECK(rec.seed == "101");
    CHECK(rec.verdict == "violated");
    CHECK(rec.is_worst);
    REQUIRE(rec.comparisons.size() == 1);
    CHECK(rec.comparisons[0].lhs == 3.0);
    CHECK(rec.comparisons[0].rhs_name == "b");
    CHECK(read_check_record(r, rec.group).seed == "101");
    // replay lookup: the first violated record; its stored inputs come back
    const std::string g = find_replay_record(r, "demo");
    CHECK(g == rec.group);
    CHECK(stored_matrix(r, g, "W") == Eigen::MatrixXd::Constant(2, 3, 3.0));
    CHECK(stored_value(r, g, "lambda") == 11.0);
    CHECK(has_stored_matrix(r, g, "W"));
    CHECK_FALSE(has_stored_matrix(r, g, "C_Q"));
    CHECK(code_of([&] { stored_value(r, g, "missing"); }) == ExitCode::DataError);
    CHECK(code_of([&] { find_replay_record(r, "other"); }) == ExitCode::DataError);
    CHECK(code_of([&] { find_replay_record(r, "demo", "instance_99"); }) == ExitCode::DataError);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("counterexample files: violated instances only, replayable from their root",
          "[report][records]") {
    const std::string dir = test::temp_dir();
    const CheckRun run = two_instance_run();
    const auto files = write_counterexample_files(run, dir, Provenance{"t", 7, {}});
    CHECK(files.violated == 1);
    REQUIRE(files.names.size() == 1);
    CHECK(files.names[0] == "demo-instance_1.h5");  // the record's run index, as in the report
    H5Reader r(dir + "/" + files.names[0]);
    CHECK(r.attr_string("/", "seed") == "101");  // provenance carries the instance seed
    const std::string g = find_replay_record(r, "demo");
    CHECK(g == "/record");
    CHECK(stored_matrix(r, g, "W")(0, 0) == 3.0);
    CHECK(code_of([&] { find_replay_record(r, "thm3.5"); }) == ExitCode::DataError);
    const auto none = write_counterexample_files(run, dir, Provenance{}, 0);
    CHECK(none.names.empty());
    CHECK(none.violated == 1);  // counted even when the cap writes nothing
    std::system(("rm -rf " + dir).c_str());
}
