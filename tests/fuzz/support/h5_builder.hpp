// Structure-aware HDF5 for the fuzz targets: the fuzz input chooses which groups, datasets,
// attributes and links a *valid* HDF5 file holds, with which dtypes (float64/float32/int/uint8,
// variable and fixed strings, compound), shapes (scalar, null, empty, up to rank 3, huge declared
// shapes with chunked unallocated storage), values (NaN, Inf, subnormal, DBL_MAX, raw bits), and
// links (hard links that form cycles, soft, external, external raw storage). The file is written
// with the HDF5 C API and then handed to an attnspec loader, so the loader, not HDF5's parser,
// meets the hostile structure.
#pragma once
#include <hdf5.h>

#include <string>
#include <vector>

#include "fuzz_support.hpp"

namespace attnspec::fuzz {

// An open HDF5 file (closed by the destructor). `create` truncates.
class H5File {
  public:
    static H5File create(const std::string& path);
    static H5File open_rw(const std::string& path);
    H5File(H5File&& o) noexcept : id_(o.id_) { o.id_ = -1; }
    H5File(const H5File&) = delete;
    H5File& operator=(const H5File&) = delete;
    ~H5File();
    hid_t id() const { return id_; }
    bool ok() const { return id_ >= 0; }

  private:
    explicit H5File(hid_t id) : id_(id) {}
    hid_t id_;
};

// Well-formed pieces (for the base file a target starts from).
void make_group(hid_t file, const std::string& path);
void write_matrix(hid_t file, const std::string& path, hsize_t rows, hsize_t cols, Input& in);
void write_double_attr(hid_t file, const std::string& obj, const std::string& name, double v);
void write_string_attr(hid_t file, const std::string& obj, const std::string& name,
                       const std::string& v);

// Hostile pieces chosen by the input.
void random_dataset(hid_t file, const std::string& path, Input& in);
void random_attr(hid_t file, const std::string& obj, const std::string& name, Input& in);

// Applies up to `max_ops` operations read from `in` to the file: add or replace a dataset or an
// attribute (names from `vocab` and from what the file already holds), delete a link, add a
// group, a hard link (cycles included), a soft link, an external link, a dataset with external
// raw storage. HDF5 failures of an operation are ignored (the file stays valid).
void mutate(hid_t file, Input& in, const std::vector<std::string>& vocab, int max_ops);

}  // namespace attnspec::fuzz
