// attnspec cond: exit codes, JSON header, report contents read back, enclosures of a known matrix.
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "attnspec/io/report_writer.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::run_cli;

namespace {
// Input file with a diagonal matrix (exact singular values 4, 2, 0.5), a NaN matrix and a 3-D set.
std::string make_input(const std::string& dir) {
    const std::string path = dir + "/in.h5";
    Provenance p;
    p.command_line = "test";
    ReportWriter w(path, p);
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(4, 3);
    A(0, 0) = 2.0, A(1, 1) = -4.0, A(3, 2) = 0.5;
    w.root().write("A", A);
    Eigen::MatrixXd B = Eigen::MatrixXd::Ones(2, 2);
    B(0, 1) = std::nan("");
    w.root().write("B", B);
    w.commit();
    return path;
}
}  // namespace

TEST_CASE("cond: human, JSON and report for a known matrix", "[cli][spectral]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::string in = make_input(dir);
    auto r = run_cli("cond --input " + in + " --matrix /A --out " + dir + "/c.h5");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("kappa_strict = 8") != std::string::npos);
    r = run_cli("cond -i " + in + " -m A --json --convention nz --method gejsv --out " + dir +
                "/j.h5");
    REQUIRE(r.code == 0);
    CHECK(r.out.rfind("{\n  \"schema_version\"", 0) == 0);
    CHECK(r.out.find("\"command\": \"cond\"") != std::string::npos);
    const H5Reader rep(dir + "/c.h5");
    const auto sigma = rep.vector("/cond/sigma"), lo = rep.vector("/cond/sigma_lo"),
               hi = rep.vector("/cond/sigma_hi");
    REQUIRE(sigma.size() == 3);
    const double exact[3] = {4.0, 2.0, 0.5};
    for (int i = 0; i < 3; ++i) {
        CHECK(lo[i] <= exact[i]);
        CHECK(exact[i] <= hi[i]);
    }
    CHECK(rep.attr_double("/cond/kappa_strict", "enclosure_lo") <= 8.0);
    CHECK(rep.attr_double("/cond/kappa_strict", "enclosure_hi") >= 8.0);
    CHECK(rep.attr_string("/cond", "method") == "eigen-jacobi");
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("cond: clear errors and documented exit codes", "[cli][spectral]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::string in = make_input(dir);
    CHECK(run_cli("cond --input " + in + " --matrix /B --out " + dir + "/x.h5").code == 65);
    auto r = run_cli("cond --input " + in + " --matrix /missing --out " + dir + "/x.h5");
    CHECK(r.code == 65);
    CHECK(r.err.find("missing") != std::string::npos);
    CHECK(run_cli("cond --input " + dir + "/nofile.h5 --matrix /A").code == 66);
    CHECK(run_cli("cond --input " + in + " --matrix /A --method qr").code == 64);
    CHECK(run_cli("cond --input " + in + " --matrix /A --rtol 2").code == 64);
    CHECK(run_cli("cond --input " + in).code == 64);
    CHECK(run_cli("cond --input " + in + " --matrix /A --out /nonexistent/dir/x.h5").code == 73);
    r = run_cli("cond --help");
    CHECK(r.code == 0);
    CHECK(r.out.find("--method") != std::string::npos);
    CHECK(r.out.find("example") != std::string::npos);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("cond: --no-report writes nothing", "[cli][spectral]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::string in = make_input(dir);
    auto r = run_cli("cond --input " + in + " --matrix /A --no-report");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("kappa_strict = 8") != std::string::npos);
    CHECK(r.out.find("report: none") != std::string::npos);
    r = run_cli("cond --input " + in + " --matrix /A --no-report --json");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("\"report\": null") != std::string::npos);
    CHECK(run_cli("cond --input " + in + " --matrix /A --no-report --out " + dir + "/x.h5").code ==
          64);
    std::ifstream probe(dir + "/x.h5");
    CHECK_FALSE(probe.good());
    std::system(("rm -rf " + dir).c_str());
}
