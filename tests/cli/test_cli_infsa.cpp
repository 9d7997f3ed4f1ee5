// attnspec neumann / fidelity: JSON, reports, HDF5 inputs and the documented error exit codes.
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "attnspec/base/random.hpp"
#include "attnspec/infsa/fidelity.hpp"
#include "attnspec/io/report_writer.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::run_cli;

namespace {

std::string write_input(const std::string& dir, const std::string& name, const Eigen::MatrixXd& Q,
                        const Eigen::MatrixXd& K, const Eigen::MatrixXd* A = nullptr,
                        double gamma = 0.9) {
    const std::string path = dir + "/" + name;
    ReportWriter w(path, Provenance{"test", 1, {}});
    w.root().write("Q", Q);
    w.root().write("K", K);
    if (A) w.root().write("A_hat", *A);
    w.root().write("V", Rng(5).gaussian(Q.rows(), 3));
    w.root().attr("gamma", gamma);
    w.commit();
    return path;
}

}  // namespace

TEST_CASE("neumann: generated instance, JSON document and report", "[cli][infsa]") {
    const std::string dir = attnspec::test::temp_dir();
    auto r =
        run_cli("neumann --tokens 48 --dh 16 --family shared-mean --json --out " + dir + "/n.h5");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("{\n  \"schema_version\"") == 0);
    CHECK(r.out.find("\"residual_ok\": true") != std::string::npos);
    CHECK(r.out.find("\"holds\": false") == std::string::npos);
    H5Reader rd(dir + "/n.h5");
    CHECK(rd.shape("neumann/centralities/katz_in")[0] == 48);
    CHECK(rd.attr_double("neumann/invariants", "residual") <=
          rd.attr_double("neumann/invariants", "residual_bound"));
    const auto err = rd.vector("neumann/truncation/error"),
               bound = rd.vector("neumann/truncation/bound");
    for (size_t i = 0; i < err.size(); ++i) CHECK(err[i] <= bound[i]);
}

TEST_CASE("neumann: HDF5 input with gamma attribute and V, human output", "[cli][infsa]") {
    const std::string dir = attnspec::test::temp_dir();
    Eigen::MatrixXd Q, K;
    draw_family("gaussian", 20, 8, 0, 3, Q, K);
    const std::string in = write_input(dir, "in.h5", Q, K);
    auto r = run_cli("neumann --input " + in + " --no-report");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("gamma = 0.9") != std::string::npos);
    CHECK(r.out.find("||C V||_F") != std::string::npos);
    CHECK(r.out.find("VIOLATED") == std::string::npos);
}

TEST_CASE("neumann / fidelity: bad inputs exit with the documented codes", "[cli][infsa]") {
    const std::string dir = attnspec::test::temp_dir();
    Eigen::MatrixXd Q, K;
    draw_family("gaussian", 20, 8, 0, 3, Q, K);
    const Eigen::MatrixXd K2 = K.topRows(19);
    CHECK(run_cli("neumann --input " + write_input(dir, "bad.h5", Q, K2) + " --no-report").code ==
          65);
    const Eigen::MatrixXd big = Eigen::MatrixXd::Constant(20, 20, 1.0);  // rho = 20
    auto r = run_cli("neumann --input " + write_input(dir, "rho.h5", Q, K, &big) + " --no-report");
    CHECK(r.code == 65);
    CHECK(r.err.find("gamma * rho(A_hat) >= 1") != std::string::npos);
    CHECK(run_cli("neumann --gamma 1 --no-report").code == 65);
    CHECK(run_cli("neumann --gamma 0 --no-report").code == 65);
    CHECK(run_cli("neumann --input " + dir + "/missing.h5").code == 66);
    CHECK(run_cli("neumann --orders 1,x").code == 64);
    CHECK(run_cli("fidelity --gamma 1.5").code == 64);
    CHECK(run_cli("fidelity --family bogus").code == 64);
    CHECK(run_cli("fidelity --tokens 0").code == 64);
    CHECK(run_cli("fidelity --tokens 100000 --no-report").code == 65);  // dense N^2 refused
    CHECK(run_cli("neumann --help").code == 0);
    CHECK(run_cli("fidelity --help").out.find("example") != std::string::npos);
}

TEST_CASE("fidelity: dense and matrix-free agree, JSON summary", "[cli][infsa]") {
    const std::string dir = attnspec::test::temp_dir();
    auto d = run_cli("fidelity --tokens 40 --dh 8 --draws 2 --family gaussian --json --out " + dir +
                     "/f.h5");
    auto m = run_cli(
        "fidelity --tokens 40 --dh 8 --draws 2 --family gaussian --json --matrix-free --no-report");
    REQUIRE(d.code == 0);
    REQUIRE(m.code == 0);
    CHECK(d.out.find("{\n  \"schema_version\"") == 0);
    H5Reader rd(dir + "/f.h5");
    const auto c = rd.vector("fidelity/cos_left");
    REQUIRE(c.size() == 2);
    auto pick = [](const std::string& s, const std::string& key) {  // first record's value
        const auto p = s.find("\"" + key + "\": ", s.find("\"records\""));
        return std::stod(s.substr(p + key.size() + 4));
    };
    // |cos(a, v1) - cos(a, v2)| <= ||v1 - v2|| <= the two Perron vector-error estimates
    const double tol = pick(d.out, "perron_vec_error") + pick(m.out, "perron_vec_error");
    CHECK(std::abs(pick(d.out, "cos_left") - pick(m.out, "cos_left")) <= tol);
    CHECK(pick(d.out, "cos_left") == c[0]);  // JSON writes 17 significant digits
}

TEST_CASE("fidelity: HDF5 input split into heads", "[cli][infsa]") {
    const std::string dir = attnspec::test::temp_dir();
    Eigen::MatrixXd Q, K;
    draw_family("shared-mean", 30, 12, 1.0, 8, Q, K);  // 2 heads of d_h = 6
    const std::string in = write_input(dir, "qk.h5", Q, K);
    auto r = run_cli("fidelity --input " + in + " --heads 2 --json --no-report");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("\"head\": 1") != std::string::npos);
    CHECK(r.out.find("\"family\": \"input\"") != std::string::npos);
    CHECK(run_cli("fidelity --input " + in + " --heads 5 --no-report").code == 65);  // 12 % 5 != 0
}

TEST_CASE("neumann / fidelity: --no-report writes no file and refuses --out with it",
          "[cli][infsa]") {
    // The default report lands in reports/out/ under the working directory.
    for (const std::string cmd : {"neumann", "fidelity"}) {
        const std::string def = "reports/out/" + cmd + ".h5";
        std::remove(def.c_str());
        const std::string args = cmd == "neumann" ? "neumann --tokens 16 --dh 4"
                                                  : "fidelity --tokens 16 --dh 4 --draws 1";
        auto r = run_cli(args + " --no-report");
        REQUIRE(r.code == 0);
        CHECK(r.err.find("report written") == std::string::npos);
        std::FILE* f = std::fopen(def.c_str(), "rb");
        CHECK(f == nullptr);
        if (f) std::fclose(f);
        const std::string dir = attnspec::test::temp_dir();
        auto both = run_cli(args + " --no-report --out " + dir + "/x.h5");
        CHECK(both.code == 64);
        CHECK(std::system(("test ! -e " + dir + "/x.h5").c_str()) == 0);
    }
}

TEST_CASE("neumann: A_hat input is used as given and gamma overridden", "[cli][infsa]") {
    const std::string dir = attnspec::test::temp_dir();
    Eigen::MatrixXd Q, K;
    draw_family("gaussian", 12, 4, 0, 9, Q, K);
    const Eigen::MatrixXd A = Eigen::MatrixXd::Constant(12, 12, 0.05);  // rho = 0.6
    const std::string in = write_input(dir, "given.h5", Q, K, &A, 0.5);
    auto r = run_cli("neumann --input " + in + " --json --out " + dir + "/g.h5");
    REQUIRE(r.code == 0);
    CHECK(r.out.find("\"gamma\": 0.5") != std::string::npos);
    CHECK(r.out.find("\"closure_times_V_norm\"") != std::string::npos);
    H5Reader rd(dir + "/g.h5");
    CHECK(rd.attr_string("neumann", "affinity") == "given");
    CHECK(std::isnan(rd.attr_double("neumann", "frob_plus")));
    CHECK(rd.shape("neumann/closure_times_V")[1] == 3);
    auto t = run_cli("neumann --input " + in + " --gamma 0.25 --no-report");
    REQUIRE(t.code == 0);
    CHECK(t.out.find("gamma = 0.25") != std::string::npos);  // --gamma overrides the attribute
}
