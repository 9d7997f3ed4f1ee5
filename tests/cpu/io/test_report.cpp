// HDF5 report writer/reader: row-major layout, attributes, atomic commit, errors.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "attnspec/base/errors.hpp"
#include "attnspec/io/report_writer.hpp"
#include "test_support.hpp"

using namespace attnspec;

namespace {
ExitCode code_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.code();
    }
    return ExitCode::Ok;
}
}  // namespace

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
    CHECK(code_of([&] { ReportWriter w(dir + "/no/such/dir/r.h5", Provenance{}); }) == ExitCode::CantCreate);
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
        CHECK(code_of([&] { ReportWriter w(dir + "/ro/r.h5", Provenance{}); }) == ExitCode::CantCreate);
    }
    std::system(("chmod -R u+w " + dir + "; rm -rf " + dir).c_str());
}
