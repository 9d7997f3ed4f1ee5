// gpu/base/backend.hpp, host side: dlopen of libattnspec_gpu.so, entry and ABI checks. Host-only
// (no CUDA header), linked into the CLI in every build.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>

#include "attnspec/base/errors.hpp"
#include "attnspec/gpu/base/backend.hpp"
#include "attnspec/version.hpp"

namespace attnspec::gpu {

bool backend_built() {
#if defined(ATTNSPEC_HAVE_CUDA) && ATTNSPEC_HAVE_CUDA
    return true;
#else
    return false;
#endif
}

namespace {

// Whether the library itself is absent (not a library it needs): a path is looked up in the
// file system; a bare name is searched by dlopen, whose message then starts with that name
// ("libattnspec_gpu.so: cannot open shared object file"; a missing dependency names itself).
bool library_absent(const std::string& path, const std::string& dl_error) {
    if (path.find('/') != std::string::npos) return ::access(path.c_str(), F_OK) != 0;
    return dl_error.rfind(path + ": cannot open shared object file", 0) == 0;
}

}  // namespace

const Backend& load_backend_from(const std::string& path) {
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* e = dlerror();
        const std::string why = e ? e : "unknown dlopen error";
        if (library_absent(path, why))
            throw Error(ExitCode::NoDevice, "cannot load " + path + ": " + why);
        throw Error(ExitCode::BackendLoad,
                    "GPU backend failed to load: " + path + " is there, but dlopen fails: " + why);
    }
    using Entry = const Backend* (*)(int);
    const auto entry = reinterpret_cast<Entry>(dlsym(lib, kBackendEntry));
    if (!entry) {
        dlclose(lib);
        throw Error(ExitCode::BackendLoad, path + ": no " + std::string(kBackendEntry) +
                                               " entry (not an attnspec GPU backend)");
    }
    const Backend* b = entry(kBackendAbi);
    if (!b || b->abi != kBackendAbi || std::string(b->version) != ATTNSPEC_VERSION ||
        !b->device_info || !b->run_gpu_check) {
        const std::string theirs =
            b ? "ABI " + std::to_string(b->abi) + ", attnspec " + b->version : "another ABI";
        dlclose(lib);
        throw Error(ExitCode::BackendLoad,
                    path + ": backend " + theirs + ", this attnspec needs ABI " +
                        std::to_string(kBackendAbi) + ", attnspec " + ATTNSPEC_VERSION +
                        " (a library from another build)");
    }
    return *b;  // the library stays loaded for the life of the process
}

const Backend& load_backend() {
    if (!backend_built())
        throw Error(ExitCode::NoDevice,
                    "GPU backend not built (ATTNSPEC_CUDA=OFF; rebuild with -DATTNSPEC_CUDA=ON)");
    static std::mutex m;
    static const Backend* loaded = nullptr;
    const std::lock_guard<std::mutex> lock(m);
    if (!loaded) {
        const char* env = std::getenv("ATTNSPEC_GPU_BACKEND");
        loaded = &load_backend_from(env && *env ? env : kBackendLibrary);
    }
    return *loaded;
}

void check_backend_call(int code, const std::string& error) {
    if (code != 0) throw Error(static_cast<ExitCode>(code), error);
}

}  // namespace attnspec::gpu
