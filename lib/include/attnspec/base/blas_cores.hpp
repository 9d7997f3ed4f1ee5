// Which OpenBLAS core type a CPU can run (issue 13): the CPU's features as CPUID and the OS's
// XSAVE state report them, the OpenBLAS x86-64 core names with what their kernels need, the best
// core for a feature set, and the ATTNSPEC_BLAS_CORE override. Pure functions apart from
// cpu_features(), so the mapping is tested with planted feature sets
// (tests/cpu/base/test_blas.cpp).
#pragma once
#include <string>
#include <vector>

namespace attnspec {

struct CpuFeatures {
    bool x86 = false;  // CPUID was read (x86-64); false elsewhere: nothing is chosen
    bool amd = false;  // vendor AuthenticAMD (AVX2 machines run OpenBLAS's Zen kernels there)
    bool sse3 = false, ssse3 = false, sse42 = false, avx = false, fma = false, avx2 = false;
    bool avx512f = false, avx512dq = false, avx512cd = false, avx512bw = false, avx512vl = false;
    bool avx512_bf16 = false, avx512_fp16 = false, amx_tile = false, amx_bf16 = false;
    // State the OS saves on a context switch (XCR0 through XGETBV): without it the instructions
    // fault even where CPUID lists them.
    bool os_avx = false;     // XMM and YMM state (XCR0 bits 1, 2)
    bool os_avx512 = false;  // opmask, ZMM_Hi256, Hi16_ZMM state (XCR0 bits 5, 6, 7)
    bool os_amx = false;     // XTILECFG, XTILEDATA state (XCR0 bits 17, 18)
    std::string model;       // CPUID brand string, "" when unknown

    // "avx2 fma avx512f avx512dq avx512cd avx512bw avx512vl avx512_bf16; OS enables AVX, AVX-512"
    std::string summary() const;
};

// This CPU's features (CPUID, XGETBV). Cost: a few CPUID instructions.
CpuFeatures cpu_features();

// The OpenBLAS x86-64 core names attnspec knows, in OpenBLAS's spelling ("Prescott", "Haswell",
// "SkylakeX", "Cooperlake", "SapphireRapids", ...).
const std::vector<std::string>& openblas_core_names();

// `name` in OpenBLAS's spelling, matched case-insensitively; "" when it is not a core name.
std::string canonical_core_name(const std::string& name);

// A core's place on the Intel-compatible ladder (Prescott 1 ... SapphireRapids 8); -1 for a core
// off the ladder (Atom, Bulldozer, ...) or an unknown name. A higher rank needs more features.
int core_rank(const std::string& core);

// Whether the CPU and the OS run `core`'s kernels; true for a core off the ladder (its needs are
// not modelled: forcing one is the user's call).
bool core_runs_on(const std::string& core, const CpuFeatures& f);

// What `core` needs that `f` lacks, e.g. "AVX-512 state enabled by the OS"; "" when it runs.
std::string core_missing(const std::string& core, const CpuFeatures& f);

// The highest-ranked core of `offered` that runs on `f` (Zen rather than Haswell on AMD); "" when
// none does (not x86, or nothing offered).
std::string best_core_for(const CpuFeatures& f, const std::vector<std::string>& offered);

// Whether attnspec replaces the core OpenBLAS loaded by `best`: both are on the ladder and
// `best` ranks higher (a core off the ladder, e.g. Zen's relatives Excavator or Bulldozer, means
// OpenBLAS recognised the CPU: kept).
bool should_replace_core(const std::string& loaded, const std::string& best);

// ATTNSPEC_BLAS_CORE: unset, "" or "auto" -> Auto; "off" -> Off (both any case); a core name ->
// Force with the name in OpenBLAS's spelling. Anything else throws Error(Usage) naming the value
// and the choices.
enum class BlasCoreMode { Auto, Off, Force };
struct BlasCoreOverride {
    BlasCoreMode mode = BlasCoreMode::Auto;
    std::string core;  // Force only
};
BlasCoreOverride parse_blas_core_override(const char* value);

}  // namespace attnspec
