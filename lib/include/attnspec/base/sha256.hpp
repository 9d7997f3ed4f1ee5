// SHA-256 (FIPS 180-4) of a byte string or a file, as lowercase hex: the checksum `attnspec
// import` records for the checkpoint it converted. CPU only.
#pragma once
#include <cstdint>
#include <string>

namespace attnspec {

// Incremental hasher: update() any number of times, then hex() once.
class Sha256 {
  public:
    Sha256();
    void update(const void* data, std::size_t n);
    std::string hex();  // finishes the hash; the object is spent afterwards

  private:
    void block(const unsigned char* p);
    std::uint32_t h_[8];
    unsigned char buf_[64];
    std::size_t used_ = 0;
    std::uint64_t total_ = 0;
};

std::string sha256_hex(const std::string& bytes);
// Reads the file in 1 MiB pieces; NoInput (66) when it cannot be opened, IoError (74) on a read
// error.
std::string sha256_file_hex(const std::string& path);

}  // namespace attnspec
