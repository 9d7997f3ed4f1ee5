// The attention input schema (io/attention_input.hpp): both layouts (shared X, X per head), the
// root form, file order, s at the root or per head, corrections, and malformed files refused with
// DataError / NoInput and messages naming the file and the dataset.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "attnspec/base/errors.hpp"
#include "attnspec/io/attention_input.hpp"
#include "attnspec/io/report_writer.hpp"
#include "test_support.hpp"

using namespace attnspec;

namespace {

struct Outcome {
    ExitCode code = ExitCode::Ok;
    std::string message;
};
Outcome outcome(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return {e.code(), e.what()};
    }
    return {};
}

Eigen::MatrixXd filled(Eigen::Index r, Eigen::Index c, double v) {
    Eigen::MatrixXd M(r, c);
    for (Eigen::Index i = 0; i < M.size(); ++i) M(i) = v + 0.01 * static_cast<double>(i);
    return M;
}

// A file written with the report writer (groups keep creation order); `fill` adds the content.
std::string write_file(const std::string& dir, const std::string& name,
                       const std::function<void(H5Group&)>& fill) {
    const std::string path = dir + "/" + name;
    Provenance p;
    p.command_line = "test";
    ReportWriter w(path, p);
    fill(w.root());
    w.commit();
    return path;
}

void weights(H5Group& g, Eigen::Index D, Eigen::Index d, double v) {
    g.write("W_Q", filled(D, d, v)), g.write("W_K", filled(D, d, v + 1));
    g.write("W_V", filled(D, d, v + 2));
}
void weights(H5Group&& g, Eigen::Index D, Eigen::Index d, double v) { weights(g, D, d, v); }

}  // namespace

TEST_CASE("attention input: named heads sharing X at the root, s per head wins", "[io][input]") {
    const std::string dir = test::temp_dir();
    const std::string path = write_file(dir, "shared.h5", [](H5Group& root) {
        root.write("X", filled(4, 5, 1.0));
        root.attr("s", 0.5);
        H5Group heads = root.group("heads");
        H5Group b = heads.group("beta");  // written first: file order, not name order
        weights(b, 5, 3, 2.0);
        b.attr("s", 2.0);
        H5Group a = heads.group("alpha");
        weights(a, 5, 3, 3.0);
        a.write("C_V", filled(5, 3, 0.5));
    });
    const AttentionHeads in = load_attention_heads(path);
    REQUIRE(in.size() == 2);
    CHECK(in.names == std::vector<std::string>{"beta", "alpha"});
    CHECK(in.shared_X);
    CHECK(in.corrections);
    CHECK(in.heads[0].X == filled(4, 5, 1.0));
    CHECK(in.heads[1].X == in.heads[0].X);
    CHECK(in.heads[0].s == 2.0);  // per head
    CHECK(in.heads[1].s == 0.5);  // root
    CHECK(in.heads[0].W_K == filled(5, 3, 3.0));
    CHECK(in.heads[1].C_V == filled(5, 3, 0.5));
    CHECK(in.heads[1].C_Q.size() == 0);
    CHECK_FALSE(in.uniform());  // s differs
    CHECK(outcome([&] { in.multihead(); }).code == ExitCode::DataError);
}

TEST_CASE("attention input: X per head (the embedded layout) and the root form", "[io][input]") {
    const std::string dir = test::temp_dir();
    const std::string own = write_file(dir, "own.h5", [](H5Group& root) {
        H5Group heads = root.group("heads");
        H5Group a = heads.group("small");
        a.write("X", filled(3, 2, 1.0));
        weights(a, 2, 1, 0.0);
        H5Group b = heads.group("large");
        b.write("X", filled(6, 4, 2.0));
        weights(b, 4, 2, 1.0);
    });
    const AttentionHeads in = load_attention_heads(own);
    REQUIRE(in.size() == 2);
    CHECK_FALSE(in.shared_X);
    CHECK_FALSE(in.corrections);
    CHECK(in.heads[0].N() == 3);
    CHECK(in.heads[1].D() == 4);
    CHECK(in.heads[1].d() == 2);
    CHECK(in.heads[1].s == 1.0);  // default
    CHECK(outcome([&] { in.multihead(); }).code == ExitCode::DataError);

    const std::string root = write_file(dir, "root.h5", [](H5Group& r) {
        r.write("X", filled(4, 3, 1.0));
        weights(r, 3, 2, 0.0);
        r.attr("s", 0.25);
    });
    const AttentionHeads one = load_attention_heads(root);
    REQUIRE(one.size() == 1);
    CHECK(one.names[0] == "0");
    CHECK(one.shared_X);
    CHECK(one.heads[0].s == 0.25);
    const MultiHead m = one.multihead();
    CHECK(m.H() == 1);
    CHECK(m.s == 0.25);
    CHECK(m.X == one.heads[0].X);
}

TEST_CASE("attention input: numbered heads are ordered numerically", "[io][input]") {
    const std::string dir = test::temp_dir();
    const std::string path = write_file(dir, "numbered.h5", [](H5Group& root) {
        root.write("X", filled(3, 2, 1.0));
        H5Group heads = root.group("heads");
        for (const char* h : {"10", "2", "0", "1"}) {
            H5Group g = heads.group(h);
            weights(g, 2, 2, std::stod(h));
        }
    });
    const AttentionHeads in = load_attention_heads(path);
    CHECK(in.names == std::vector<std::string>{"0", "1", "2", "10"});
    CHECK(in.heads[3].W_Q == filled(2, 2, 10.0));
    CHECK(in.uniform());
    CHECK(in.multihead().H() == 4);
}

TEST_CASE("attention input: the embedded dataset follows the schema", "[io][input]") {
    const AttentionHeads in = load_attention_heads(std::string(ATTNSPEC_SOURCE_DIR) +
                                                   "/datasets/embedded/attention_heads.h5");
    REQUIRE(in.size() == 4);
    CHECK_FALSE(in.shared_X);
    CHECK_FALSE(in.corrections);
    for (const auto& n : {"iid-gauss-16x32x8", "layernorm-24x16x4", "shared-mean-12x12x4",
                          "ill-conditioned-w-10x6x3"})
        CHECK(std::find(in.names.begin(), in.names.end(), n) != in.names.end());
    for (const Head& h : in.heads) CHECK(h.s == 1.0);
}

TEST_CASE("attention input: malformed files are refused naming file and dataset", "[io][input]") {
    const std::string dir = test::temp_dir();
    auto refused = [&](const std::string& name, const std::function<void(H5Group&)>& fill) {
        const std::string path = write_file(dir, name, fill);
        return outcome([&] { load_attention_heads(path); });
    };
    Outcome o = refused("shape.h5", [](H5Group& r) {
        r.write("X", filled(4, 48, 1.0));
        r.write("W_Q", filled(12, 48, 1.0)), r.write("W_K", filled(48, 48, 1.0));
        r.write("W_V", filled(48, 48, 1.0));
    });
    CHECK(o.code == ExitCode::DataError);
    CHECK(o.message.find("shape.h5: /W_Q is 12x48, expected 48xd (D = 48 from /X)") !=
          std::string::npos);
    o = refused("wk.h5", [](H5Group& r) {
        r.write("X", filled(4, 5, 1.0));
        H5Group h = r.group("heads").group("a");
        h.write("W_Q", filled(5, 3, 1.0)), h.write("W_K", filled(4, 3, 1.0));
        h.write("W_V", filled(5, 3, 1.0));
    });
    CHECK(o.code == ExitCode::DataError);
    CHECK(o.message.find("/heads/a/W_K is 4x3, expected 5x3") != std::string::npos);
    o = refused("both_x.h5", [](H5Group& r) {
        r.write("X", filled(4, 5, 1.0));
        H5Group h = r.group("heads").group("a");
        h.write("X", filled(4, 5, 1.0));
        weights(h, 5, 3, 0.0);
    });
    CHECK(o.code == ExitCode::DataError);
    CHECK(o.message.find("/heads/a/X") != std::string::npos);
    o = refused("no_x.h5", [](H5Group& r) { weights(r.group("heads").group("a"), 5, 3, 0.0); });
    CHECK(o.code == ExitCode::DataError);
    CHECK(o.message.find("no X for head 'a'") != std::string::npos);
    o = refused("no_wv.h5", [](H5Group& r) {
        r.write("X", filled(4, 5, 1.0));
        r.write("W_Q", filled(5, 3, 1.0)), r.write("W_K", filled(5, 3, 1.0));
    });
    CHECK(o.code == ExitCode::DataError);
    CHECK(o.message.find("/W_V") != std::string::npos);
    o = refused("both_forms.h5", [](H5Group& r) {
        r.write("X", filled(4, 5, 1.0));
        weights(r, 5, 3, 0.0);
        weights(r.group("heads").group("a"), 5, 3, 0.0);
    });
    CHECK(o.code == ExitCode::DataError);
    o = refused("empty.h5", [](H5Group& r) {
        r.write("X", filled(4, 5, 1.0));
        r.group("heads");
    });
    CHECK(o.code == ExitCode::DataError);
    o = refused("nothing.h5", [](H5Group& r) { r.write("X", filled(4, 5, 1.0)); });
    CHECK(o.code == ExitCode::DataError);
    o = refused("nan.h5", [](H5Group& r) {
        Eigen::MatrixXd X = filled(4, 5, 1.0);
        X(1, 1) = std::nan("");
        r.write("X", X);
        weights(r, 5, 3, 0.0);
    });
    CHECK(o.code == ExitCode::DataError);
    CHECK(o.message.find("NaN") != std::string::npos);
    o = refused("s.h5", [](H5Group& r) {
        r.write("X", filled(4, 5, 1.0));
        weights(r, 5, 3, 0.0);
        r.attr("s", -1.0);
    });
    CHECK(o.code == ExitCode::DataError);
    CHECK(outcome([&] { load_attention_heads(dir + "/missing.h5"); }).code == ExitCode::NoInput);
}

TEST_CASE("attention input: a multi-head layer converts with shared X", "[io][input]") {
    RandomSpec rs;
    rs.N = 5, rs.D = 4, rs.d = 2, rs.H = 3, rs.seed = 7;
    const MultiHead m = random_multihead(rs);
    const AttentionHeads in = attention_heads(m, "random input");
    REQUIRE(in.size() == 3);
    CHECK(in.shared_X);
    CHECK(in.names == std::vector<std::string>{"0", "1", "2"});
    for (Eigen::Index h = 0; h < 3; ++h) CHECK(in.heads[h].W_V == m.heads[h].W_V);
    const MultiHead back = in.multihead();
    CHECK(back.X == m.X);
    CHECK(back.heads[2].W_Q == m.heads[2].W_Q);
}

TEST_CASE("attention input: biases b_Q, b_K, b_V of shape (d,), checked", "[io][input][bias]") {
    const std::string dir = test::temp_dir();
    const std::vector<double> bq = {0.5, -1.0, 2.0}, bv = {3.0, 0.0, -0.25};
    const std::string path = write_file(dir, "bias.h5", [&](H5Group& r) {
        r.write("X", filled(4, 5, 1.0));
        H5Group heads = r.group("heads");
        weights(heads.group("a"), 5, 3, 0.0);
        H5Group b = heads.group("b");
        weights(b, 5, 3, 1.0);
        b.write("b_Q", bq), b.write("b_V", bv);
    });
    AttentionHeads in = load_attention_heads(path);
    REQUIRE(in.size() == 2);
    CHECK_FALSE(in.heads[0].biased());
    CHECK(in.heads[1].b_Q == Eigen::Map<const Eigen::VectorXd>(bq.data(), 3));
    CHECK(in.heads[1].b_K.size() == 0);
    CHECK(in.heads[1].b_V == Eigen::Map<const Eigen::VectorXd>(bv.data(), 3));
    CHECK(in.multihead().head(1).b_V == in.heads[1].b_V);  // the layer keeps them

    auto refused = [&](const std::string& name, const std::function<void(H5Group&)>& bias) {
        const std::string p = write_file(dir, name, [&](H5Group& r) {
            r.write("X", filled(4, 5, 1.0));
            weights(r, 5, 3, 0.0);
            bias(r);
        });
        return outcome([&] { load_attention_heads(p); });
    };
    // A column (3, 1) is not a bias of shape (3,): refused naming the dataset and both shapes.
    Outcome o = refused("col.h5", [](H5Group& r) { r.write("b_K", filled(3, 1, 0.0)); });
    CHECK(o.code == ExitCode::DataError);
    CHECK(o.message.find(dir + "/col.h5: /b_K has shape (3, 1), expected (3,)") == 0);
    o = refused("long.h5", [](H5Group& r) { r.write("b_Q", std::vector<double>(4, 1.0)); });
    CHECK(o.code == ExitCode::DataError);
    CHECK(o.message.find("/b_Q has shape (4,), expected (3,) (a bias of length d = 3 from /W_Q)") !=
          std::string::npos);
    o = refused("nan.h5", [](H5Group& r) {
        r.write("b_V", std::vector<double>{1.0, std::nan(""), 0.0});
    });
    CHECK(o.code == ExitCode::DataError);
    CHECK(o.message.find("b_V") != std::string::npos);
    CHECK(o.message.find("NaN") != std::string::npos);
    o = refused("int.h5", [](H5Group& r) { r.write("b_Q", std::vector<std::int64_t>{1, 2, 3}); });
    CHECK(o.code == ExitCode::DataError);
    CHECK(o.message.find("b_Q") != std::string::npos);
    o = refused("group.h5", [](H5Group& r) { r.group("b_K"); });
    CHECK(o.code == ExitCode::DataError);
    CHECK(o.message.find("b_K") != std::string::npos);
}
