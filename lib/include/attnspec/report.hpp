// HDF5 reports and inputs: RAII over the HDF5 C API (1.10). Writes row-major datasets whose
// shapes read naturally in h5py (an Eigen N x D matrix is stored as shape (N, D)), variable-length
// UTF-8 string attributes, no object timestamps, chunk + shuffle + deflate for large arrays.
// ReportWriter writes atomically: temp file beside the target -> close -> fsync -> reopen and
// validate -> rename -> fsync(dir); on any error or signal the temp is removed. Layout: reports/SCHEMA.md.
// CPU only.
#pragma once
#include <hdf5.h>

#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attnspec/check.hpp"

namespace attnspec {

inline constexpr const char* kSchemaVersion = "1.0";

// Owning hid_t with the matching close function.
class H5Id {
  public:
    H5Id() = default;
    H5Id(hid_t id, herr_t (*closer)(hid_t)) : id_(id), closer_(closer) {}
    H5Id(H5Id&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = -1; }
    H5Id& operator=(H5Id&& o) noexcept;
    H5Id(const H5Id&) = delete;
    H5Id& operator=(const H5Id&) = delete;
    ~H5Id() { reset(); }
    void reset();
    hid_t get() const { return id_; }
    bool valid() const { return id_ >= 0; }

  private:
    hid_t id_ = -1;
    herr_t (*closer_)(hid_t) = nullptr;
};

// A group being written. Errors throw Error(IoError).
class H5Group {
  public:
    explicit H5Group(H5Id id) : id_(std::move(id)) {}
    H5Group group(const std::string& name);  // create a child group
    void attr(const std::string& name, const std::string& value);
    void attr(const std::string& name, const char* value) { attr(name, std::string(value)); }
    void attr(const std::string& name, double value);
    void attr(const std::string& name, std::int64_t value);
    void attr(const std::string& name, int value) { attr(name, static_cast<std::int64_t>(value)); }
    void write(const std::string& name, const Eigen::MatrixXd& m);  // shape (rows, cols)
    void write(const std::string& name, const std::vector<double>& v);
    void write(const std::string& name, const std::vector<std::int64_t>& v);
    void write(const std::string& name, const std::vector<std::string>& v);
    hid_t id() const { return id_.get(); }

  private:
    void write_numeric(const std::string& name, hid_t mem_type, hid_t file_type, int rank,
                       const hsize_t* dims, const void* data);
    H5Id id_;
};

struct Provenance {
    std::string command_line;
    std::uint64_t seed = 0;
    std::vector<std::pair<std::string, std::string>> extra;  // e.g. cuda, math mode
};

// Library and build versions (Eigen, Spectra, HDF5, BLAS, compiler, git): name -> value.
std::vector<std::pair<std::string, std::string>> build_versions();
std::string utc_now_iso8601();
std::string host_name();

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

// Write one check run as a group (layout in reports/SCHEMA.md).
void write_check_run(H5Group& parent, const CheckRun& run);
void write_check_result(H5Group& g, const CheckResult& r);

// A replayable instance file: root attributes kind = "attnspec-instance" and check, plus one
// record (write_check_result) in the group /record, written atomically. `attnspec verify CHECK --instance F` replays it.
void write_instance_file(const std::string& path, const CheckResult& r, const Provenance& prov);

// Read-only access to an HDF5 file (inputs and reports). Missing/unreadable file -> NoInput;
// not HDF5 or malformed -> DataError; missing dataset -> DataError naming it.
class H5Reader {
  public:
    explicit H5Reader(const std::string& path);
    bool exists(const std::string& path) const;  // link exists (any depth)
    bool is_group(const std::string& path) const;
    std::vector<std::string> children(const std::string& group) const;
    std::vector<std::string> attr_names(const std::string& obj) const;
    std::string attr_string(const std::string& obj, const std::string& name) const;
    double attr_double(const std::string& obj, const std::string& name) const;
    bool has_attr(const std::string& obj, const std::string& name) const;
    std::string attr_as_text(const std::string& obj, const std::string& name) const;
    std::vector<hsize_t> shape(const std::string& dataset) const;
    // Reads a rank-2 (or rank-1 as a column) numeric dataset; rejects NaN/Inf unless allowed.
    Eigen::MatrixXd matrix(const std::string& dataset, bool allow_nonfinite = false) const;
    std::vector<double> vector(const std::string& dataset) const;
    std::vector<std::string> strings(const std::string& dataset) const;
    const std::string& path() const { return path_; }

  private:
    std::string path_;
    H5Id file_;
};

// Remove any registered temp files and re-raise (installed by the CLI for SIGINT/SIGTERM/SIGHUP).
void install_cleanup_signal_handlers();

}  // namespace attnspec
