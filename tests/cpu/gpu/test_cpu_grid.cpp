// The CPU grid runner (attnspec/gpu/base/cpu_grid.hpp) on small bodies written against the
// thread-context interface: indices and partial tiles as on the device, shared memory fresh (NaN
// bytes) per block, barriers that order, missing barriers that show deterministically (forward
// order in even phases, reverse in odd ones), divergent barriers counted, launch errors and
// exceptions reported.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/cpu_grid.hpp"
#include "test_support.hpp"

using namespace attnspec;
using gpu::CpuGrid;

namespace {

// Each thread of a grid of ceil(n / block) blocks counts element i = block * dim + thread once,
// guarded like a kernel's partial last tile; it also records what it saw.
struct CountBody {
    long n;
    int* hits;
    long* seen_dims;  // [2]: block_dim, grid_dim
    template <class T>
    void operator()(const T& t) const {
        const long i = t.block() * t.block_dim() + t.thread();
        if (i == 0) {
            seen_dims[0] = t.block_dim();
            seen_dims[1] = t.grid_dim();
        }
        if (i < n) hits[i] += 1;
    }
};

// Reverses each block's slice through shared memory; `barrier` false leaves the barrier out.
struct ReverseBody {
    const double* in;
    double* out;
    bool barrier;
    template <class T>
    void operator()(const T& t) const {
        double* s = t.template shared<double>();
        const long base = t.block() * t.block_dim(), tid = t.thread();
        s[tid] = in[base + tid];
        if (barrier) t.sync();
        out[base + tid] = s[t.block_dim() - 1 - tid];
    }
};

// Shifts a shared vector one place toward thread 0 (thread i takes i + 1's value) in phase 1,
// with (`barrier`) or without a barrier between the read and the write.
struct ShiftBody {
    double* out;
    bool barrier;
    template <class T>
    void operator()(const T& t) const {
        double* s = t.template shared<double>();
        const long tid = t.thread(), n = t.block_dim();
        s[tid] = double(tid);
        t.sync();
        const double v = tid + 1 < n ? s[tid + 1] : -1.0;
        if (barrier) t.sync();
        s[tid] = v;
        t.sync();
        out[tid] = s[tid];
    }
};

}  // namespace

TEST_CASE("CPU grid runner: indices, block and grid size, partial last tile", "[cpu-grid]") {
    for (long n : {1L, 255L, 256L, 257L, 1000L}) {
        INFO("n = " << n);
        const int block = 256;
        const long blocks = (n + block - 1) / block;
        std::vector<int> hits(std::size_t(n), 0);
        long dims[2] = {0, 0};
        CpuGrid grid;
        grid(blocks, block, 0, CountBody{n, hits.data(), dims}, "count");
        for (long i = 0; i < n; ++i) CHECK(hits[std::size_t(i)] == 1);
        CHECK(dims[0] == block);
        CHECK(dims[1] == blocks);
        CHECK(grid.counters().blocks == blocks);
        CHECK(grid.counters().threads == blocks * block);
        CHECK(grid.counters().barriers == 0);
    }
}

TEST_CASE("CPU grid runner: a barrier orders shared memory, a missing one shows", "[cpu-grid]") {
    const int block = 64;
    const long blocks = 3;
    std::vector<double> in(std::size_t(blocks * block)), out(in.size(), 0.0);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = double(i);
    CpuGrid grid;
    grid(blocks, block, sizeof(double) * block, ReverseBody{in.data(), out.data(), true}, "rev");
    for (long b = 0; b < blocks; ++b)
        for (long i = 0; i < block; ++i)
            CHECK(out[std::size_t(b * block + i)] == in[std::size_t(b * block + block - 1 - i)]);
    CHECK(grid.counters().barriers == blocks);
    CHECK(grid.counters().divergent_barriers == 0);
    CHECK(grid.counters().max_shared == sizeof(double) * block);
    // Without the barrier thread 0 runs to its end first and reads thread 63's slot before it is
    // written: the fresh shared memory's NaN. The same wrong result on every run.
    std::vector<double> bad1(in.size()), bad2(in.size());
    grid(blocks, block, sizeof(double) * block, ReverseBody{in.data(), bad1.data(), false}, "rev");
    grid(blocks, block, sizeof(double) * block, ReverseBody{in.data(), bad2.data(), false}, "rev");
    long nan_count = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        nan_count += std::isnan(bad1[i]);
        CHECK((bad1[i] == bad2[i] || (std::isnan(bad1[i]) && std::isnan(bad2[i]))));
    }
    CHECK(nan_count == blocks * block / 2);  // the first half of each block reads unwritten slots
}

TEST_CASE("CPU grid runner: odd phases run in reverse, so a race hidden forward shows",
          "[cpu-grid]") {
    const int block = 32;
    std::vector<double> out(block);
    CpuGrid grid;
    // Correct: thread i ends with i + 1 (the last with -1).
    grid(1, block, sizeof(double) * block, ShiftBody{out.data(), true}, "shift");
    for (long i = 0; i < block; ++i) CHECK(out[std::size_t(i)] == (i + 1 < block ? i + 1 : -1));
    // Read-then-write of the right neighbour without a barrier in phase 1 (reverse order): thread
    // 31 writes -1 first, thread 30 reads it, and so on down: every thread ends with -1.
    grid(1, block, sizeof(double) * block, ShiftBody{out.data(), false}, "shift");
    for (long i = 0; i < block; ++i) CHECK(out[std::size_t(i)] == -1);
}

TEST_CASE("CPU grid runner: divergent barriers counted, bad launches and exceptions reported",
          "[cpu-grid]") {
    CpuGrid grid;
    const auto half_return = [](const gpu::CpuThread& t) {
        if (t.thread() >= t.block_dim() / 2) return;
        t.sync();
    };
    grid(2, 64, 0, half_return, "divergent");
    CHECK(grid.counters().divergent_barriers == 2);
    const auto noop = [](const gpu::CpuThread&) {};
    CHECK_THROWS_AS(grid(0, 64, 0, noop, "zero blocks"), Error);
    CHECK_THROWS_AS(grid(1, 1025, 0, noop, "too many threads"), Error);
    CHECK_THROWS_AS(grid(1, 64, 64 * 1024, noop, "too much shared memory"), Error);
    const auto throws = [](const gpu::CpuThread& t) {
        if (t.thread() == 5) throw std::runtime_error("thread 5");
        t.sync();
    };
    CHECK_THROWS_WITH(grid(1, 16, 0, throws, "throws"), "thread 5");
    // The runner is usable after an exception.
    std::vector<int> hits(10, 0);
    long dims[2];
    grid(1, 16, 0, CountBody{10, hits.data(), dims}, "after");
    for (int h : hits) CHECK(h == 1);
}

TEST_CASE("CPU grid runner: warp sums give every lane the butterfly sum, divergence counted",
          "[cpu-grid]") {
    const int block = 64;
    std::vector<float> outf(block);
    std::vector<double> outd(block);
    CpuGrid grid;
    // Integer values: every order of addition gives the exact sum.
    const auto sums = [&](const gpu::CpuThread& t) {
        const long i = t.thread();
        outf[std::size_t(i)] = t.warp_sum(float(i));
        outd[std::size_t(i)] = t.warp_sum(double(i) * 0.5);
    };
    grid(1, block, 0, sums, "warp sums");
    for (long i = 0; i < block; ++i) {
        const double lane0 = double(i / 32 * 32);  // first lane of i's warp
        CHECK(outf[std::size_t(i)] == float(32 * lane0 + 496));
        CHECK(outd[std::size_t(i)] == 0.5 * (32 * lane0 + 496));
    }
    CHECK(grid.counters().warp_sums == 4);
    CHECK(grid.counters().divergent_barriers == 0);
    // The butterfly's rounding, not a left-to-right sum's: 1 + 31 x 2^-24 in float, where a
    // sequential sum from lane 0 stays 1 and the butterfly adds the small lanes pairwise first.
    const auto rounding = [&](const gpu::CpuThread& t) {
        const float x = t.thread() % 32 == 0 ? 1.0f : 0x1p-24f;
        outf[std::size_t(t.thread())] = t.warp_sum(x);
    };
    grid(1, 32, 0, rounding, "rounding");
    float lanes[32];
    for (int l = 0; l < 32; ++l) lanes[l] = l == 0 ? 1.0f : 0x1p-24f;
    for (int off = 16; off > 0; off /= 2) {
        float next[32];
        for (int l = 0; l < 32; ++l) next[l] = lanes[l] + lanes[l ^ off];
        std::copy(next, next + 32, lanes);
    }
    for (int l = 0; l < 32; ++l) CHECK(outf[std::size_t(l)] == lanes[0]);
    CHECK(lanes[0] != 1.0f);
    // Segments of 8 lanes: each lane gets its segment's sum (lanes 8k .. 8k + 7).
    const auto segments = [&](const gpu::CpuThread& t) {
        outd[std::size_t(t.thread())] = t.warp_sum(double(t.thread()), 8);
    };
    grid(1, 32, 0, segments, "segments");
    for (long l = 0; l < 32; ++l) CHECK(outd[std::size_t(l)] == double(8 * (l / 8 * 8) + 28));
    const auto bad_width = [](const gpu::CpuThread& t) { t.warp_sum(1.0, 12); };
    CHECK_THROWS_AS(grid(1, 32, 0, bad_width, "width 12"), Error);
    // Half the warp returns first: the others' sum is divergent (NaN), and counted.
    const auto half = [&](const gpu::CpuThread& t) {
        if (t.thread() >= 16) return;
        outf[std::size_t(t.thread())] = t.warp_sum(1.0f);
    };
    const long before = grid.counters().divergent_barriers;
    grid(1, 32, 0, half, "half warp");
    CHECK(std::isnan(outf[0]));
    CHECK(grid.counters().divergent_barriers == before + 1);
}
