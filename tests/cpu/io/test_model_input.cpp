// Named datasets (io/model_input.hpp): the selector, the catalogue, the model loader with biases,
// weight-only files, heads-layout files, and malformed files or selections refused with the
// documented codes and messages that name the problem.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/memory.hpp"
#include "attnspec/io/model_input.hpp"
#include "model_fixture.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::test;

namespace {

// Replaces the dataset at `path` with `v` (plants a fault after the fixture was written).
void replace(H5Group& root, const std::string& path, const Eigen::MatrixXd& v) {
    REQUIRE(H5Ldelete(root.id(), path.c_str(), H5P_DEFAULT) >= 0);
    const auto slash = path.rfind('/');
    H5Group parent(H5Id(H5Gopen2(root.id(), path.substr(0, slash).c_str(), H5P_DEFAULT), H5Gclose));
    parent.write(path.substr(slash + 1), v);
}

}  // namespace

TEST_CASE("dataset selector: parse and describe are inverse", "[model_input]") {
    const DatasetSelector a = DatasetSelector::parse("minilm-l6:2:*:0");
    CHECK(a.name == "minilm-l6");
    CHECK(a.layer == 2);
    CHECK_FALSE(a.head.has_value());
    CHECK(a.sentence == 0);
    CHECK(a.describe() == "minilm-l6:2:*:0");
    CHECK(DatasetSelector::parse("m").describe() == "m");
    CHECK(DatasetSelector::parse("m:*:3").describe() == "m:*:3");
    CHECK(DatasetSelector::parse("m:*:*:*").describe() == "m");
    for (const char* bad : {"", ":1", "m:x", "m:-1", "m:1:2:3:4", "m::1", "m:1.5", "m:9999999"}) {
        const Error e = error_of([&] { DatasetSelector::parse(bad); });
        INFO(bad << " -> " << e.what());
        CHECK(e.code() == ExitCode::Usage);
        CHECK(has(e.what(), "--dataset '" + std::string(bad) + "'"));
    }
    CHECK(has(error_of([] { DatasetSelector::parse("m:x"); }).what(),
              "layer must be a non-negative integer or '*'"));
}

TEST_CASE("dataset catalogue: directory, list, find, unknown names", "[model_input]") {
    const ScopedDatasetDir dd;
    CHECK(dataset_directory() == dd.dir);
    dd.write("small");
    test::ModelFixture bare;
    bare.inputs = false;
    dd.write("bare", bare);
    {  // a file that is not a dataset is listed with its problem, not fatal
        test::ModelFixture odd;
        odd.layout = "cube";
        dd.write("odd", odd);
    }
    const std::vector<DatasetInfo> all = list_datasets();
    REQUIRE(all.size() == 3);
    CHECK(all[0].name == "bare");
    CHECK(all[1].name == "odd");
    CHECK(has(all[1].problem, "layout is 'cube', expected 'model' or 'heads'"));
    const DatasetInfo& s = all[2];
    CHECK(s.problem.empty());
    CHECK(s.layout == "model");
    CHECK(s.layers == 2);
    CHECK(s.heads == 3);
    CHECK(s.D == 6);
    CHECK(s.d == 4);
    CHECK(s.s == 0.3);
    CHECK(s.sentences == 2);
    CHECK(s.n_tokens == std::vector<Eigen::Index>{5, 3});
    CHECK(s.sentence_text == std::vector<std::string>{"sentence 0", "sentence 1"});
    CHECK(s.dtype == "float64");
    CHECK(s.licence == "CC0-1.0");
    CHECK(s.validation == "none (synthetic)");
    CHECK(s.has_inputs);
    CHECK(s.size_bytes > 0);
    CHECK_FALSE(all[0].has_inputs);

    const Error e = error_of([] { find_dataset("nope"); });
    CHECK(e.code() == ExitCode::NoInput);
    CHECK(has(e.what(), "unknown dataset 'nope'"));
    CHECK(has(e.what(), "known: bare, odd, small"));
    CHECK(find_dataset("small").path == dd.dir + "/small.h5");

    setenv("ATTNSPEC_DATASETS", (dd.dir + "/missing").c_str(), 1);
    CHECK(error_of([] { list_datasets(); }).code() == ExitCode::NoInput);
}

TEST_CASE("model loader: heads in layer, head, sentence order with biases", "[model_input]") {
    const ScopedDatasetDir dd;
    dd.write("m");
    const std::vector<SelectedHead> all = load_selected_heads(DatasetSelector::parse("m"));
    REQUIRE(all.size() == 2 * 3 * 2);
    CHECK(all[0].label == "m:L0:H0:S0");
    CHECK(all[1].label == "m:L0:H0:S1");
    CHECK(all[2].label == "m:L0:H1:S0");
    CHECK(all.back().label == "m:L1:H2:S1");

    const std::vector<SelectedHead> one = load_selected_heads(DatasetSelector::parse("m:1:2:1"));
    REQUIRE(one.size() == 1);
    const Head& h = one[0].head_input;
    CHECK(one[0].layer == 1);
    CHECK(one[0].head == 2);
    CHECK(one[0].sentence == 1);
    CHECK(h.N() == 3);
    CHECK(h.s == 0.3);
    CHECK(h.X == test::fixture_matrix(3, 6, test::fixture_seed(1, 0, 4)));
    CHECK(h.W_K == test::fixture_matrix(6, 4, test::fixture_seed(1, 2, 1)));
    const std::vector<double> bv = test::fixture_bias(1, 2, 2, 4);
    CHECK(h.b_V == Eigen::Map<const Eigen::VectorXd>(bv.data(), 4));
    CHECK(h.biased());

    // a layer of one sentence: every head on the same X, biases carried into the multi-head layer
    const AttentionHeads layer = load_model_layer(DatasetSelector::parse("m"), 1, 0);
    REQUIRE(layer.size() == 3);
    CHECK(layer.names == std::vector<std::string>{"0", "1", "2"});
    CHECK(layer.shared_X);
    const MultiHead mh = layer.multihead();
    CHECK(mh.X == test::fixture_matrix(5, 6, test::fixture_seed(1, 0, 3)));
    CHECK(mh.heads[1].b_Q.size() == 4);

    test::ModelFixture nob;
    nob.biases = false;
    dd.write("nob", nob);
    CHECK_FALSE(load_selected_heads(DatasetSelector::parse("nob:0:0:0"))[0].head_input.biased());
}

TEST_CASE("model loader: indices out of range name the count", "[model_input]") {
    const ScopedDatasetDir dd;
    dd.write("m");
    const Error l = error_of([] { load_selected_heads(DatasetSelector::parse("m:7")); });
    CHECK(l.code() == ExitCode::DataError);
    CHECK(std::string(l.what()) == "layer 7 out of range: m has 2 layers (0..1)");
    const Error h = error_of([] { load_selected_heads(DatasetSelector::parse("m:0:3")); });
    CHECK(h.code() == ExitCode::DataError);
    CHECK(has(h.what(), "head 3 out of range: m has 3 heads per layer"));
    const Error s = error_of([] { load_selected_heads(DatasetSelector::parse("m:0:0:2")); });
    CHECK(s.code() == ExitCode::DataError);
    CHECK(has(s.what(), "sentence 2 out of range: m has 2 sentences"));
    CHECK(error_of([] { load_selected_heads(DatasetSelector::parse("zz")); }).code() ==
          ExitCode::NoInput);
}

TEST_CASE("model loader: a weight-only file serves weight-only use and refuses X",
          "[model_input]") {
    const ScopedDatasetDir dd;
    test::ModelFixture f;
    f.inputs = false;
    dd.write("minilm-x", f);
    const Error e = error_of([] { load_selected_heads(DatasetSelector::parse("minilm-x:0:0")); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(has(e.what(), "minilm-x: layer 0 has no inputs (weights only);"));
    const std::vector<SelectedHead> w =
        load_selected_heads(DatasetSelector::parse("minilm-x:1"), /*need_inputs=*/false);
    REQUIRE(w.size() == 3);  // one per head, no sentences
    CHECK(w[2].label == "minilm-x:L1:H2");
    CHECK(w[2].head_input.X.size() == 0);
    CHECK(w[2].head_input.W_Q == test::fixture_matrix(6, 4, test::fixture_seed(1, 2, 0)));
    CHECK(w[2].head_input.b_K.size() == 4);
    const Error sent =
        error_of([] { load_selected_heads(DatasetSelector::parse("minilm-x:1:0:0"), false); });
    CHECK(sent.code() == ExitCode::Usage);
    CHECK(has(sent.what(), "reads weights only"));
}

TEST_CASE("model loader: malformed files are refused naming the dataset", "[model_input]") {
    const ScopedDatasetDir dd;
    auto planted = [&](const std::function<void(H5Group&)>& fault) {
        test::ModelFixture f;
        f.extra = fault;
        dd.write("bad", f);
        return error_of([] { load_selected_heads(DatasetSelector::parse("bad")); });
    };
    Error e = planted([](H5Group& r) {
        replace(r, "/layers/1/heads/2/W_K", test::fixture_matrix(4, 6, 1));  // PyTorch layout
    });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(has(e.what(), "/layers/1/heads/2/W_K is 4x6, expected 6x4"));
    e = planted(
        [](H5Group& r) { replace(r, "/layers/0/heads/1/b_Q", test::fixture_matrix(5, 1, 1)); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(has(e.what(), "/layers/0/heads/1/b_Q must have shape (4,)"));
    e = planted(
        [](H5Group& r) { replace(r, "/layers/1/inputs/0", test::fixture_matrix(4, 6, 1)); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(has(e.what(), "/layers/1/inputs/0 has 4 rows, but /sentences/n_tokens says 5"));
    e = planted([](H5Group& r) {
        Eigen::MatrixXd X = test::fixture_matrix(5, 6, 1);
        X(2, 3) = std::nan("");
        replace(r, "/layers/0/inputs/0", X);
    });
    CHECK(e.code() == ExitCode::DataError);
    e = planted([](H5Group& r) {
        H5Group g(H5Id(H5Gopen2(r.id(), "/layers/0/heads", H5P_DEFAULT), H5Gclose));
        g.group("extra");
    });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(has(e.what(), "/layers/0/heads holds 'extra'"));
    e = planted([](H5Group& r) { REQUIRE(H5Adelete(r.id(), "s") >= 0); });
    CHECK(has(e.what(), "no root attribute s"));
}

TEST_CASE("model loader: an oversized selection is refused before reading", "[model_input]") {
    const ScopedDatasetDir dd;
    dd.write("m");
    const double bytes = selected_bytes(DatasetSelector::parse("m"));
    // 12 heads x (3 D d + 3 d) doubles, X per (layer, sentence) read once and copied per head
    CHECK(bytes == 8.0 * (2 * 3 * (3 * 6 * 4 + 3 * 4) + 2 * (5 + 3) * 6 * 4));
    const double old = memory_limit_bytes();
    set_memory_limit_bytes(bytes - 1);
    const Error e = error_of([] { load_selected_heads(DatasetSelector::parse("m")); });
    set_memory_limit_bytes(old);
    CHECK(e.code() == ExitCode::DataError);
    CHECK(has(e.what(), "loading --dataset 'm' (12 head(s))"));
    set_memory_limit_bytes(bytes);
    CHECK(load_selected_heads(DatasetSelector::parse("m")).size() == 12);
    set_memory_limit_bytes(old);
}

TEST_CASE("model loader: a heads-layout file is a one-layer dataset", "[model_input]") {
    const ScopedDatasetDir dd;
    const std::string src =
        std::string(ATTNSPEC_SOURCE_DIR) + "/datasets/embedded/attention_heads.h5";
    std::filesystem::copy_file(src, dd.dir + "/heads.h5");
    const DatasetInfo info = find_dataset("heads");
    CHECK(info.layout == "heads");
    CHECK(info.layers == 1);
    const AttentionHeads direct = load_attention_heads(src);
    CHECK(info.heads == static_cast<int>(direct.size()));
    const std::vector<SelectedHead> one = load_selected_heads(DatasetSelector::parse("heads:0:1"));
    REQUIRE(one.size() == 1);
    CHECK(one[0].head_input.W_Q == direct.heads[1].W_Q);
    CHECK(one[0].head_input.X == direct.heads[1].X);
    CHECK(one[0].label == "heads:L0:H1");
    const Error e = error_of([] { load_selected_heads(DatasetSelector::parse("heads:0:1:0")); });
    CHECK(e.code() == ExitCode::Usage);
    CHECK(has(e.what(), "a sentence part means nothing there"));
    CHECK(error_of([] { load_selected_heads(DatasetSelector::parse("heads:1")); }).code() ==
          ExitCode::DataError);
}
