// The atomic report writer and the output-path rules every command follows (reports/SCHEMA.md,
// its opening paragraph). A report is built in memory (HDF5 core driver) and written at
// commit() to a temp file beside the target, created with O_EXCL under an unpredictable name
// ".<name>.tmp.<pid>.<random>" (never through a planted link), then fsync -> reopen and validate
// -> rename -> fsync(dir). On any error or signal the temp is removed and the previous file at the
// target survives. Temps of the same target left by dead processes (SIGKILL) are removed when a
// writer opens; a live run's temps are never touched. CPU only.
#pragma once
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "attnspec/io/h5.hpp"
#include "attnspec/io/provenance.hpp"

namespace attnspec {

class ReportWriter {
  public:
    // Checks the target (check_output_target), removes stale temps of dead processes and
    // creates the temp. Throws Error(CantCreate) naming the cause (missing directory, read-only
    // file system, special file, ...).
    ReportWriter(const std::string& target, const Provenance& prov);
    ~ReportWriter();  // removes the temp file (and staging directory) unless commit() succeeded
    ReportWriter(const ReportWriter&) = delete;
    ReportWriter& operator=(const ReportWriter&) = delete;
    H5Group& root() { return *root_; }
    // Writes the image to the temp, fsync, reopen + validate, then (under a lock on the target
    // directory, so concurrent runs never mix a report with another run's companion directory)
    // swaps the companion directory in and renames the report into place. Errors: IoError (74)
    // for a failed write (out of space, file too large), CantCreate (73) for a failed rename.
    void commit();
    const std::string& target() const { return target_; }

    // The companion directory "<target without .h5>.counterexamples" that belongs to this report:
    // files written into companion_staging() (a temp directory ".<stem>.counterexamples.tmp.
    // <pid>.<random>" created on the first call) replace the companion directory at commit();
    // when the staging directory stays empty, an older companion directory is removed. Without
    // a call to companion_staging(), commit() leaves any companion directory alone.
    std::string companion_dir() const;
    const std::string& companion_staging();

  private:
    std::string target_, temp_, staging_;
    int fd_ = -1;  // the O_EXCL temp file, written at commit()
    H5Id file_;    // the in-memory HDF5 file
    std::unique_ptr<H5Group> root_;
    int temp_slot_ = -1, staging_slot_ = -1;  // registrations for signal cleanup
    bool committed_ = false;
};

// Before any work: refuses an output that cannot be a report target. Exit 73 when `target`
// exists and is not a regular file (device node, FIFO, directory, socket), or when no file can
// be created in its directory (probe: an O_EXCL temp created and removed; the cause is named).
// Exit 64 when `target` is the same file as one of `inputs` (device + inode; the resolved path
// where one does not exist yet). "" (no report) passes.
// 73 (CantCreate) when `target` is PATH_MAX bytes or longer or one of its names is longer than
// NAME_MAX: checked before any work (the final rename would fail after it). Also part of
// check_output_target. O(length).
void check_output_name(const std::string& target);
void check_output_target(const std::string& target, const std::vector<std::string>& inputs = {});

// Writes `text` to `path` with the rules of ReportWriter (check_output_target, O_EXCL temp,
// write, fsync, rename). Errors: CantCreate / IoError naming the cause.
void write_text_file_atomically(const std::string& path, const std::string& text);

// Removes "<dir>/.<name>.tmp.<pid>[.<random>]" files (and companion staging directories of
// `target`) whose pid is not a running process. Returns how many were removed.
int remove_stale_temps(const std::string& target);

// ".<name>.tmp.": the prefix of the temps made beside a file or directory named `name` (then
// "<pid>.<random>", at most 27 bytes). A name too long for the whole to fit in NAME_MAX is cut
// and followed by "~<16 hex digits of its hash>", the same for every run on that name.
std::string temp_name_prefix(const std::string& name);

// Signal cleanup beyond single files: a directory tree being built (removed whole on SIGINT,
// SIGTERM, SIGHUP; returns a slot, -1 when all are taken) and a child process group (killed
// with SIGKILL first; 0: none).
int register_temp_tree(const std::string& dir);
void unregister_temp_tree(int slot);
void set_signal_cleanup_child(pid_t group);

// Remove any registered temp files and re-raise (installed by the CLI for SIGINT/SIGTERM/SIGHUP).
void install_cleanup_signal_handlers();

}  // namespace attnspec
