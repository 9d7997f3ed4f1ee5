// Readers for the tensor containers a user's checkpoint comes in: safetensors (an 8-byte
// little-endian header length, a JSON header {name: {dtype, shape, data_offsets}}, raw
// little-endian data) and NumPy .npz (a zip of .npy members, stored or deflate-compressed; .npy
// format versions 1, 2 and 3). Hostile-input parsers: every declared length, offset and shape is
// checked against the file and against memory_limit_bytes() (base/memory.hpp) before anything is
// allocated; a malformed container is refused with DataError (65) naming the file and the entry;
// a missing file is NoInput (66). CPU only.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attnspec {

// A tensor read as float64, row-major (C order) whatever its stored order.
struct Tensor {
    std::vector<std::int64_t> shape;
    std::vector<double> values;
    std::string dtype;  // as stored: "F32", "BF16", "<f8", ...
    // Rank 2 -> shape[0] x shape[1]; rank 1 -> a column. DataError naming `what` otherwise.
    Eigen::MatrixXd matrix(const std::string& what) const;
};

// One entry of a container, as its index declares it (nothing read yet).
struct TensorEntry {
    std::string name;   // safetensors: the key; npz: the member name without ".npy"
    std::string dtype;  // safetensors dtype; npz: "" until read (the .npy header is inside)
    std::vector<std::int64_t> shape;  // safetensors only; npz: empty until read
    std::uint64_t max_elements = 0;   // upper bound on the elements (exact for safetensors)
};

class TensorFile {
  public:
    virtual ~TensorFile() = default;
    virtual const std::vector<TensorEntry>& entries() const = 0;
    // Reads one entry as float64 (exact for F16, BF16, F32, F64 and <f4, <f8). Refuses other
    // dtypes, non-finite values, and a size above memory_limit_bytes() before reading.
    virtual Tensor read(const std::string& name) const = 0;
    virtual std::string format() const = 0;  // "safetensors" or "npz"
    // The shape an entry declares, read from its header alone (safetensors: the index; npz: the
    // .npy header at the start of the member, at most 64 KiB read or inflated), so that a
    // caller can refuse a wrong shape before the data are read. Errors as read().
    virtual std::vector<std::int64_t> declared_shape(const std::string& name) const;
    const std::string& path() const { return path_; }
    // From now on read() keeps NaN and infinity instead of refusing them (npz: the output of a
    // kernel under test, where they are findings, not bad data).
    void keep_nonfinite(bool on) { keep_nonfinite_ = on; }

  protected:
    explicit TensorFile(std::string path) : path_(std::move(path)) {}
    std::string path_;
    bool keep_nonfinite_ = false;
};

std::unique_ptr<TensorFile> open_safetensors(const std::string& path);
std::unique_ptr<TensorFile> open_npz(const std::string& path);
// The text of the 0-d byte-string member `name` of the .npz at `path` (as write_npz's `texts`
// or numpy.savez of a numpy.bytes_ write it; trailing NULs dropped); "" when there is no such
// member. DataError when it is not a 0-d '|S<n>' array or holds more than 16 MiB. O(member).
std::string read_npz_text(const std::string& path, const std::string& name);
// By content: a zip signature -> npz; otherwise safetensors. NoInput (66) when unreadable.
std::unique_ptr<TensorFile> open_tensor_file(const std::string& path);

// Decodes one .npy image (the bytes of a .npy file); `what` names it in errors. dtypes '<f8',
// '<f4' and '<f2' (IEEE binary16). NaN/Inf refused unless `keep_nonfinite`.
Tensor parse_npy(const std::string& bytes, const std::string& what, bool keep_nonfinite = false);

// One array to write: row-major float64 values stored as '<f8', or as '<f4' when `f32` (each
// value rounded to float32 once).
struct NpyArray {
    std::string name;
    std::vector<std::int64_t> shape;
    const std::vector<double>* values = nullptr;
    bool f32 = false;
};
// The .npy image (format 1.0) of one array. O(size).
std::string npy_image(const NpyArray& a);
// Writes an uncompressed .npz (a zip of stored .npy members with CRC-32, as numpy.savez writes;
// numpy.load and open_npz read it) atomically (io/report_writer.hpp: write_text_file_atomically).
// DataError when the archive would pass 4 GiB (no zip64 written); CantCreate / IoError as the
// atomic writer. `texts` {name, text} are stored after the arrays as 0-d byte strings ('|S<n>',
// numpy.bytes_: numpy.load(path)[name].item().decode()); open_npz lists them but reads only
// float members.
void write_npz(const std::string& path, const std::vector<NpyArray>& arrays,
               const std::vector<std::pair<std::string, std::string>>& texts = {});

// IEEE 754 binary16 and bfloat16 bit patterns to double (exact, subnormals, inf and NaN kept).
double half_to_double(std::uint16_t bits);
double bfloat16_to_double(std::uint16_t bits);

}  // namespace attnspec
