// Per-tile arithmetic of the SpecA twin (attention_cuda.cu), shared with the CPU test suite
// (tests/cpu/attention/test_attention_logic.cpp emulates the grid with these functions).
//
// Row softmax: one thread block per softmax row of length n (contiguous: the twin computes the
// transposed logits, so a softmax row is a column of a column-major matrix). The row is read in
// tiles of `width` consecutive elements (width = threads per block, a power of two); thread t
// handles element k * width + t of tile k, so reads are coalesced. Each pass (max, sum of exp,
// normalise) gives one partial per thread, combined by a fixed binary tree (tree_step with
// stride width/2, width/4, ..., 1): the reduction order is fixed, the result deterministic.
#pragma once
#include <cmath>

#include "attnspec/gpu/base/hd.hpp"

namespace attnspec::gpu::softmax_logic {

ATTNSPEC_HD float hd_exp(float x) { return expf(x); }
ATTNSPEC_HD double hd_exp(double x) { return exp(x); }

// Tiles a pass visits: ceil(n / width); the planted fault off_by_one_tile skips the last one.
ATTNSPEC_HD long num_tiles(long n, int width, bool skip_last_tile) {
    const long k = (n + width - 1) / width;
    return skip_last_tile && k > 0 ? k - 1 : k;
}

// Thread t's partial maximum over its elements of the visited tiles (-inf when it has none).
template <class T>
ATTNSPEC_HD T thread_max(const T* row, long n, int width, int t, long tiles) {
    T m = -static_cast<T>(INFINITY);
    for (long k = 0; k < tiles; ++k) {
        const long j = k * width + t;
        if (j < n && row[j] > m) m = row[j];
    }
    return m;
}

// Thread t's partial sum of exp(row[j] - m) over its elements (ascending j: a fixed order).
template <class T>
ATTNSPEC_HD T thread_sum_exp(const T* row, long n, int width, int t, long tiles, T m) {
    T s = 0;
    for (long k = 0; k < tiles; ++k) {
        const long j = k * width + t;
        if (j < n) s += hd_exp(row[j] - m);
    }
    return s;
}

// One level of the tree: partial t absorbs partial t + stride (t < stride). The caller runs
// strides width/2, ..., 1 with a barrier between levels; buf[0] then holds the result.
template <class T>
ATTNSPEC_HD void tree_step_max(T* buf, int stride, int t) {
    if (t < stride && buf[t + stride] > buf[t]) buf[t] = buf[t + stride];
}
template <class T>
ATTNSPEC_HD void tree_step_sum(T* buf, int stride, int t) {
    if (t < stride) buf[t] += buf[t + stride];
}

// out[j] = exp(in[j] - m) * inv_sum over thread t's elements (in == out allowed: each element is
// read and written by the same thread).
template <class T>
ATTNSPEC_HD void normalise(const T* in, T* out, long n, int width, int t, long tiles, T m,
                           T inv_sum) {
    for (long k = 0; k < tiles; ++k) {
        const long j = k * width + t;
        if (j < n) out[j] = hd_exp(in[j] - m) * inv_sum;
    }
}

// SpecA effective weight W + C (docs/MATH.md §2, Def 3.6); the planted fault dropped_term leaves
// the correction out.
template <class T>
ATTNSPEC_HD T effective_weight(T w, T c, bool drop_correction) {
    return drop_correction ? w : w + c;
}

}  // namespace attnspec::gpu::softmax_logic
