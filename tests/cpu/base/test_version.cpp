// The generated attnspec/version.hpp (cmake/version.hpp.in) and the provenance that reports it.
#include <string>

#include "attnspec/io/provenance.hpp"
#include "attnspec/version.hpp"
#include "test_support.hpp"

namespace {
std::string lookup(const std::vector<std::pair<std::string, std::string>>& v,
                   const std::string& key) {
    for (const auto& kv : v)
        if (kv.first == key) return kv.second;
    return "<missing>";
}
}  // namespace

TEST_CASE("version.hpp: the version string is major.minor.patch", "[version]") {
    const std::string joined = std::to_string(ATTNSPEC_VERSION_MAJOR) + "." +
                               std::to_string(ATTNSPEC_VERSION_MINOR) + "." +
                               std::to_string(ATTNSPEC_VERSION_PATCH);
    CHECK(std::string(ATTNSPEC_VERSION) == joined);
    CHECK_FALSE(std::string(ATTNSPEC_CXX_COMPILER).empty());
}

TEST_CASE("provenance reports the version, compiler and build type of version.hpp", "[version]") {
    const auto v = attnspec::build_versions();
    CHECK(lookup(v, "tool_version") == ATTNSPEC_VERSION);
    CHECK(lookup(v, "compiler") == ATTNSPEC_CXX_COMPILER);
    CHECK(lookup(v, "build_type") == ATTNSPEC_BUILD_TYPE);
}
