// Shared by the tensor-container readers (safetensors.cpp, npz.cpp, tensor_files.cpp): a file read
// by offset, little-endian integers and float decoding. Not installed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attnspec::detail {

// A regular file opened for reading at offsets. NoInput (66) when it cannot be opened, DataError
// (65) when it is not a regular file, IoError (74) on a short or failed read.
class ByteFile {
  public:
    explicit ByteFile(const std::string& path);
    ~ByteFile();
    ByteFile(const ByteFile&) = delete;
    ByteFile& operator=(const ByteFile&) = delete;
    std::uint64_t size() const { return size_; }
    // Exactly n bytes at `offset` (the caller has checked offset + n <= size()).
    std::string read(std::uint64_t offset, std::uint64_t n) const;

  private:
    std::string path_;
    int fd_ = -1;
    std::uint64_t size_ = 0;
};

std::uint64_t le_uint(const char* p, int bytes);

// Stored float kinds a tensor may hold.
enum class FloatKind { f16, bf16, f32, f64, u8 };  // u8: bool or uint8 (.npz masks)
int float_bytes(FloatKind k);
// Decodes `count` little-endian values at `p`; DataError naming `what` on NaN or infinity unless
// `keep_nonfinite`.
std::vector<double> decode_floats(const char* p, std::uint64_t count, FloatKind k,
                                  const std::string& what, bool keep_nonfinite = false);
// Product of `shape` (each >= 0); DataError naming `what` when it exceeds 2^53.
std::uint64_t element_count(const std::vector<std::int64_t>& shape, const std::string& what);
// "(3, 4)" as NumPy prints shapes.
std::string shape_text(const std::vector<std::int64_t>& shape);

}  // namespace attnspec::detail
