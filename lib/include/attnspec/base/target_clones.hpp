// ATTNSPEC_CLONES_AVX2: a function compiled for AVX2 and for the baseline, chosen at load time
// (GCC target_clones, an ifunc). Under ThreadSanitizer the ifunc resolvers run before its runtime
// starts and crash the program at load (the tsan preset), so a TSan build keeps the baseline
// clone only. CPU only.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define ATTNSPEC_CLONES_AVX2
#else
#define ATTNSPEC_CLONES_AVX2 __attribute__((target_clones("avx2", "default")))
#endif
