// Helpers of the real-model analysis tests (tests/cpu/proofs/test_model_*.cpp): a small model
// file (tests/model_fixture.hpp) made the dataset directory for the test's lifetime, and kappa
// from Eigen's JacobiSVD (independent of spectral/svd.hpp).
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cstdlib>
#include <string>

#include "attnspec/base/check.hpp"
#include "model_fixture.hpp"
#include "test_support.hpp"

namespace attnspec::test {

// Writes `f` as <temp>/<name>.h5 and points $ATTNSPEC_DATASETS at it until destroyed.
class FixtureDatasets {
  public:
    FixtureDatasets(const std::string& name, const ModelFixture& f = {}) {
        if (const char* old = std::getenv("ATTNSPEC_DATASETS")) old_ = old, had_ = true;
        const std::string dir = temp_dir();
        path_ = dir + "/" + name + ".h5";
        write_model_fixture(path_, f);
        ::setenv("ATTNSPEC_DATASETS", dir.c_str(), 1);
    }
    ~FixtureDatasets() {
        if (had_)
            ::setenv("ATTNSPEC_DATASETS", old_.c_str(), 1);
        else
            ::unsetenv("ATTNSPEC_DATASETS");
    }
    FixtureDatasets(const FixtureDatasets&) = delete;
    FixtureDatasets& operator=(const FixtureDatasets&) = delete;
    const std::string& path() const { return path_; }

  private:
    std::string old_, path_;
    bool had_ = false;
};

inline double jacobi_kappa(const Eigen::MatrixXd& M) {
    const Eigen::VectorXd s = Eigen::JacobiSVD<Eigen::MatrixXd>(M).singularValues();
    return s[0] / s[s.size() - 1];
}

// Column `name` of an experiment table (fails the test when absent).
inline const std::vector<double>& table_column(const ExperimentTable& t, const std::string& name) {
    const auto it = std::find(t.value_names.begin(), t.value_names.end(), name);
    REQUIRE(it != t.value_names.end());
    return t.values[size_t(it - t.value_names.begin())];
}

inline std::string table_attribute(const ExperimentTable& t, const std::string& name) {
    for (const auto& [k, v] : t.attributes)
        if (k == name) return v;
    return "";
}

}  // namespace attnspec::test
