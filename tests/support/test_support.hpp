// The shared test helpers (tests/support/, issue 29: each defined once, here or beside it):
// numerics (unit roundoff, relative error, an Eigen matcher), errors, text and files, temporary
// directories, and running the attnspec executable, a shell command, the h5py python and
// scripts/compare-reports.py. Every test links them (attnspec_test_main, tests/CMakeLists.txt).
#pragma once
#include <Eigen/Dense>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/memory.hpp"
#include "attnspec/base/rounding.hpp"

namespace attnspec::test {

// ---- numerics --------------------------------------------------------------------------------

constexpr double kU = kUnitRoundoff;  // unit roundoff (base/rounding.hpp)

// Symmetric relative error ||A - B|| / max(||A||, ||B||) (Frobenius), the one convention used.
inline double rel_err(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
    const double s = std::max(A.norm(), B.norm());
    return s == 0 ? 0.0 : (A - B).norm() / s;
}

// Matches a matrix within relative error `tol` (rel_err) of the expected one; prints the error.
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
// CHECK_THAT(A, IsClose(B, tol)): A within relative error tol of B.
inline MatrixClose IsClose(const Eigen::MatrixXd& e, double tol) { return MatrixClose(e, tol); }

// Wall-clock seconds since `t0` (std::chrono::steady_clock).
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ---- errors ----------------------------------------------------------------------------------

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

// The exit code of the attnspec::Error that `f` throws; ExitCode::Ok when it throws none.
inline ExitCode code_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.code();
    }
    return ExitCode::Ok;
}

// Sets the process memory budget (base/memory.hpp) to `bytes` for the object's lifetime and
// restores the previous one after it (even when the test fails).
struct MemoryBudget {
    double saved = memory_limit_bytes();
    explicit MemoryBudget(double bytes) { set_memory_limit_bytes(bytes); }
    ~MemoryBudget() { set_memory_limit_bytes(saved); }
    MemoryBudget(const MemoryBudget&) = delete;
    MemoryBudget& operator=(const MemoryBudget&) = delete;
};

// ---- text and files --------------------------------------------------------------------------

// True when `text` contains `part`; when it does not, `text` is shown with the next assertion.
inline bool has(const std::string& text, const std::string& part) {
    const bool found = text.find(part) != std::string::npos;
    if (!found) UNSCOPED_INFO("no \"" << part << "\" in: " << text);
    return found;
}
// True when the message of `e` contains `part`.
inline bool has(const Error& e, const std::string& part) {
    return has(std::string(e.what()), part);
}

// The whole content of the file `path`, bytes as stored ("" when it cannot be read).
std::string slurp(const std::string& path);

// Writes `bytes` to `path` (replacing it); fails the test when it cannot.
void write_file(const std::string& path, const std::string& bytes);

// True when `path` names an existing file of any kind.
bool exists(const std::string& path);

// The names in the directory `dir`, sorted, without "." and ".." (none when it cannot be read).
std::vector<std::string> entries(const std::string& dir);

// The number of entries of `dir` whose name holds ".tmp." (temporary files left behind).
int temps_in(const std::string& dir);

// A fresh temporary directory for one test (removed by the caller if wanted).
std::string temp_dir();

// A fresh temporary directory, removed with its contents when the object goes.
struct TempDir {
    std::string path;
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::string operator/(const std::string& name) const { return path + "/" + name; }
};

// A safetensors file image: the 8-byte little-endian length of `header` (a JSON object text),
// the header, then the `data` bytes.
std::string safetensors(const std::string& header, const std::string& data = "");

// ---- processes -------------------------------------------------------------------------------

struct CliResult {
    int code = -1;         // exit status; -1 when the process did not exit normally
    std::string out, err;  // what it wrote (with merged streams: both in `out`)
};

// Runs the shell command line `cmd`, stdin /dev/null, with stdout and stderr captured.
CliResult run_shell(const std::string& cmd);
// The same with both streams captured together, in `out`.
CliResult run_shell_merged(const std::string& cmd);

// Runs the attnspec executable with `args` (a shell-quoted string) as run_shell does
// ($ATTNSPEC_TEST_CLI, when set, names a relocated executable).
CliResult run_cli(const std::string& args);

// Runs `cmd` with /bin/sh; its exit status (-1 when it did not exit normally).
int sh(const std::string& cmd);

// Runs the python `script` (the interpreter with h5py and numpy, ATTNSPEC_PYTHON) with `args`;
// its exit status. Its stdout and stderr go to `log` (default: beside the script in a temporary
// directory) and into *out when given; a nonzero exit shows them with the next assertion.
int python(const std::string& script, const std::string& args = "", std::string* out = nullptr,
           const std::string& log = "");

// scripts/compare-reports.py A B with `options` (e.g. "--rtol 0"), its output into `log`: 0 when
// the reports agree, 1 when they differ.
int compare_reports(const std::string& a, const std::string& b, const std::string& options,
                    const std::string& log);

}  // namespace attnspec::test
