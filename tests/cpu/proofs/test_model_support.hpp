// Helpers of the real-model analysis tests (tests/cpu/proofs/test_model_*.cpp): a small model
// file (tests/support/model_fixture.hpp) in the dataset directory for the test's lifetime, and
// kappa from Eigen's JacobiSVD (independent of spectral/svd.hpp).
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cstdlib>
#include <string>

#include "attnspec/base/check.hpp"
#include "model_fixture.hpp"
#include "test_support.hpp"

namespace attnspec::test {

// Writes `f` as <temp>/<name>.h5 and points $ATTNSPEC_DATASETS at it until destroyed
// (ScopedDatasetDir, tests/support/model_fixture.hpp).
class FixtureDatasets {
  public:
    FixtureDatasets(const std::string& name, const ModelFixture& f = {})
        : path_(dir_.write(name, f)) {}
    const std::string& path() const { return path_; }

  private:
    ScopedDatasetDir dir_;
    std::string path_;
};

// kappa of M from Eigen's JacobiSVD (independent of spectral/svd.hpp).
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
