// The BLAS that runs under attnspec's dense kernels (LAPACKE over OpenBLAS, or another BLAS):
// which library and core type it uses, why, and how many threads it may start. Issue 13.
//
// OpenBLAS chooses its kernels once, when it loads (before main), from the CPU it recognises; an
// OpenBLAS older than the CPU falls back to its generic Prescott kernels (Debian 12's 0.3.21 on
// Sapphire/Emerald Rapids). select_blas_kernels() is the first call of every attnspec program
// (the CLI, the test and benchmark mains): when the library is OpenBLAS, the user has not set
// OPENBLAS_CORETYPE, and the CPU's features support a faster core than the one loaded, it sets
// OPENBLAS_CORETYPE and re-executes the program once (the only way to change that choice).
// ATTNSPEC_BLAS_CORE overrides: "auto" (default), "off" (keep what OpenBLAS chose), or a core
// name passed to OpenBLAS as is (e.g. Haswell, SkylakeX, Cooperlake).
#pragma once
#include <string>

namespace attnspec {

struct BlasInfo {
    std::string library;   // "OpenBLAS 0.3.21 ..." (openblas_get_config) or "unknown BLAS"
    std::string core;      // the core type that runs, e.g. "Cooperlake"; "" when unknown
    std::string reason;    // one line: why this core (detected, chosen by attnspec from the
                           // CPU features, set by the user through OPENBLAS_CORETYPE, ...)
    std::string cpu;       // the CPU's model name and the features that decided
    int threads = 1;       // BLAS threads now (openblas_get_num_threads), 1 when unknown
    std::string detected;  // the core OpenBLAS chose on its own; "" when unknown (the user set
                           // OPENBLAS_CORETYPE, or not OpenBLAS)
    std::string best;      // the best core of this OpenBLAS build for the CPU's features; ""
                           // when none is known (not OpenBLAS, not x86-64)
};

// How to override the choice, one line (attnspec info prints it).
std::string blas_override_help();

// What runs now. Cost: a few library queries and /proc/cpuinfo.
BlasInfo blas_info();

// May not return: re-executes /proc/self/exe with the same argv and OPENBLAS_CORETYPE set, at
// most once (the marker ATTNSPEC_BLAS_REEXEC carries this pid, which execv keeps). The restarted
// process checks the core OpenBLAS loaded, warns on stderr when it is not the one asked, and
// removes both variables again, so child processes see the user's environment and choose for
// themselves. If execv fails it goes on with OpenBLAS's choice (blas_info().reason says so). A
// bad ATTNSPEC_BLAS_CORE (not auto/off/a core name, or a core the CPU or the OpenBLAS build
// lacks) prints one line and exits 64. Call it first in main(), before any thread starts.
void select_blas_kernels(int argc, char** argv);

// For a program that cannot re-execute itself (the Python extension, whose parent process sets
// OPENBLAS_CORETYPE before loading it, python/attnspec/_blas.py): the core that
// ATTNSPEC_BLAS_CORE = `value` asks for, "" for off (or when the BLAS is not OpenBLAS), the best
// core of this build for the CPU for auto (unset, ""), else the forced core. Throws Error(Usage)
// for a value select_blas_kernels would refuse with exit 64 (not auto/off/a core name, a core the
// CPU or the OpenBLAS build lacks), with the same message. Cost: a few library queries and
// /proc/cpuinfo.
std::string requested_blas_core(const char* value);
// Records why the running core was chosen, for blas_info().reason, in a program that does not
// call select_blas_kernels (ignored after it was called).
void set_blas_core_reason(const std::string& reason);

// The BLAS's thread count (process-wide). set_blas_threads(n <= 0) is ignored. No-op for a BLAS
// without a thread control.
int blas_threads();
void set_blas_threads(int n);

// Sets the BLAS thread count for its lifetime and restores the old one. Parallel verify runs
// with one BLAS thread in every worker, whatever --threads is, so that each instance runs the
// same single-threaded code for any thread count (bit-identical results).
class BlasThreadsScope {
  public:
    explicit BlasThreadsScope(int n) : old_(blas_threads()) { set_blas_threads(n); }
    ~BlasThreadsScope() { set_blas_threads(old_); }
    BlasThreadsScope(const BlasThreadsScope&) = delete;
    BlasThreadsScope& operator=(const BlasThreadsScope&) = delete;

  private:
    int old_;
};

}  // namespace attnspec
