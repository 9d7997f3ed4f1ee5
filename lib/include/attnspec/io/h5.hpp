// RAII over the HDF5 C API (1.10): owning ids, a group being written (row-major datasets whose
// shapes read naturally in h5py: an Eigen N x D matrix is stored as shape (N, D); variable-length
// UTF-8 string attributes; no object timestamps; chunk + shuffle + deflate for large arrays) and a
// read-only reader for inputs and reports. The only public header of the library that includes
// <hdf5.h>; numerical headers never do. CPU only.
#pragma once
#include <hdf5.h>

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace attnspec {

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
    // Shape (rows, cols); datasets of 2^16 elements or more are chunked and deflated unless
    // `compress` is false (contiguous: fast for hundreds of MB that barely compress).
    void write(const std::string& name, const Eigen::MatrixXd& m, bool compress = true);
    void write(const std::string& name, const std::vector<double>& v);
    void write(const std::string& name, const std::vector<std::int64_t>& v);
    void write(const std::string& name, const std::vector<std::string>& v);
    hid_t id() const { return id_.get(); }

  private:
    void write_numeric(const std::string& name, hid_t mem_type, hid_t file_type, int rank,
                       const hsize_t* dims, const void* data, bool compress = true);
    H5Id id_;
};

// One line of H5Reader::tree(): a link below the root, depth-first in file order.
struct H5TreeEntry {
    enum Kind { Group, Dataset, Repeat, External, TooDeep, Other };
    int depth = 0;     // 1 for the root's children
    std::string name;  // link name (TooDeep: empty)
    Kind kind = Other;
    std::vector<hsize_t> dims;  // Dataset: its shape
    std::string first_path;     // Repeat: where the object was listed first
};

// Read-only access to an HDF5 file (inputs and reports). Missing/unreadable file -> NoInput;
// not HDF5 or malformed -> DataError; missing dataset -> DataError naming it. Hostile files are
// refused with DataError naming the file and object, before anything is allocated: attributes
// that hold more than one value where one is read, links to other files (external links, objects
// reached in another file), datasets stored outside the file (external raw storage, virtual
// datasets), datasets whose declared size exceeds memory_limit_bytes() (base/memory.hpp), counted
// with every copy a read makes, and datasets that declare far more data than the file stores
// for them (unwritten storage, which HDF5 would hand back as fill values).
class H5Reader {
  public:
    explicit H5Reader(const std::string& path);
    bool exists(const std::string& path) const;  // link exists (any depth)
    bool is_group(const std::string& path) const;
    std::vector<std::string> children(const std::string& group) const;
    std::vector<std::string> attr_names(const std::string& obj) const;
    std::string attr_string(const std::string& obj, const std::string& name) const;
    double attr_double(const std::string& obj, const std::string& name) const;
    // A count stored as a number (float or integer attribute): refuses NaN, Inf, a negative or
    // fractional value and anything above 2^53 with DataError naming the attribute.
    long attr_count(const std::string& obj, const std::string& name) const;
    // The same check for a value already read from `what` (a dataset row, say).
    long count_value(double v, const std::string& what) const;
    bool has_attr(const std::string& obj, const std::string& name) const;
    std::string attr_as_text(const std::string& obj, const std::string& name) const;
    std::vector<hsize_t> shape(const std::string& dataset) const;
    // Reads a rank-2 (or rank-1 as a column) numeric dataset (float or integer, as in reports);
    // rejects NaN/Inf unless allowed. Refuses a declared size above memory_limit_bytes().
    Eigen::MatrixXd matrix(const std::string& dataset, bool allow_nonfinite = false) const;
    // An input array: like matrix(), but only float32 or float64 is accepted (converted to
    // double); any other stored type is refused with DataError naming the dtype and dataset.
    Eigen::MatrixXd input_matrix(const std::string& dataset) const;
    std::vector<double> vector(const std::string& dataset) const;
    // A numeric dataset of any rank (1 to 8) as row-major doubles, its shape into `dims`; NaN/Inf
    // refused unless allowed. The same hostile-file checks as matrix().
    std::vector<double> array(const std::string& dataset, std::vector<hsize_t>& dims,
                              bool allow_nonfinite = false) const;
    std::vector<std::string> strings(const std::string& dataset) const;
    // "float64", "float32", "int32", "uint8", "string", ... the stored type of a dataset.
    std::string dtype(const std::string& dataset) const;
    // 8 bytes per declared element of `dataset` (in double: cannot overflow); reads no data.
    double declared_bytes(const std::string& dataset) const;
    // Refuses (DataError, parameter "max_bytes") when `bytes` exceeds memory_limit_bytes(); `what`
    // names what would be read ("reading /X (1000000000 x 4)").
    void check_fits(double bytes, const std::string& what) const;
    // The tree below the root, each object once (a later hard link to an object already listed is
    // a Repeat entry: no cycle is followed), at most `max_depth` levels (deeper: one TooDeep
    // entry per cut group). O(links) time.
    std::vector<H5TreeEntry> tree(int max_depth) const;
    const std::string& path() const { return path_; }

  private:
    H5Id open_attr(const std::string& obj, const std::string& name) const;
    H5Id open_dataset(const std::string& dataset) const;
    Eigen::MatrixXd read_numeric(const std::string& dataset, bool allow_nonfinite,
                                 bool float_only) const;
    void read_doubles(const std::string& dataset, bool float_only, std::vector<hsize_t>& dims,
                      const std::function<double*(std::size_t, std::size_t)>& out,
                      double copies) const;
    void check_stored(hid_t d, double raw, const std::string& dataset,
                      const std::string& dims) const;
    void check_local(hid_t obj, const std::string& what) const;
    void check_links(const std::string& path) const;
    std::string path_;
    H5Id file_;
    unsigned long fileno_ = 0;
};

}  // namespace attnspec
