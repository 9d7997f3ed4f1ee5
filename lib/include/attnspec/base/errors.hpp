// Error type and the documented exit codes (README "Exit codes"). Every failure the user can
// cause is thrown as attnspec::Error with one of these codes and a one-line message naming the
// problem; the CLI prints "attnspec: error: <message>" on stderr and exits with the code.
#pragma once
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

namespace attnspec {

enum class ExitCode : int {
    Ok = 0,            // success; for checks: every claim holds (or is not applicable)
    Violated = 1,      // a check proved a claim false (a finding, not a crash)
    Inconclusive = 2,  // a check could not decide within its enclosures
    Usage = 64,        // bad command line (EX_USAGE)
    DataError = 65,    // bad input data: shapes, NaN/Inf, out-of-range parameters (EX_DATAERR)
    NoInput = 66,      // input file missing or unreadable (EX_NOINPUT)
    NoDevice = 69,     // GPU command without CUDA support or device (EX_UNAVAILABLE)
    Internal = 70,     // internal error: a bug (EX_SOFTWARE)
    OutOfMemory = 71,  // the system could not provide memory the run needed (EX_OSERR)
    BackendLoad = 72,  // the GPU backend library is there but does not load (EX_OSFILE)
    CantCreate = 73,   // output cannot be created (EX_CANTCREAT)
    IoError = 74,      // I/O error while reading or writing (EX_IOERR)
};

// The library speaks in its own terms: a message names the parameter and its value ("gamma = 1.5
// must lie in (0, 1)") and `parameter()` carries the parameter's name ("gamma", "max_bytes"), so
// the CLI can point at the option that sets it (cli: flag_for_parameter). Empty when the error is
// about data rather than a parameter.
class Error : public std::runtime_error {
  public:
    Error(ExitCode code, const std::string& message, std::string parameter = {})
        : std::runtime_error(message), code_(code), parameter_(std::move(parameter)) {}
    ExitCode code() const noexcept { return code_; }
    const std::string& parameter() const noexcept { return parameter_; }

  private:
    ExitCode code_;
    std::string parameter_;
};

// Shorthands for the common cases; `parameter` names the parameter at fault (Error::parameter).
[[noreturn]] inline void fail_usage(const std::string& m, const std::string& parameter = {}) {
    throw Error(ExitCode::Usage, m, parameter);
}
[[noreturn]] inline void fail_data(const std::string& m, const std::string& parameter = {}) {
    throw Error(ExitCode::DataError, m, parameter);
}

// The exit code an exception stands for and its message, as main() maps them: Error its code,
// std::bad_alloc OutOfMemory ("out of memory"), anything else Internal. For exceptions carried
// between threads or processes (RunLoop's spread, verify --mpi).
struct ExceptionSummary {
    int code = 0;
    std::string message;
};
ExceptionSummary summarize_exception(const std::exception_ptr& e);

// Refuse problems before allocating: throws DataError "<what> would need 1.1 GiB, above the limit
// <parameter> = 1.0 GiB" naming `parameter` (e.g. "max_bytes") when the limit is one, or "above
// the limit of 16.0 GiB" for a fixed limit (parameter empty). O(1).
void check_allocation(double bytes, double limit_bytes, const std::string& what,
                      const std::string& parameter = {});

// A parameter's value for a message: "%.6g" ("1.5", "1e-30", "nan", "inf").
std::string value_text(double x);

// "1.5 GiB", "312 MiB", "12 KiB", "42 B".
std::string human_bytes(double bytes);

}  // namespace attnspec
