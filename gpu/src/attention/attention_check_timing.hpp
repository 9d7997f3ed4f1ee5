// Timing and case naming shared by the attention twins' gpu-check entries (host code only).
#pragma once
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace attnspec::gpu::attn {

// Median wall time of `runs` calls of f (each call synchronises: its results are on the host).
template <class F>
double median_seconds(int runs, F&& f) {
    std::vector<double> t;
    for (int k = 0; k < runs; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

}  // namespace attnspec::gpu::attn
