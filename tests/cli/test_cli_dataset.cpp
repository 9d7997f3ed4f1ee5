// attnspec dataset list|show and --dataset in jacobian, cond, neumann, fidelity, on small model
// fixtures (tests/model_fixture.hpp) in a directory named by $ATTNSPEC_DATASETS: each command's
// result is compared with the same computation fed through --input, and bad selectors, unknown
// names, indices out of range and conflicting options exit with the documented codes.
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "attnspec/io/h5.hpp"
#include "model_fixture.hpp"
#include "test_support.hpp"

using attnspec::H5Group;
using attnspec::H5Id;
using attnspec::H5Reader;
using namespace attnspec::test;

namespace {

// The rest of the first line of `text` that contains `key`, from `key` on ("" when absent).
std::string line_from(const std::string& text, const std::string& key) {
    const auto at = text.find(key);
    if (at == std::string::npos) return "";
    return text.substr(at, text.find('\n', at) - at);
}

H5Group plain_file(const std::string& path) {
    return H5Group(
        H5Id(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose));
}

Eigen::VectorXd bias(int l, int h, int k, Eigen::Index d) {
    const std::vector<double> v = attnspec::test::fixture_bias(l, h, k, d);
    return Eigen::Map<const Eigen::VectorXd>(v.data(), d);
}

}  // namespace

TEST_CASE("dataset list and show print the catalogue", "[cli][dataset]") {
    const ScopedDatasetDir dd;
    dd.write("small");
    attnspec::test::ModelFixture bare;
    bare.inputs = false;
    dd.write("bare", bare);
    auto r = run_cli("dataset list");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(has(r.out, "datasets in " + dd.dir));
    CHECK(has(line_from(r.out, "small "), "model  2 x 3    6     4    2         float64"));
    CHECK(has(line_from(r.out, "bare "), " none "));
    r = run_cli("dataset show small");
    REQUIRE(r.code == 0);
    CHECK(has(r.out, "origin       written by the test"));
    CHECK(has(r.out, "regenerate   the test suite"));
    CHECK(has(r.out, "validation   none (synthetic)"));
    CHECK(has(r.out, "sentence 1  (3 tokens) sentence 1"));
    r = run_cli("dataset show small --json");
    REQUIRE(r.code == 0);
    CHECK(has(r.out, "\"n_tokens\": [\n        5,\n        3\n      ]"));
    CHECK(has(r.out, "\"licence\": \"CC0-1.0\""));
    r = run_cli("dataset show nope");
    CHECK(r.code == 66);
    CHECK(has(r.err, "unknown dataset 'nope'"));
    CHECK(has(r.err, "known: bare, small"));
    CHECK(run_cli("dataset show").code == 64);
    CHECK(run_cli("dataset frobnicate").code == 64);
    CHECK(run_cli("dataset --help").code == 0);
}

// A file whose name holds ':' cannot be selected (--dataset splits on ':'): the list says so
// and why, and an unknown-name error does not offer it (it was listed as usable, then refused).
TEST_CASE("dataset list: a name holding ':' is listed as not usable, with the reason",
          "[cli][dataset]") {
    const ScopedDatasetDir dd;
    dd.write("small");
    dd.write("v1:small");
    auto r = run_cli("dataset list");
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK(has(line_from(r.out, "v1:small "), "not usable: the name holds ':'"));
    CHECK(has(line_from(r.out, "v1:small "), "rename the file"));
    CHECK(has(line_from(r.out, "small "), "model  2 x 3"));
    r = run_cli("cond --dataset v1 --no-report");
    CHECK(r.code == 66);
    CHECK(has(r.err, "(known: small;"));
}

TEST_CASE("jacobian --dataset equals --input on the same head", "[cli][dataset]") {
    const ScopedDatasetDir dd;
    dd.write("m");
    const std::string in = dd.dir + "/head.in";  // not *.h5: not a dataset itself
    {
        H5Group root = plain_file(in);
        root.write("X", fixture_matrix(5, 6, fixture_seed(1, 0, 3)));  // layer 1, sentence 0
        root.write("W_Q", fixture_matrix(6, 4, fixture_seed(1, 2, 0)));
        root.write("W_K", fixture_matrix(6, 4, fixture_seed(1, 2, 1)));
        root.write("W_V", fixture_matrix(6, 4, fixture_seed(1, 2, 2)));
        root.write("b_Q", attnspec::test::fixture_bias(1, 2, 0, 4));
        root.write("b_K", attnspec::test::fixture_bias(1, 2, 1, 4));
        root.write("b_V", attnspec::test::fixture_bias(1, 2, 2, 4));
        root.attr("s", 0.3);
    }
    const auto a = run_cli("jacobian --dataset m:1:2 --out " + dd.dir + "/j.rep");
    INFO(a.err);
    REQUIRE(a.code == 0);
    const auto b = run_cli("jacobian --input " + in + " --no-report");
    REQUIRE(b.code == 0);
    CHECK(has(a.out, "H = 1, (N, D, d) = (5, 6, 4), s = 0.3"));
    // "||J||_F = x, max |entry| = y, <time> s": the numbers, not the time
    auto norms = [](const std::string& out) {
        const std::string line = line_from(out, "||J||_F");
        return line.substr(0, line.rfind(','));
    };
    REQUIRE_FALSE(norms(b.out).empty());
    CHECK(norms(a.out) == norms(b.out));
    const H5Reader rep(dd.dir + "/j.rep");
    CHECK(rep.attr_string("/", "dataset") == "m:1:2:0");  // sentence 0 by default
    CHECK(rep.strings("/dataset_heads") == std::vector<std::string>{"m:L1:H2:S0"});
    CHECK(rep.attr_string("/", "bias_form") == rep.attr_string("/jacobian", "bias_form"));
    // the biases are used: dropping them changes J
    const auto c = run_cli("jacobian --dataset m:1:2 --bias drop --no-report");
    REQUIRE(c.code == 0);
    CHECK(norms(c.out) != norms(a.out));
    // every sentence: one block per sentence, each head on its own X
    const auto all = run_cli("jacobian --dataset m:0:0:* --no-report");
    REQUIRE(all.code == 0);
    CHECK(has(all.out, "H = 2, (N, D, d) and s per head"));
    CHECK(has(all.out, "(m:L0:H0:S1; N, D, d = 3, 6, 4; s = 0.3)"));
}

TEST_CASE("cond --dataset: kappa of each selected head's weights", "[cli][dataset]") {
    const ScopedDatasetDir dd;
    attnspec::test::ModelFixture f;
    f.inputs = false;  // cond reads weights only
    const std::string path = dd.write("w", f);
    auto r = run_cli("cond --dataset w:0:1 --out " + dd.dir + "/c.rep");
    INFO(r.err);
    REQUIRE(r.code == 0);
    const std::string line = line_from(r.out, "w:L0:H1 ");
    CHECK(has(line, "W_Q  6 x 4"));
    CHECK(has(r.out, "w:L0:H1                  W_V"));
    const auto one =
        run_cli("cond --input " + path + " --matrix /layers/0/heads/1/W_K --no-report");
    REQUIRE(one.code == 0);
    const std::string kappa = line_from(one.out, "headline (strict): kappa = ").substr(27);
    CHECK(has(line_from(r.out, "w:L0:H1                  W_K"), "kappa " + kappa + " "));
    const H5Reader rep(dd.dir + "/c.rep");
    CHECK(rep.attr_string("/", "dataset") == "w:0:1");
    CHECK(rep.attr_string("/heads/0", "label") == "w:L0:H1");
    CHECK(rep.attr_string("/heads/0/W_V/cond", "dataset") == "/layers/0/heads/1/W_V");
    CHECK(rep.vector("/heads/0/W_Q/cond/sigma").size() == 4);
    // the old spelling of --matrix still works with --input, with a note
    r = run_cli("cond --input " + path + " --dataset /layers/0/heads/1/W_K --no-report");
    REQUIRE(r.code == 0);
    CHECK(has(r.err, "deprecated: write --matrix /layers/0/heads/1/W_K"));
    CHECK(line_from(r.out, "headline") == line_from(one.out, "headline"));
    CHECK(run_cli("cond --dataset w:0:0:0 --no-report").code == 64);  // no sentence part
    CHECK(run_cli("cond --dataset w:0 --matrix /X --no-report").code == 64);
}

TEST_CASE("neumann and fidelity --dataset use Q and K with biases", "[cli][dataset]") {
    const ScopedDatasetDir dd;
    dd.write("m");
    // layer 1, head 2, sentence 1 by hand: Q = X W_Q + 1 b_Q^T, K = X W_K + 1 b_K^T
    const Eigen::MatrixXd X = fixture_matrix(3, 6, fixture_seed(1, 0, 4));
    Eigen::MatrixXd Q = X * fixture_matrix(6, 4, fixture_seed(1, 2, 0));
    Eigen::MatrixXd K = X * fixture_matrix(6, 4, fixture_seed(1, 2, 1));
    Q.rowwise() += bias(1, 2, 0, 4).transpose();
    K.rowwise() += bias(1, 2, 1, 4).transpose();
    const std::string qk = dd.dir + "/qk.in";
    {
        H5Group root = plain_file(qk);
        root.write("Q", Q);
        root.write("K", K);
    }
    auto a = run_cli("neumann --dataset m:1:2:1 --out " + dd.dir + "/n.rep");
    INFO(a.err);
    REQUIRE(a.code == 0);
    const auto b = run_cli("neumann --input " + qk + " --no-report");
    REQUIRE(b.code == 0);
    const std::string norms = line_from(b.out, "||A||_F");
    REQUIRE_FALSE(norms.empty());
    CHECK(line_from(a.out, "||A||_F") == norms);
    CHECK(has(a.out, "; Q and K with biases (b_Q, b_K)"));
    const H5Reader rep(dd.dir + "/n.rep");
    CHECK(rep.attr_string("/", "bias_form") == "with biases (b_Q, b_K)");
    CHECK(rep.attr_string("/", "dataset") == "m:1:2:1");
    CHECK(rep.is_group("/heads/0/neumann"));
    a = run_cli("neumann --dataset m:0:0 --json --no-report");  // both sentences
    REQUIRE(a.code == 0);
    CHECK(has(a.out, "\"label\": \"m:L0:H0:S0\""));
    CHECK(has(a.out, "\"label\": \"m:L0:H0:S1\""));

    auto f = run_cli("fidelity --dataset m:1:2:1 --json --out " + dd.dir + "/f.rep");
    REQUIRE(f.code == 0);
    const auto g = run_cli("fidelity --input " + qk + " --json --no-report");
    REQUIRE(g.code == 0);
    CHECK(line_from(f.out, "\"records\"") == line_from(g.out, "\"records\""));
    CHECK(has(f.out, "\"dataset\": \"m:1:2:1\""));
    CHECK(H5Reader(dd.dir + "/f.rep").strings("/dataset_heads") ==
          std::vector<std::string>{"m:L1:H2:S1"});
}

TEST_CASE("dataset option: bad selectors, unknown names, ranges and conflicts", "[cli][dataset]") {
    const ScopedDatasetDir dd;
    dd.write("m");
    attnspec::test::ModelFixture f;
    f.inputs = false;
    dd.write("minilm-x", f);
    for (const char* cmd : {"jacobian", "cond", "neumann", "fidelity"}) {
        const std::string c = cmd;
        INFO(c);
        auto r = run_cli(c + " --dataset m:x --no-report");
        CHECK(r.code == 64);
        CHECK(has(r.err, "--dataset 'm:x': layer must be a non-negative integer or '*'"));
        r = run_cli(c + " --dataset nope --no-report");
        CHECK(r.code == 66);
        CHECK(has(r.err, "known: m, minilm-x"));
        r = run_cli(c + " --dataset m:2 --no-report");
        CHECK(r.code == 65);
        CHECK(has(r.err, "layer 2 out of range: m has 2 layers (0..1)"));
        if (c != "cond")  // there, --input F --dataset PATH is the old spelling of --matrix
            CHECK(run_cli(c + " --dataset m:0:0 --input " + dd.dir + "/m.h5 --no-report").code ==
                  64);
    }
    const auto old = run_cli("cond --dataset m:0:0 --input " + dd.dir + "/m.h5 --no-report");
    CHECK(old.code == 65);
    CHECK(has(old.err, "deprecated: write --matrix m:0:0"));
    for (const char* cmd : {"jacobian", "neumann", "fidelity"}) {
        const auto r = run_cli(std::string(cmd) + " --dataset minilm-x:0:0 --no-report");
        CHECK(r.code == 65);
        CHECK(has(r.err, "minilm-x: layer 0 has no inputs (weights only)"));
    }
    CHECK(run_cli("jacobian --dataset m:0:0 --random 4,3,2 --no-report").code == 64);
    CHECK(run_cli("jacobian --dataset m:0:0 --seed 3 --no-report").code == 64);
    CHECK(run_cli("neumann --dataset m:0:0 --tokens 16 --no-report").code == 64);
    CHECK(run_cli("fidelity --dataset m:0:0 --draws 2 --no-report").code == 64);
    const auto big = run_cli("neumann --dataset m --max-memory 1KiB --no-report");
    CHECK(big.code == 65);
    CHECK(has(big.err, "loading --dataset 'm'"));
}

// A dataset run writes /heads/<k>/neumann and /heads/<k>/<matrix>/cond instead of one /neumann or
// /cond group; report show|render read them (before: "a report of unknown kind", exit 65).
TEST_CASE("report show and render read cond and neumann reports of a dataset run",
          "[cli][dataset][report]") {
    const ScopedDatasetDir dd;
    dd.write("m");
    REQUIRE(run_cli("neumann --dataset m:1:*:1 --out " + dd.dir + "/n.h5").code == 0);
    REQUIRE(run_cli("cond --dataset m:0:1 --out " + dd.dir + "/c.h5").code == 0);
    const auto n = run_cli("report render " + dd.dir + "/n.h5 --no-figures");
    INFO(n.err);
    REQUIRE(n.code == 0);
    CHECK(has(n.out, "# attnspec neumann report"));
    CHECK(has(n.out, "Dataset run: neumann on 3 heads selected by `m:1:*:1`"));
    for (const char* h : {"## m:L1:H0:S1: Neumann kernel", "## m:L1:H1:S1: Neumann kernel",
                          "## m:L1:H2:S1: Neumann kernel"})
        CHECK(has(n.out, h));
    const auto c = run_cli("report show " + dd.dir + "/c.h5");
    INFO(c.err);
    REQUIRE(c.code == 0);
    CHECK(has(c.out, "Dataset run: cond on 3 matrices selected by `m:0:1`"));
    for (const char* m : {"m:L0:H1 W_Q: ", "m:L0:H1 W_K: ", "m:L0:H1 W_V: "}) CHECK(has(c.out, m));
    // The figures script draws one figure per group (needs matplotlib: skipped without it).
    if (std::system("/usr/bin/python3 -c 'import matplotlib' > /dev/null 2>&1") != 0) {
        WARN("matplotlib missing: the dataset figures are not checked");
        return;
    }
    const auto f = run_cli("report render " + dd.dir + "/n.h5 --out " + dd.dir + "/page");
    INFO(f.err);
    REQUIRE(f.code == 0);
    const std::string text = slurp(dd.dir + "/page/figures/figures.tsv");
    for (const char* id : {"neumann-truncation-0\tneumann", "neumann-truncation-2\tneumann"})
        CHECK(has(text, id));
}
