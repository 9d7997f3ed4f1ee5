// The hostile suite's runner and input makers (tests/hostile/). Every input is generated at test
// time (no committed blobs): safetensors files written here byte by byte, .npz and HDF5 edits
// made by python3 (numpy, h5py: the interpreter the CLI tests use). Each case runs the attnspec
// executable under a small python3 launcher with a wall-clock limit (killed past it) and reports
// its exit status, stderr, wall time and peak resident memory (the launcher's RUSAGE_CHILDREN
// ru_maxrss: attnspec's own, not the forking test's pages). Files, temporary directories, python
// and safetensors images come from tests/support/test_support.hpp.
#pragma once
#include <string>
#include <vector>

namespace attnspec::hostile {

// The limits the cases assert describe the product build (scripts/test.sh runs them as written).
// scripts/test-sanitizers.sh runs the same cases against an instrumented executable: the
// AddressSanitizer shadow and quarantine (up to 256 MiB of freed blocks kept) raise a run's peak
// resident set by about 100 MiB before main, and instrumented code runs 2-4 times slower. There
// every limit is scaled (time x4, kill limits included; memory x3 + 256 MiB), still far below
// what the defects cost (gigabytes, minutes); the sanitizer run is for memory errors.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif
constexpr double time_limit(double seconds) { return kSanitized ? 4 * seconds : seconds; }
constexpr double memory_limit(double mb) { return kSanitized ? 3 * mb + 256 : mb; }

struct Outcome {
    int code = -1;           // exit status; 128 + signal when killed by one
    bool timed_out = false;  // killed at the limit
    double seconds = 0;      // wall time
    double peak_mb = 0;      // peak resident set of the child (MiB)
    std::string out, err;
};

// Runs attnspec with `args` (each one argv entry), stdin /dev/null, killed after
// time_limit(limit_s).
// `env` entries "NAME=value" are added to the child's environment.
Outcome run(const std::vector<std::string>& args, double limit_s = 20,
            const std::vector<std::string>& env = {});

// The number of lines of `text` that are not empty.
int line_count(const std::string& text);

}  // namespace attnspec::hostile
