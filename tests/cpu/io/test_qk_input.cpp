// io/qk_input: the one Q/K(/V, A_hat, gamma) input loader of `neumann` and `fidelity`: a written
// file read back (values, head split, dtype, gamma), and malformed files refused with DataError
// naming the file and dataset (NoInput for a missing file).
#include <hdf5.h>

#include <string>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/io/qk_input.hpp"
#include "attnspec/io/report_writer.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::error_of;

namespace {

struct Datasets {
    const Eigen::MatrixXd* Q = nullptr;
    const Eigen::MatrixXd* K = nullptr;
    const Eigen::MatrixXd* V = nullptr;
    const Eigen::MatrixXd* A_hat = nullptr;
    bool gamma = false;
};

std::string write_file(const std::string& path, const Datasets& d) {
    ReportWriter w(path, Provenance{"test", 1, {}});
    if (d.Q) w.root().write("Q", *d.Q);
    if (d.K) w.root().write("K", *d.K);
    if (d.V) w.root().write("V", *d.V);
    if (d.A_hat) w.root().write("A_hat", *d.A_hat);
    if (d.gamma) w.root().attr("gamma", 0.75);
    w.commit();
    return path;
}

// A float32 dataset (what PyTorch exports): read as double, dtype reported as stored.
void write_f32(H5Group& g, const char* name, const Eigen::MatrixXd& M) {
    const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> f = M.cast<float>();
    const hsize_t dims[2] = {hsize_t(M.rows()), hsize_t(M.cols())};
    const hid_t sp = H5Screate_simple(2, dims, nullptr);
    const hid_t d =
        H5Dcreate2(g.id(), name, H5T_IEEE_F32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(d >= 0);
    REQUIRE(H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, f.data()) >= 0);
    H5Dclose(d);
    H5Sclose(sp);
}

}  // namespace

TEST_CASE("qk_input: a written file reads back, split into heads", "[io][infsa]") {
    const std::string dir = attnspec::test::temp_dir();
    Rng rng(11);
    const Eigen::MatrixXd Q = rng.gaussian(7, 6), K = rng.gaussian(7, 6), V = rng.gaussian(7, 4);
    const std::string path = write_file(dir + "/qk.h5", {&Q, &K, &V, nullptr, true});

    QKInputOptions opt;
    opt.heads = 2;
    opt.read_v = true;
    const QKInput in = load_qk_input(path, opt);
    CHECK(in.path == path);
    CHECK(in.N == 7);
    CHECK(in.d_h == 3);
    CHECK(in.dtype == "float64");
    REQUIRE(in.Qs.size() == 2);
    REQUIRE(in.Ks.size() == 2);
    REQUIRE(in.Vs.size() == 2);
    CHECK(in.names == std::vector<std::string>{"head 0", "head 1"});
    for (int h = 0; h < 2; ++h) {  // stored as read: exact
        CHECK(in.Qs[h] == Q.middleCols(3 * h, 3));
        CHECK(in.Ks[h] == K.middleCols(3 * h, 3));
        CHECK(in.Vs[h] == V.middleCols(2 * h, 2));
    }
    REQUIRE(in.gamma.has_value());
    CHECK(*in.gamma == 0.75);
    CHECK_FALSE(in.has_affinity());

    QKInputOptions plain;  // one head, no V, gamma not wanted
    plain.read_gamma = false;
    const QKInput one = load_qk_input(path, plain);
    REQUIRE(one.Qs.size() == 1);
    CHECK(one.Qs[0] == Q);
    CHECK(one.Vs.empty());
    CHECK_FALSE(one.gamma.has_value());
}

TEST_CASE("qk_input: float32 Q, K are read as double and reported as float32", "[io][infsa]") {
    const std::string dir = attnspec::test::temp_dir();
    const Eigen::MatrixXd Q = Rng(13).gaussian(4, 3), K = Rng(14).gaussian(4, 3);
    const std::string path = dir + "/f32.h5";
    {
        ReportWriter w(path, Provenance{"test", 1, {}});
        write_f32(w.root(), "Q", Q);
        write_f32(w.root(), "K", K);
        w.commit();
    }
    const QKInput in = load_qk_input(path);
    CHECK(in.dtype == "float32");
    REQUIRE(in.Qs.size() == 1);
    CHECK(in.Qs[0] == Eigen::MatrixXd(Q.cast<float>().cast<double>()));  // float -> double is exact
}

TEST_CASE("qk_input: A_hat is used as given when accepted, ignored otherwise", "[io][infsa]") {
    const std::string dir = attnspec::test::temp_dir();
    const Eigen::MatrixXd A = Eigen::MatrixXd::Constant(5, 5, 0.1), V = Eigen::MatrixXd::Ones(5, 2);
    const std::string path = write_file(dir + "/a.h5", {nullptr, nullptr, &V, &A, false});
    QKInputOptions opt;
    opt.accept_affinity = opt.read_v = true;
    const QKInput in = load_qk_input(path, opt);
    CHECK(in.has_affinity());
    CHECK(in.A_hat == A);
    CHECK(in.N == 5);
    CHECK(in.Qs.empty());
    REQUIRE(in.Vs.size() == 1);
    CHECK(in.Vs[0] == V);
    // Without accept_affinity the file must hold Q and K.
    const Error e = error_of([&] { load_qk_input(path); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(std::string(e.what()).find("'Q'") != std::string::npos);
}

TEST_CASE("qk_input: malformed files are refused naming the file and dataset", "[io][infsa]") {
    const std::string dir = attnspec::test::temp_dir();
    Rng rng(12);
    const Eigen::MatrixXd Q = rng.gaussian(6, 4), K = rng.gaussian(6, 4), K5 = rng.gaussian(5, 4);
    const Eigen::MatrixXd V5 = rng.gaussian(5, 2), A_rect = Eigen::MatrixXd::Ones(6, 5);

    const std::string shapes = write_file(dir + "/shapes.h5", {&Q, &K5});
    Error e = error_of([&] { load_qk_input(shapes); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(std::string(e.what()).find(shapes) != std::string::npos);
    CHECK(std::string(e.what()).find("'K'") != std::string::npos);

    const std::string good = write_file(dir + "/good.h5", {&Q, &K, &V5});
    QKInputOptions heads;
    heads.heads = 3;  // 4 columns do not split into 3 heads
    e = error_of([&] { load_qk_input(good, heads); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(e.parameter() == "heads");
    QKInputOptions with_v;
    with_v.read_v = true;  // V has 5 rows, Q has 6
    e = error_of([&] { load_qk_input(good, with_v); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(std::string(e.what()).find("'V'") != std::string::npos);

    const std::string rect = write_file(dir + "/rect.h5", {&Q, &K, nullptr, &A_rect});
    QKInputOptions aff;
    aff.accept_affinity = true;
    e = error_of([&] { load_qk_input(rect, aff); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(std::string(e.what()).find("'A_hat'") != std::string::npos);

    const std::string only_q = write_file(dir + "/only_q.h5", {&Q});
    CHECK(error_of([&] { load_qk_input(only_q); }).code() == ExitCode::DataError);
    CHECK(error_of([&] { load_qk_input(dir + "/missing.h5"); }).code() == ExitCode::NoInput);
}
