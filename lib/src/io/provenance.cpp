// Provenance of a report (io/provenance.hpp).
#include "attnspec/io/provenance.hpp"

#include <Spectra/Util/Version.h>
#include <dlfcn.h>
#include <hdf5.h>
#include <unistd.h>

#include <Eigen/Core>
#include <ctime>

#include "attnspec/version.hpp"
#include "git_info.hpp"

namespace attnspec {

// ---------------------------------------------------------------- provenance
namespace {
// The BLAS actually loaded: OpenBLAS announces itself through openblas_get_config.
std::string blas_name() {
    using Fn = char* (*)();
    if (auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) {
        const std::string c = fn();
        return c.rfind("OpenBLAS", 0) == 0 ? c : "OpenBLAS " + c;
    }
    return "reference BLAS/LAPACK (or another implementation without openblas_get_config)";
}
}  // namespace

std::vector<std::pair<std::string, std::string>> build_versions() {
    unsigned maj = 0, min = 0, rel = 0;
    H5get_libversion(&maj, &min, &rel);
    std::vector<std::pair<std::string, std::string>> v = {
        {"tool_version", ATTNSPEC_VERSION},
        {"git_sha", ATTNSPEC_GIT_SHA},
        {"git_dirty", ATTNSPEC_GIT_DIRTY},
        {"compiler", ATTNSPEC_CXX_COMPILER},
        {"build_type", ATTNSPEC_BUILD_TYPE},
        {"eigen_version", std::to_string(EIGEN_WORLD_VERSION) + "." +
                              std::to_string(EIGEN_MAJOR_VERSION) + "." +
                              std::to_string(EIGEN_MINOR_VERSION)},
        {"spectra_version", std::to_string(SPECTRA_MAJOR_VERSION) + "." +
                                std::to_string(SPECTRA_MINOR_VERSION) + "." +
                                std::to_string(SPECTRA_PATCH_VERSION)},
        {"hdf5_version",
         std::to_string(maj) + "." + std::to_string(min) + "." + std::to_string(rel)},
        {"blas", blas_name()},
    };
    return v;
}

std::string utc_now_iso8601() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string host_name() {
    char buf[256] = {0};
    if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
    return buf;
}

std::string statements_note() {
    return "reconstructed from summaries of the papers, not their full texts; see "
           "docs/SOURCES.md";
}

}  // namespace attnspec
