// Provenance written at the root of every report: schema version, tool and library versions (Eigen,
// Spectra, HDF5, the BLAS actually loaded, compiler, git sha and dirty flag), command line, UTC
// time, host and seed. Layout: reports/SCHEMA.md. CPU only.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attnspec {

inline constexpr const char* kSchemaVersion = "1.0";

struct Provenance {
    std::string command_line;
    std::uint64_t seed = 0;
    std::vector<std::pair<std::string, std::string>> extra;  // e.g. cuda, math mode
};

// Library and build versions (Eigen, Spectra, HDF5, BLAS, compiler, git): name -> value.
std::vector<std::pair<std::string, std::string>> build_versions();
std::string utc_now_iso8601();
std::string host_name();
// Root attribute "statements" of verify reports and instance files: every statement checked is
// reconstructed from summaries of the papers (docs/SOURCES.md).
std::string statements_note();

}  // namespace attnspec
