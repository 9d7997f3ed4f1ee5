// The BLAS core choice (issue 13): CPU features -> OpenBLAS core as a pure function on planted
// feature sets, the ATTNSPEC_BLAS_CORE override, and what this test program itself runs (its main
// calls select_blas_kernels, as the CLI's does).
#include <cstdlib>
#include <string>
#include <vector>

#include "attnspec/base/blas_cores.hpp"
#include "attnspec/base/blas_runtime.hpp"
#include "test_support.hpp"

using namespace attnspec;

namespace {
const std::vector<std::string> kDebian0321 = {"Prescott", "Core2",       "Penryn",  "Dunnington",
                                              "Nehalem",  "Sandybridge", "Haswell", "Zen",
                                              "SkylakeX", "Cooperlake"};

CpuFeatures sse3_only() {
    CpuFeatures f;
    f.x86 = true;
    f.sse3 = true;
    return f;
}
CpuFeatures avx2_fma() {
    CpuFeatures f = sse3_only();
    f.ssse3 = f.sse42 = f.avx = f.os_avx = f.avx2 = f.fma = true;
    return f;
}
CpuFeatures avx512_cpu() {  // Skylake-SP: AVX-512 F/DQ/CD/BW/VL, enabled by the OS
    CpuFeatures f = avx2_fma();
    f.avx512f = f.avx512dq = f.avx512cd = f.avx512bw = f.avx512vl = f.os_avx512 = true;
    return f;
}
CpuFeatures emerald_rapids() {
    CpuFeatures f = avx512_cpu();
    f.avx512_bf16 = f.avx512_fp16 = f.amx_tile = f.amx_bf16 = f.os_amx = true;
    return f;
}
}  // namespace

TEST_CASE("blas core: AVX2 and FMA map to Haswell (Zen on AMD), not to an AVX-512 core", "[blas]") {
    CHECK(best_core_for(avx2_fma(), kDebian0321) == "Haswell");
    CpuFeatures amd = avx2_fma();
    amd.amd = true;
    CHECK(best_core_for(amd, kDebian0321) == "Zen");
    CpuFeatures no_fma = avx2_fma();
    no_fma.fma = false;  // AVX2 without FMA: Haswell's kernels would fault
    CHECK(best_core_for(no_fma, kDebian0321) == "Sandybridge");
}

TEST_CASE("blas core: AVX-512 listed by CPUID but not enabled by the OS is not SkylakeX",
          "[blas]") {
    CpuFeatures f = emerald_rapids();
    f.os_avx512 = false;  // planted: XCR0 lacks the opmask/ZMM state
    f.os_amx = false;
    CHECK(best_core_for(f, kDebian0321) == "Haswell");
    CHECK_FALSE(core_runs_on("SkylakeX", f));
    CHECK(core_missing("SkylakeX", f) == "AVX-512 state enabled by the OS");
    CpuFeatures no_ymm = avx2_fma();
    no_ymm.os_avx = false;  // nor AVX without the YMM state
    CHECK(best_core_for(no_ymm, kDebian0321) == "Nehalem");
}

TEST_CASE("blas core: an AVX-512 CPU gets the best core the OpenBLAS build offers", "[blas]") {
    CHECK(best_core_for(avx512_cpu(), kDebian0321) == "SkylakeX");
    CHECK(best_core_for(emerald_rapids(), kDebian0321) == "Cooperlake");
    std::vector<std::string> newer = kDebian0321;
    newer.push_back("SapphireRapids");
    CHECK(best_core_for(emerald_rapids(), newer) == "SapphireRapids");
    CpuFeatures no_amx_state = emerald_rapids();
    no_amx_state.os_amx = false;
    CHECK(best_core_for(no_amx_state, newer) == "Cooperlake");
    const std::vector<std::string> old = {"Prescott", "Haswell", "SkylakeX"};  // no Cooperlake
    CHECK(best_core_for(emerald_rapids(), old) == "SkylakeX");
}

TEST_CASE("blas core: nothing to gain keeps OpenBLAS's choice", "[blas]") {
    CHECK(best_core_for(CpuFeatures{}, kDebian0321).empty());  // not x86: nothing known
    CHECK(best_core_for(sse3_only(), kDebian0321) == "Prescott");
    CHECK_FALSE(should_replace_core("Prescott", "Prescott"));
    CHECK_FALSE(should_replace_core("Prescott", ""));
    CHECK_FALSE(should_replace_core("Cooperlake", "Haswell"));  // never downwards
    CHECK_FALSE(should_replace_core("Excavator", "Haswell"));   // OpenBLAS recognised the CPU
    CHECK(should_replace_core("Prescott", "Cooperlake"));
    CHECK(should_replace_core("prescott", "Haswell"));
}

TEST_CASE("blas core: core names match OpenBLAS's spelling in any case", "[blas]") {
    CHECK(canonical_core_name("skylakex") == "SkylakeX");
    CHECK(canonical_core_name("COOPERLAKE") == "Cooperlake");
    CHECK(canonical_core_name("Skylake").empty());
    CHECK(core_rank("Prescott") < core_rank("Haswell"));
    CHECK(core_rank("Haswell") < core_rank("SkylakeX"));
    CHECK(core_rank("SkylakeX") < core_rank("Cooperlake"));
    CHECK(core_rank("Bulldozer") == -1);
    CHECK(core_runs_on("Bulldozer", CpuFeatures{}));  // off the ladder: not modelled
}

TEST_CASE("blas core: ATTNSPEC_BLAS_CORE is auto, off or a core name", "[blas]") {
    CHECK(parse_blas_core_override(nullptr).mode == BlasCoreMode::Auto);
    CHECK(parse_blas_core_override("").mode == BlasCoreMode::Auto);
    CHECK(parse_blas_core_override("auto").mode == BlasCoreMode::Auto);
    CHECK(parse_blas_core_override("OFF").mode == BlasCoreMode::Off);
    const auto forced = parse_blas_core_override("haswell");
    CHECK(forced.mode == BlasCoreMode::Force);
    CHECK(forced.core == "Haswell");
    const Error e = test::error_of([] { parse_blas_core_override("Skylake"); });
    CHECK(e.code() == ExitCode::Usage);
    CHECK(std::string(e.what()).find("'Skylake'") != std::string::npos);
    CHECK(std::string(e.what()).find("SkylakeX") != std::string::npos);
}

TEST_CASE("blas core: this test program runs the core the CLI would choose", "[blas]") {
    const BlasInfo b = blas_info();
    INFO(b.library << " | " << b.core << " | " << b.reason << " | " << b.cpu);
    CHECK(std::getenv("ATTNSPEC_BLAS_REEXEC") == nullptr);  // the marker never leaks
    CHECK_FALSE(b.cpu.empty());
    if (b.core.empty()) return;  // not OpenBLAS: nothing is chosen
    CHECK_FALSE(b.reason.empty());
    const bool user_set = std::getenv("OPENBLAS_CORETYPE") || std::getenv("ATTNSPEC_BLAS_CORE");
    if (!user_set && should_replace_core(b.detected, b.best)) CHECK(b.core == b.best);
    if (cpu_features().x86) CHECK(core_runs_on(b.core, cpu_features()));
}
