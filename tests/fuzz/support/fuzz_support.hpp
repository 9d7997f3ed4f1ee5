// Shared by the libFuzzer targets in tests/fuzz: a reader over the fuzz input, a per-process
// temp directory (every file a target writes lives there; removed at exit), and the oracle
// every target applies: a loader either returns or throws attnspec::Error with a documented
// exit code other than 70; anything else aborts (libFuzzer records the input as a crash).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attnspec::fuzz {

// Consumes the fuzz input front to back; past the end every read returns 0 / "".
class Input {
  public:
    Input(const std::uint8_t* data, std::size_t size) : p_(data), n_(size) {}
    bool empty() const { return i_ >= n_; }
    std::size_t left() const { return empty() ? 0 : n_ - i_; }
    std::uint8_t byte();
    std::uint32_t u32();
    bool flag() { return (byte() & 1u) != 0; }
    // A value in [0, n) (0 when n == 0).
    std::size_t pick(std::size_t n) { return n == 0 ? 0 : byte() % n; }
    // A double: mostly small values, sometimes NaN, +-Inf, subnormal, DBL_MAX, -0, raw bits.
    double number();
    // Up to `max` bytes of text (stops at a 0 byte).
    std::string text(std::size_t max);

  private:
    const std::uint8_t* p_;
    std::size_t n_, i_ = 0;
};

// The process's temp directory (created on first use under $TMPDIR, /dev/shm when it exists, or
// /tmp; removed with its files at exit) and a path inside it.
const std::string& temp_dir();
std::string temp_path(const std::string& name);

// Sets up what every target shares: HDF5's error printing off, the memory budget
// (memory_limit_bytes) at 256 MiB so a loader that checks it refuses before allocating.
void init_common();

// Runs `f`; returns normally when it returns or throws attnspec::Error with a documented code
// other than Internal (70). Prints the exception and aborts otherwise.
void expect_documented(const char* what, const std::function<void()>& f);

}  // namespace attnspec::fuzz
