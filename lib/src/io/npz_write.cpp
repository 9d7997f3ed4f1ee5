// Writing uncompressed .npz archives (io/tensor_files.hpp: npy_image, write_npz): .npy format
// 1.0 members, little-endian '<f8' or '<f4', stored (method 0) in a zip with a central directory
// (PKWARE APPNOTE 6.3, no zip64), as numpy.savez writes them.
#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "attnspec/base/errors.hpp"
#include "attnspec/io/report_writer.hpp"
#include "attnspec/io/tensor_files.hpp"

namespace attnspec {
namespace {

std::string le(std::uint64_t v, int bytes) {
    std::string s(static_cast<size_t>(bytes), '\0');
    for (int i = 0; i < bytes; ++i)
        s[static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
    return s;
}

std::uint32_t crc_of(const std::string& bytes) {
    uLong c = crc32(0L, Z_NULL, 0);
    c = crc32(c, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size()));
    return static_cast<std::uint32_t>(c);
}

std::string shape_tuple(const std::vector<std::int64_t>& shape) {
    std::string t = "(";
    for (size_t i = 0; i < shape.size(); ++i) t += (i ? ", " : "") + std::to_string(shape[i]);
    return t + (shape.size() == 1 ? ",)" : ")");
}

// The .npy header (format 1.0) for dtype `descr` and `shape`, padded to 64 bytes.
std::string npy_header(const std::string& descr, const std::vector<std::int64_t>& shape) {
    std::string header =
        "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_tuple(shape) + ", }";
    // magic (6) + version (2) + length (2) + header + '\n', padded with spaces to 64 bytes
    const size_t total = 10 + header.size() + 1;
    header += std::string((64 - total % 64) % 64, ' ') + "\n";
    return std::string("\x93NUMPY\x01\x00", 8) + le(header.size(), 2) + header;
}

}  // namespace

std::string npy_image(const NpyArray& a) {
    std::string out = npy_header(a.f32 ? "<f4" : "<f8", a.shape);
    const std::vector<double>& v = *a.values;
    out.reserve(out.size() + v.size() * (a.f32 ? 4 : 8));
    for (double x : v) {
        if (a.f32) {
            const float f = static_cast<float>(x);
            std::uint32_t bits = 0;
            std::memcpy(&bits, &f, 4);
            out += le(bits, 4);
        } else {
            std::uint64_t bits = 0;
            std::memcpy(&bits, &x, 8);
            out += le(bits, 8);
        }
    }
    return out;
}

void write_npz(const std::string& path, const std::vector<NpyArray>& arrays,
               const std::vector<std::pair<std::string, std::string>>& texts) {
    // One member at a time (arrays, then texts), so that only one .npy image is held beside the
    // archive being built.
    const std::size_t count = arrays.size() + texts.size();
    std::string out, cd;
    for (std::size_t i = 0; i < count; ++i) {
        std::string name, data;
        if (i < arrays.size()) {
            name = arrays[i].name + ".npy", data = npy_image(arrays[i]);
        } else {
            const auto& [member, text] = texts[i - arrays.size()];
            // '|S0' is no dtype numpy reads back: an empty text is one NUL byte
            const std::size_t n = std::max<std::size_t>(1, text.size());
            name = member + ".npy";
            data = npy_header("|S" + std::to_string(n), {}) + text +
                   std::string(n - text.size(), '\0');
        }
        if (out.size() + data.size() + 2 * name.size() + 200 > 0xFFFFFFF0ull)
            fail_data("'" + path + "' would pass 4 GiB, beyond what write_npz writes (no zip64)");
        const std::string common = le(20, 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0x21, 2) +
                                   le(crc_of(data), 4) + le(data.size(), 4) + le(data.size(), 4) +
                                   le(name.size(), 2) + le(0, 2);
        const std::uint64_t offset = out.size();
        out += "PK\x03\x04" + common + name + data;
        cd += "PK\x01\x02" + le(20, 2) + common + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) +
              le(offset, 4) + name;
    }
    const std::uint64_t cd_offset = out.size();
    out += cd;
    out += "PK\x05\x06" + le(0, 2) + le(0, 2) + le(count, 2) + le(count, 2) + le(cd.size(), 4) +
           le(cd_offset, 4) + le(0, 2);
    write_text_file_atomically(path, out);
}

}  // namespace attnspec
