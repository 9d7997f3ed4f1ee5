// Helpers shared by the benchmark programs: medians, wall-clock timing, peak RSS, and a python
// peer (a /usr/bin/python3 snippet that prints one number of seconds), run side by side.
#pragma once
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "attnspec/base/blas_runtime.hpp"

namespace attnspec::bench {

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Median wall time of `runs` calls of f (f synchronises its own work), seconds.
template <class F>
double median_of(int runs, F&& f) {
    std::vector<double> t;
    for (int k = 0; k < runs; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        t.push_back(seconds_since(t0));
    }
    return median(t);
}

// Peak resident set size of this process so far (getrusage; ru_maxrss is KiB on Linux).
inline double max_rss_bytes() {
    rusage r{};
    getrusage(RUSAGE_SELF, &r);
    return 1024.0 * static_cast<double>(r.ru_maxrss);
}

// Runs `/usr/bin/python3 -c "<code>"` and reads the number of seconds it prints; NaN on failure
// (the peer is then reported as unavailable, never as a win). The peer runs the OpenBLAS core
// this program runs (Debian's numpy loads the same OpenBLAS, which alone would pick Prescott on
// a CPU it does not recognise: select_blas_kernels restores the user's environment).
inline double python_peer_seconds(const std::string& code) {
    const std::string core = blas_info().core;
    const std::string env = core.empty() ? "" : "OPENBLAS_CORETYPE=" + core + " ";
    const std::string cmd = env + "/usr/bin/python3 -c \"" + code + "\" 2>/dev/null";
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return NAN;
    double t = NAN;
    if (std::fscanf(p, "%lf", &t) != 1) t = NAN;
    pclose(p);
    return t;
}

}  // namespace attnspec::bench
