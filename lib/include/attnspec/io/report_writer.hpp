// The atomic report writer: temp file beside the target -> close -> fsync -> reopen and validate ->
// rename -> fsync(dir); on any error or signal the temp is removed. The root carries the
// provenance (io/provenance.hpp). Layout: reports/SCHEMA.md. CPU only.
#pragma once
#include <memory>
#include <string>

#include "attnspec/io/h5.hpp"
#include "attnspec/io/provenance.hpp"

namespace attnspec {

class ReportWriter {
  public:
    // Creates "<dir>/.<name>.tmp.<pid>" beside `target`. Throws Error(CantCreate) when the
    // directory does not exist or is not writable.
    ReportWriter(const std::string& target, const Provenance& prov);
    ~ReportWriter();  // removes the temp file unless commit() succeeded
    ReportWriter(const ReportWriter&) = delete;
    ReportWriter& operator=(const ReportWriter&) = delete;
    H5Group& root() { return *root_; }
    void commit();  // close, fsync, reopen + validate, rename, fsync dir
    const std::string& target() const { return target_; }

  private:
    std::string target_, temp_;
    H5Id file_;
    std::unique_ptr<H5Group> root_;
    int temp_slot_ = -1;  // registration for signal cleanup (one per writer)
    bool committed_ = false;
};

// Remove any registered temp files and re-raise (installed by the CLI for SIGINT/SIGTERM/SIGHUP).
void install_cleanup_signal_handlers();

}  // namespace attnspec
