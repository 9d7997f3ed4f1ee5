// The BLAS that runs, its core type and threads (base/blas_runtime.hpp). The choice of core:
// base/blas_cores.hpp; here the environment, the re-execution and what blas_info() reports.
#include "attnspec/base/blas_runtime.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include "attnspec/base/blas_cores.hpp"
#include "attnspec/base/errors.hpp"

namespace attnspec {
namespace {
// OpenBLAS's controls, looked up at run time: attnspec also links with other BLAS libraries.
template <class F>
F blas_symbol(const char* name) {
    return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}
using Str = char* (*)();

// Set by select_blas_kernels for the re-executed process: "<pid>:<auto|force>:<asked>:<detected>".
// The pid survives execv, so only the re-executed process itself takes it as its own (a child it
// starts has another pid, and the variable is removed before main goes on anyway).
constexpr const char* kGuard = "ATTNSPEC_BLAS_REEXEC";
constexpr const char* kCoreType = "OPENBLAS_CORETYPE";
constexpr const char* kOverride = "ATTNSPEC_BLAS_CORE";

struct Selection {
    bool called = false;
    std::string reason, detected, best;
};
Selection& selection() {
    static Selection s;
    return s;
}

std::string loaded_core() {
    auto fn = blas_symbol<Str>("openblas_get_corename");
    return fn ? fn() : "";
}

// The ladder cores this OpenBLAS build carries (it exports gotoblas_<CORE> for each).
std::vector<std::string> offered_cores() {
    std::vector<std::string> v;
    for (const auto& name : openblas_core_names()) {
        if (core_rank(name) < 0) continue;
        std::string sym = "gotoblas_";
        for (char ch : name) sym += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        if (blas_symbol<void*>(sym.c_str())) v.push_back(name);
    }
    return v;
}

bool same_core(const std::string& a, const std::string& b) {
    return !a.empty() && canonical_core_name(a) == canonical_core_name(b);
}

// The re-executed process: was the asked core loaded? Restores the user's environment.
void finish_reexec(const std::string& guard, const std::string& loaded, Selection& s) {
    std::vector<std::string> part;
    size_t at = 0;
    for (size_t next; (next = guard.find(':', at)) != std::string::npos; at = next + 1)
        part.push_back(guard.substr(at, next - at));
    part.push_back(guard.substr(at));
    unsetenv(kGuard);
    unsetenv(kCoreType);
    if (part.size() != 4) {
        s.reason = "OpenBLAS's choice (attnspec's re-execution left an unreadable marker)";
        return;
    }
    const std::string &mode = part[1], &asked = part[2];
    s.detected = part[3];
    if (!same_core(loaded, asked)) {
        s.reason = "asked OpenBLAS for " + asked + " (OPENBLAS_CORETYPE) but it loaded " + loaded;
        std::cerr << "attnspec: warning: " << s.reason << "\n";
    } else if (mode == "force") {
        s.reason =
            "forced by ATTNSPEC_BLAS_CORE=" + asked + " (OpenBLAS alone loaded " + s.detected + ")";
    } else {
        s.reason = "chosen by attnspec from the CPU's features (OpenBLAS alone loaded " +
                   s.detected + ", a weaker core: it does not recognise this CPU)";
    }
}

// Sets OPENBLAS_CORETYPE and re-executes; returns only when execv failed.
void reexec_with(const std::string& core, bool forced, const std::string& loaded, char** argv,
                 Selection& s) {
    const std::string guard =
        std::to_string(getpid()) + ":" + (forced ? "force" : "auto") + ":" + core + ":" + loaded;
    setenv(kCoreType, core.c_str(), 1);
    setenv(kGuard, guard.c_str(), 1);
    std::cout.flush();
    std::cerr.flush();
    execv("/proc/self/exe", argv);
    const int err = errno;
    unsetenv(kGuard);
    unsetenv(kCoreType);
    s.reason = "OpenBLAS's choice: re-executing with OPENBLAS_CORETYPE=" + core + " failed (" +
               std::strerror(err) + ")";
}

// A forced core must run on this CPU and exist in this OpenBLAS build; Error(Usage) otherwise.
void check_forced_core(const std::string& core, const CpuFeatures& f) {
    const std::string lack = core_missing(core, f);
    if (!lack.empty())
        fail_usage("ATTNSPEC_BLAS_CORE = " + core + ": its kernels need " + lack +
                   ", which this CPU or OS lacks (use auto, off or a smaller core)");
    const auto offered = offered_cores();
    if (core_rank(core) >= 0 && std::find(offered.begin(), offered.end(), core) == offered.end())
        fail_usage("ATTNSPEC_BLAS_CORE = " + core + ": this OpenBLAS build has no " + core +
                   " kernels (use auto, off or a core it has)");
}

// The decision for a process that was not re-executed by attnspec.
void decide(const BlasCoreOverride& o, const std::string& loaded, char** argv, Selection& s) {
    const CpuFeatures f = cpu_features();
    s.detected = loaded;
    if (o.mode == BlasCoreMode::Off) {
        s.reason = "detected by OpenBLAS, kept: ATTNSPEC_BLAS_CORE=off";
        return;
    }
    const bool forced = o.mode == BlasCoreMode::Force;
    if (forced) check_forced_core(o.core, f);
    const std::string target = forced ? o.core : s.best;
    if (same_core(loaded, target)) {
        s.reason = forced ? "forced by ATTNSPEC_BLAS_CORE=" + target + " (OpenBLAS chose it too)"
                          : "detected by OpenBLAS (the best core of this build for the CPU)";
        return;
    }
    if (!forced && !should_replace_core(loaded, target)) {
        s.reason = "detected by OpenBLAS";
        return;
    }
    std::string config;
    if (auto cfg = blas_symbol<Str>("openblas_get_config")) config = cfg();
    if (config.find("DYNAMIC_ARCH") == std::string::npos) {
        s.reason = "detected by OpenBLAS (built for one core, no DYNAMIC_ARCH: it cannot load " +
                   target + ")";
        return;
    }
    reexec_with(target, forced, loaded, argv, s);
}
}  // namespace

std::string blas_override_help() {
    return "ATTNSPEC_BLAS_CORE=off keeps OpenBLAS's own choice, ATTNSPEC_BLAS_CORE=<core> (e.g. "
           "Haswell) forces one; OPENBLAS_CORETYPE=<core> goes to OpenBLAS as is and wins";
}

BlasInfo blas_info() {
    BlasInfo info;
    if (auto cfg = blas_symbol<Str>("openblas_get_config")) info.library = cfg();
    if (info.library.empty()) info.library = "unknown BLAS";
    info.core = loaded_core();
    const Selection& s = selection();
    const CpuFeatures f = cpu_features();
    info.cpu = (f.model.empty() ? std::string("unknown model") : f.model) + "; " + f.summary();
    info.threads = blas_threads();
    info.detected = s.detected;
    info.best = s.called ? s.best : best_core_for(f, offered_cores());
    if (info.core.empty())
        info.reason = "not OpenBLAS: attnspec leaves the kernel choice to the library";
    else if (s.called || !s.reason.empty())
        info.reason = s.reason;
    else
        info.reason = "OpenBLAS's choice (this program does not call select_blas_kernels)";
    return info;
}

std::string requested_blas_core(const char* value) {
    const BlasCoreOverride o = parse_blas_core_override(value);
    if (o.mode == BlasCoreMode::Off || loaded_core().empty()) return "";
    const CpuFeatures f = cpu_features();
    if (o.mode == BlasCoreMode::Auto) return best_core_for(f, offered_cores());
    check_forced_core(o.core, f);
    return o.core;
}

void set_blas_core_reason(const std::string& reason) {
    Selection& s = selection();
    if (!s.called) s.reason = reason;
}

void select_blas_kernels(int /*argc*/, char** argv) {
    Selection& s = selection();
    if (s.called) return;
    s.called = true;
    const std::string loaded = loaded_core();
    if (loaded.empty()) return;  // not OpenBLAS
    s.best = best_core_for(cpu_features(), offered_cores());
    const char* guard = std::getenv(kGuard);
    if (guard && std::strtol(guard, nullptr, 10) == static_cast<long>(getpid())) {
        finish_reexec(guard, loaded, s);
        return;
    }
    unsetenv(kGuard);  // a stale marker (another process's): never ours
    try {
        const BlasCoreOverride o = parse_blas_core_override(std::getenv(kOverride));
        if (const char* user = std::getenv(kCoreType)) {
            s.reason = std::string("set by the user: OPENBLAS_CORETYPE=") + user;
            return;
        }
        decide(o, loaded, argv, s);
    } catch (const Error& e) {
        std::cerr << "attnspec: error: " << e.what() << "\n";
        std::exit(static_cast<int>(e.code()));
    }
}

int blas_threads() {
    using Get = int (*)();
    auto get = blas_symbol<Get>("openblas_get_num_threads");
    return get ? get() : 1;
}

void set_blas_threads(int n) {
    using Set = void (*)(int);
    if (n <= 0) return;
    if (auto set = blas_symbol<Set>("openblas_set_num_threads")) set(n);
}

}  // namespace attnspec
