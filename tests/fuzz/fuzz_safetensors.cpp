// libFuzzer target: checkpoint containers (io/tensor_files: open_tensor_file, TensorFile::read) and
// the name mapping of `attnspec import` (io/checkpoint_import: map_checkpoint). Half the inputs are
// the raw bytes of a file (safetensors, or a zip when they start with "PK"); the other half build a
// valid safetensors file (1-4 tensors with attention-like names, dtypes, shapes of at most 6 x 6,
// contiguous offsets) and then overwrite up to 6 bytes and perhaps cut the end. Oracle as in
// support/fuzz_support.hpp.
#include <cstddef>
#include <cstdint>
#include <fstream>

#include "attnspec/io/checkpoint_import.hpp"
#include "attnspec/io/tensor_files.hpp"
#include "fuzz_support.hpp"

using namespace attnspec;
using namespace attnspec::fuzz;

namespace {

std::string le64(std::uint64_t v) {
    std::string s;
    for (int i = 0; i < 8; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
    return s;
}

std::string structured(Input& in) {
    static const char* names[] = {"encoder.layer.0.attention.self.query.weight",
                                  "encoder.layer.0.attention.self.key.weight",
                                  "encoder.layer.0.attention.self.value.weight",
                                  "encoder.layer.0.attention.self.query.bias",
                                  "blocks.0.attn.qkv.weight",
                                  "layer0/W_Q",
                                  "embeddings.word_embeddings.weight",
                                  "encoder.layer.1.attention.self.query.lora.weight"};
    static const char* dtypes[] = {"F32", "F64", "F16", "BF16", "I64", "U8", "F8_E4M3"};
    static const int widths[] = {4, 8, 2, 2, 8, 1, 1};
    std::string header = "{", data;
    const std::size_t n = 1 + in.pick(4);
    for (std::size_t t = 0; t < n; ++t) {
        const std::size_t k = in.pick(7), rank = in.pick(3);
        std::string shape = "[";
        std::size_t count = 1;
        for (std::size_t r = 0; r < rank; ++r) {
            const std::size_t dim = in.pick(7);
            shape += (r ? "," : "") + std::to_string(dim);
            count *= dim;
        }
        const std::size_t begin = data.size();
        for (std::size_t b = 0; b < count * widths[k]; ++b) data += static_cast<char>(in.byte());
        header += std::string(t ? "," : "") + "\"" + names[in.pick(8)] + "\":{\"dtype\":\"" +
                  dtypes[k] + "\",\"shape\":" + shape + "],\"data_offsets\":[" +
                  std::to_string(begin) + "," + std::to_string(data.size()) + "]}";
    }
    header += "}";
    std::string bytes = le64(header.size()) + header + data;
    for (std::size_t m = in.pick(7); m > 0 && !bytes.empty(); --m)
        bytes[in.u32() % bytes.size()] = static_cast<char>(in.byte());
    if (in.flag() && !bytes.empty()) bytes.resize(in.u32() % bytes.size());
    return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    init_common();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Input in(data, size);
    const unsigned mode = in.byte();
    const int heads = 1 + static_cast<int>(in.pick(4));
    std::string bytes;
    if (mode & 1u)
        while (!in.empty()) bytes += static_cast<char>(in.byte());
    else
        bytes = structured(in);
    const std::string path = temp_path("checkpoint.bin");
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    expect_documented("tensor file", [&] {
        const auto f = open_tensor_file(path);
        for (const TensorEntry& e : f->entries())
            expect_documented("TensorFile::read", [&] { (void)f->read(e.name); });
        expect_documented("map_checkpoint", [&] { (void)map_checkpoint(*f, heads, {}); });
    });
    return 0;
}
