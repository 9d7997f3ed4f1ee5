// OpenBLAS core types and the CPU features they need (base/blas_cores.hpp).
#include "attnspec/base/blas_cores.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "attnspec/base/errors.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define ATTNSPEC_HAVE_CPUID 1
#endif

namespace attnspec {

namespace {

// What a core on the ladder needs; each level includes the ones below it.
enum class Need { Sse3, Ssse3, Sse42, Avx, Avx2Fma, Avx512, Avx512Bf16, Amx };

struct CoreSpec {
    const char* name;
    int rank;  // -1: off the ladder (needs not modelled)
    Need need;
};

// OpenBLAS's x86-64 DYNAMIC_ARCH core names (driver/others/dynamic.c's table).
const CoreSpec kCores[] = {
    {"Katmai", -1, Need::Sse3},
    {"Coppermine", -1, Need::Sse3},
    {"Northwood", -1, Need::Sse3},
    {"Prescott", 1, Need::Sse3},
    {"Banias", -1, Need::Sse3},
    {"Atom", -1, Need::Sse3},
    {"Core2", 2, Need::Ssse3},
    {"Penryn", 2, Need::Ssse3},
    {"Dunnington", 2, Need::Ssse3},
    {"Nehalem", 3, Need::Sse42},
    {"Athlon", -1, Need::Sse3},
    {"Opteron", -1, Need::Sse3},
    {"Opteron_SSE3", -1, Need::Sse3},
    {"Barcelona", -1, Need::Sse3},
    {"Nano", -1, Need::Sse3},
    {"Sandybridge", 4, Need::Avx},
    {"Bobcat", -1, Need::Sse3},
    {"Bulldozer", -1, Need::Sse3},
    {"Piledriver", -1, Need::Sse3},
    {"Haswell", 5, Need::Avx2Fma},
    {"Steamroller", -1, Need::Sse3},
    {"Excavator", -1, Need::Sse3},
    {"Zen", 5, Need::Avx2Fma},
    {"SkylakeX", 6, Need::Avx512},
    {"Cooperlake", 7, Need::Avx512Bf16},
    {"SapphireRapids", 8, Need::Amx},
};

const CoreSpec* find_core(const std::string& name) {
    for (const auto& c : kCores) {
        if (name.size() != std::strlen(c.name)) continue;
        bool same = true;
        for (size_t i = 0; i < name.size() && same; ++i)
            same = std::tolower(static_cast<unsigned char>(name[i])) ==
                   std::tolower(static_cast<unsigned char>(c.name[i]));
        if (same) return &c;
    }
    return nullptr;
}

// The first missing requirement of `need` on `f`, "" when all are met.
std::string missing(Need need, const CpuFeatures& f) {
    if (!f.sse3) return "SSE3";
    if (need >= Need::Ssse3 && !f.ssse3) return "SSSE3";
    if (need >= Need::Sse42 && !f.sse42) return "SSE4.2";
    if (need >= Need::Avx && !f.avx) return "AVX";
    if (need >= Need::Avx && !f.os_avx) return "AVX state enabled by the OS";
    if (need >= Need::Avx2Fma && !(f.avx2 && f.fma)) return "AVX2 and FMA";
    if (need >= Need::Avx512 &&
        !(f.avx512f && f.avx512dq && f.avx512cd && f.avx512bw && f.avx512vl))
        return "AVX-512 F/DQ/CD/BW/VL";
    if (need >= Need::Avx512 && !f.os_avx512) return "AVX-512 state enabled by the OS";
    if (need >= Need::Avx512Bf16 && !f.avx512_bf16) return "AVX512_BF16";
    if (need >= Need::Amx && !(f.avx512_fp16 && f.amx_tile && f.amx_bf16))
        return "AVX512_FP16 and AMX";
    if (need >= Need::Amx && !f.os_amx) return "AMX tile state enabled by the OS";
    return "";
}

#ifdef ATTNSPEC_HAVE_CPUID
unsigned long long xcr0() {
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (static_cast<unsigned long long>(hi) << 32) | lo;
}

std::string brand_string() {
    unsigned r[12] = {};
    if (static_cast<unsigned>(__get_cpuid_max(0x80000000u, nullptr)) < 0x80000004u) return "";
    for (unsigned i = 0; i < 3; ++i)
        __get_cpuid(0x80000002u + i, &r[4 * i], &r[4 * i + 1], &r[4 * i + 2], &r[4 * i + 3]);
    std::string s(reinterpret_cast<const char*>(r), sizeof r);
    s = s.c_str();  // up to the first NUL
    const auto b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}
#endif

}  // namespace

std::string CpuFeatures::summary() const {
    if (!x86) return "CPU features unknown (not x86-64)";
    std::string s;
    const std::pair<bool, const char*> flags[] = {{sse3, "sse3"},
                                                  {ssse3, "ssse3"},
                                                  {sse42, "sse4_2"},
                                                  {avx, "avx"},
                                                  {avx2, "avx2"},
                                                  {fma, "fma"},
                                                  {avx512f, "avx512f"},
                                                  {avx512dq, "avx512dq"},
                                                  {avx512cd, "avx512cd"},
                                                  {avx512bw, "avx512bw"},
                                                  {avx512vl, "avx512vl"},
                                                  {avx512_bf16, "avx512_bf16"},
                                                  {avx512_fp16, "avx512_fp16"},
                                                  {amx_tile, "amx_tile"},
                                                  {amx_bf16, "amx_bf16"}};
    for (const auto& [on, name] : flags)
        if (on) s += (s.empty() ? "" : " ") + std::string(name);
    std::string os;
    for (const auto& [on, name] :
         {std::pair<bool, const char*>{os_avx, "AVX"}, {os_avx512, "AVX-512"}, {os_amx, "AMX"}})
        if (on) os += (os.empty() ? "" : ", ") + std::string(name);
    return (s.empty() ? "none" : s) + "; OS enables " +
           (os.empty() ? "none of AVX/AVX-512/AMX" : os);
}

CpuFeatures cpu_features() {
    CpuFeatures f;
#ifdef ATTNSPEC_HAVE_CPUID
    unsigned a = 0, b = 0, c = 0, d = 0;
    const auto max_leaf = static_cast<unsigned>(__get_cpuid_max(0, &b));
    if (max_leaf < 1) return f;
    f.x86 = true;
    __get_cpuid(0, &a, &b, &c, &d);
    f.amd = b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u;  // "AuthenticAMD"
    f.model = brand_string();
    __get_cpuid(1, &a, &b, &c, &d);
    f.sse3 = c & (1u << 0), f.ssse3 = c & (1u << 9), f.sse42 = c & (1u << 20);
    f.fma = c & (1u << 12), f.avx = c & (1u << 28);
    const bool osxsave = c & (1u << 27);
    const unsigned long long x = osxsave ? xcr0() : 0;
    f.os_avx = (x & 0x6) == 0x6;
    f.os_avx512 = f.os_avx && (x & 0xe0) == 0xe0;
    f.os_amx = (x & 0x60000) == 0x60000;
    if (max_leaf >= 7) {
        __cpuid_count(7, 0, a, b, c, d);
        f.avx2 = b & (1u << 5), f.avx512f = b & (1u << 16), f.avx512dq = b & (1u << 17);
        f.avx512cd = b & (1u << 28), f.avx512bw = b & (1u << 30), f.avx512vl = b & (1u << 31);
        f.amx_bf16 = d & (1u << 22), f.avx512_fp16 = d & (1u << 23), f.amx_tile = d & (1u << 24);
        const unsigned sub = a;
        if (sub >= 1) {
            __cpuid_count(7, 1, a, b, c, d);
            f.avx512_bf16 = a & (1u << 5);
        }
    }
#endif
    return f;
}

const std::vector<std::string>& openblas_core_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const auto& c : kCores) v.emplace_back(c.name);
        return v;
    }();
    return names;
}

std::string canonical_core_name(const std::string& name) {
    const CoreSpec* c = find_core(name);
    return c ? c->name : "";
}

int core_rank(const std::string& core) {
    const CoreSpec* c = find_core(core);
    return c ? c->rank : -1;
}

std::string core_missing(const std::string& core, const CpuFeatures& f) {
    const CoreSpec* c = find_core(core);
    if (!c || c->rank < 0) return "";
    if (!f.x86) return "an x86-64 CPU";
    return missing(c->need, f);
}

bool core_runs_on(const std::string& core, const CpuFeatures& f) {
    return core_missing(core, f).empty();
}

std::string best_core_for(const CpuFeatures& f, const std::vector<std::string>& offered) {
    if (!f.x86) return "";
    const char* order[] = {"SapphireRapids",
                           "Cooperlake",
                           "SkylakeX",
                           f.amd ? "Zen" : "Haswell",
                           f.amd ? "Haswell" : "Zen",
                           "Sandybridge",
                           "Nehalem",
                           "Core2",
                           "Prescott"};
    for (const char* c : order) {
        const bool has = std::any_of(offered.begin(), offered.end(), [&](const std::string& o) {
            return canonical_core_name(o) == c;
        });
        if (has && core_runs_on(c, f)) return c;
    }
    return "";
}

bool should_replace_core(const std::string& loaded, const std::string& best) {
    return core_rank(loaded) >= 0 && core_rank(best) > core_rank(loaded);
}

BlasCoreOverride parse_blas_core_override(const char* value) {
    BlasCoreOverride o;
    const std::string v = value ? value : "";
    std::string lower;
    for (char ch : v) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (lower.empty() || lower == "auto") return o;
    if (lower == "off") {
        o.mode = BlasCoreMode::Off;
        return o;
    }
    o.core = canonical_core_name(v);
    if (o.core.empty()) {
        std::string list;
        for (const auto& n : openblas_core_names()) list += (list.empty() ? "" : ", ") + n;
        fail_usage("ATTNSPEC_BLAS_CORE = '" + v +
                   "' is neither auto, off nor an OpenBLAS core type (" + list + ")");
    }
    o.mode = BlasCoreMode::Force;
    return o;
}

}  // namespace attnspec
