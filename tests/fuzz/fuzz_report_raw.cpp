// libFuzzer target, RAW BYTES (not structure-aware): the input is written as-is to a file and
// read by `attnspec report show --tree` and `report render`. Mostly exercises libhdf5's own
// parser (a crash inside libhdf5 with an HDF5 frame on top is HDF5's bug, not ours); it checks
// that whatever HDF5 accepts or rejects reaches attnspec as a documented error. Oracle as in
// support/fuzz_support.hpp.
#include <cstddef>
#include <cstdint>
#include <fstream>

#include "cli_runner.hpp"
#include "fuzz_support.hpp"

using namespace attnspec;
using namespace attnspec::fuzz;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    init_common();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string path = temp_path("raw.h5");
    {
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    expect_documented("report show --tree (raw)", [&] {
        (void)run_cli("report", {"show", path, "--tree"});
    });
    expect_documented("report render (raw)", [&] { (void)run_cli("report", {"render", path}); });
    return 0;
}
