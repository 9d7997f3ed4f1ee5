// Shared test helpers: unit roundoff, a relative-error matcher for Eigen objects that prints the
// error, and a runner for the attnspec executable (stdout, stderr, exit code).
#pragma once
#include <Eigen/Dense>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/rounding.hpp"

namespace attnspec::test {

constexpr double kU = kUnitRoundoff;  // unit roundoff (base/rounding.hpp)

// Symmetric relative error ||A - B|| / max(||A||, ||B||) (Frobenius), the one convention used.
inline double rel_err(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
    const double s = std::max(A.norm(), B.norm());
    return s == 0 ? 0.0 : (A - B).norm() / s;
}

class MatrixClose : public Catch::MatcherBase<Eigen::MatrixXd> {
  public:
    MatrixClose(Eigen::MatrixXd expected, double tol) : e_(std::move(expected)), tol_(tol) {}
    bool match(const Eigen::MatrixXd& a) const override {
        if (a.rows() != e_.rows() || a.cols() != e_.cols()) return false;
        last_ = rel_err(a, e_);
        return last_ <= tol_;
    }
    std::string describe() const override {
        std::ostringstream os;
        os << "is within relative error " << tol_ << " of the expected " << e_.rows() << "x"
           << e_.cols() << " matrix (error " << last_ << ")";
        return os.str();
    }

  private:
    Eigen::MatrixXd e_;
    double tol_;
    mutable double last_ = -1;
};
inline MatrixClose IsClose(const Eigen::MatrixXd& e, double tol) { return MatrixClose(e, tol); }

// The attnspec::Error that `f` throws; fails the test when it throws none.
template <class F>
Error error_of(F f) {
    try {
        f();
    } catch (const Error& e) {
        return e;
    }
    FAIL("no attnspec::Error thrown");
    return Error(ExitCode::Internal, "unreachable");
}

struct CliResult {
    int code = -1;
    std::string out, err;
};

// Runs the attnspec executable with `args` (a shell-quoted string), capturing both streams.
CliResult run_cli(const std::string& args);

// A fresh temporary directory for one test (removed by the caller if wanted).
std::string temp_dir();

}  // namespace attnspec::test
