// Small model-layout dataset files for tests (io/model_input.hpp): written with the library's
// H5Group into a plain HDF5 file, deterministic contents, options to drop parts or plant faults.
#pragma once
#include <Eigen/Dense>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "attnspec/io/h5.hpp"
#include "test_support.hpp"

namespace attnspec::test {

// A deterministic, well-spread matrix (distinct entries, full rank for small sizes); `seed`
// makes different arrays differ.
inline Eigen::MatrixXd fixture_matrix(Eigen::Index r, Eigen::Index c, double seed) {
    Eigen::MatrixXd M(r, c);
    for (Eigen::Index i = 0; i < r; ++i)
        for (Eigen::Index j = 0; j < c; ++j)
            M(i, j) = std::sin(1.0 + 0.37 * seed + 0.91 * static_cast<double>(i) +
                               1.3 * static_cast<double>(j * (i + 1)));
    return M;
}
inline std::vector<double> fixture_vector(Eigen::Index n, double seed) {
    const Eigen::MatrixXd m = fixture_matrix(n, 1, seed);
    return {m.data(), m.data() + n};
}
// The seed of one array: W_Q/b_Q k = 0, W_K/b_K 1, W_V/b_V 2; X of (l, s) gets k = 3 + s.
inline double fixture_seed(int l, int h, int k) { return 100.0 * l + 10.0 * h + k; }

// The bias b_Q (k = 0), b_K (1) or b_V (2) of head h of layer l, as the fixture writes it.
inline std::vector<double> fixture_bias(int l, int h, int k, Eigen::Index d) {
    return fixture_vector(d, fixture_seed(l, h, k) + 0.5);
}

struct ModelFixture {
    int layers = 2, heads = 3;
    std::vector<Eigen::Index> n_tokens = {5, 3};
    Eigen::Index D = 6, d = 4;
    double s = 0.3;  // not 1/sqrt(d): a wrong scale shows
    bool inputs = true, biases = true;
    std::string layout = "model";
    // Called with the root group after everything else is written: plant faults here.
    std::function<void(H5Group&)> extra;
};

inline void write_model_fixture(const std::string& path, const ModelFixture& f) {
    H5Group root(H5Id(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose));
    root.attr("kind", "attnspec-input");
    root.attr("layout", f.layout);
    root.attr("model", "fixture");
    root.attr("origin", "written by the test");
    root.attr("licence", "CC0-1.0");
    root.attr("description", "a small model for tests");
    root.attr("regenerate", "the test suite");
    root.attr("validation", "none (synthetic)");
    root.attr("s", f.s);
    H5Group sentences = root.group("sentences");
    std::vector<std::string> text;
    std::vector<std::int64_t> n;
    for (std::size_t k = 0; k < f.n_tokens.size(); ++k) {
        text.push_back("sentence " + std::to_string(k));
        n.push_back(f.n_tokens[k]);
    }
    sentences.write("text", text);
    sentences.write("n_tokens", n);
    H5Group layers = root.group("layers");
    for (int l = 0; l < f.layers; ++l) {
        H5Group layer = layers.group(std::to_string(l));
        H5Group heads = layer.group("heads");
        for (int h = 0; h < f.heads; ++h) {
            H5Group g = heads.group(std::to_string(h));
            const char* w[] = {"W_Q", "W_K", "W_V"};
            const char* b[] = {"b_Q", "b_K", "b_V"};
            for (int k = 0; k < 3; ++k) {
                g.write(w[k], fixture_matrix(f.D, f.d, fixture_seed(l, h, k)));
                if (f.biases) g.write(b[k], fixture_bias(l, h, k, f.d));
            }
        }
        if (!f.inputs) continue;
        H5Group in = layer.group("inputs");
        for (std::size_t t = 0; t < f.n_tokens.size(); ++t)
            in.write(
                std::to_string(t),
                fixture_matrix(f.n_tokens[t], f.D, fixture_seed(l, 0, 3 + static_cast<int>(t))));
    }
    if (f.extra) f.extra(root);
}

// Points $ATTNSPEC_DATASETS at a fresh directory for one test (the loader and the attnspec
// processes the test starts read it) and restores it afterwards.
struct ScopedDatasetDir {
    std::string dir;
    std::string old;
    bool had = false;
    ScopedDatasetDir() : ScopedDatasetDir(temp_dir()) {}  // a fresh temporary directory
    explicit ScopedDatasetDir(std::string d) : dir(std::move(d)) {
        if (const char* e = std::getenv("ATTNSPEC_DATASETS")) had = true, old = e;
        setenv("ATTNSPEC_DATASETS", dir.c_str(), 1);
    }
    ScopedDatasetDir(const ScopedDatasetDir&) = delete;
    ScopedDatasetDir& operator=(const ScopedDatasetDir&) = delete;
    ~ScopedDatasetDir() {
        if (had)
            setenv("ATTNSPEC_DATASETS", old.c_str(), 1);
        else
            unsetenv("ATTNSPEC_DATASETS");
        std::filesystem::remove_all(dir);
    }
    // Writes the fixture `f` as dataset `name` and returns its path.
    std::string write(const std::string& name, const ModelFixture& f = {}) const {
        const std::string path = dir + "/" + name + ".h5";
        write_model_fixture(path, f);
        return path;
    }
};

}  // namespace attnspec::test
