// libFuzzer target: the files of check-kernel (io/kernel_files: KernelArrayFile over a NumPy .npz,
// io/kernel_reproducer: read_stress_case of its `case` member) and the problem they make
// (load_attention_inputs, kernels::problem_shape). A quarter of the inputs are the raw bytes of a
// file; the rest build a valid stored zip (CRC-32 right, so the reader gets past it) of 1-5 .npy
// members whose headers are written here, with a chosen descr, fortran_order, shape and data, a
// `case` byte string holding stress-case JSON, and then overwrite up to 4 bytes of one member's
// header or data before zipping, and perhaps cut the archive. Oracle as in
// support/fuzz_support.hpp: a documented error or a result, never a crash or another exception.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "attnspec/io/kernel_files.hpp"
#include "attnspec/io/kernel_reproducer.hpp"
#include "attnspec/kernels/attention_problem.hpp"
#include "attnspec/kernels/check_run.hpp"
#include "fuzz_support.hpp"

using namespace attnspec;
using namespace attnspec::fuzz;

namespace {

void put_le(std::string& s, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
}

// One .npy member (NEP 1, version 1.0): magic, header length, the dict, padding, data.
std::string npy(Input& in, bool text) {
    static const char* descrs[] = {"<f4", "<f8", "<f2", "<i8", ">f4", "|b1", "<c16", "<f16"};
    std::string descr, shape = "(", data;
    std::size_t count = 1, width = 0;
    if (text) {
        static const char* cases[] = {
            R"({"op":"attention","generator":"gaussian","seed":3,"shape":[2,4],"dtype":"fp32"})",
            R"({"op":"linear-infsa","generator":"relu-zero","seed":18446744073709551615,"shape":[1,2,3,4],"gamma":0.5,"eps":1e-6})",
            R"({"generator":"spike-v","seed":-1,"shape":[0]})",
            R"({"op":"attention-vjp","shape":[99999999999,2]})"};
        std::string t = cases[in.pick(4)];
        for (std::size_t m = in.pick(4); m > 0 && !t.empty(); --m)
            t[in.u32() % t.size()] = static_cast<char>(in.byte());
        descr = "|S" + std::to_string(t.size());
        data = t;
        shape += ")";
    } else {
        const std::size_t k = in.pick(8);
        static const std::size_t widths[] = {4, 8, 2, 8, 4, 1, 16, 16};
        descr = descrs[k], width = widths[k];
        const std::size_t rank = in.pick(5);
        for (std::size_t r = 0; r < rank; ++r) {
            const std::size_t dim = in.pick(6);
            shape += (r ? ", " : "") + std::to_string(dim);
            count *= dim;
        }
        shape += rank == 1 ? ",)" : ")";
        for (std::size_t b = 0; b < count * width && !in.empty(); ++b)
            data += static_cast<char>(in.byte());
    }
    std::string dict = "{'descr': '" + descr +
                       "', 'fortran_order': " + (in.flag() ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
    const std::size_t total = 10 + dict.size() + 1;
    dict += std::string((64 - total % 64) % 64, ' ') + "\n";
    std::string out = "\x93NUMPY";
    out += '\x01', out += '\x00';
    put_le(out, dict.size(), 2);
    out += dict + data;
    for (std::size_t m = in.pick(5); m > 0 && !out.empty(); --m)
        out[in.u32() % out.size()] = static_cast<char>(in.byte());
    return out;
}

// A stored (uncompressed) zip of `members`, as numpy.savez writes them.
std::string zip(const std::vector<std::pair<std::string, std::string>>& members) {
    std::string body, central;
    for (const auto& [name, bytes] : members) {
        const auto crc = static_cast<std::uint32_t>(crc32(
            0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
        const std::size_t offset = body.size();
        std::string common;
        put_le(common, 20, 2), put_le(common, 0, 2),
            put_le(common, 0, 2);  // version, flags, stored
        put_le(common, 0, 4);      // time, date
        put_le(common, crc, 4), put_le(common, bytes.size(), 4), put_le(common, bytes.size(), 4);
        put_le(common, name.size(), 2), put_le(common, 0, 2);
        put_le(body, 0x04034b50, 4);
        body += common + name + bytes;
        put_le(central, 0x02014b50, 4), put_le(central, 20, 2);
        central += common;
        put_le(central, 0, 2), put_le(central, 0, 2), put_le(central, 0, 2);  // comment, disk, attr
        put_le(central, 0, 4), put_le(central, offset, 4);
        central += name;
    }
    std::string out = body + central;
    put_le(out, 0x06054b50, 4), put_le(out, 0, 4);
    put_le(out, members.size(), 2), put_le(out, members.size(), 2);
    put_le(out, central.size(), 4), put_le(out, body.size(), 4), put_le(out, 0, 2);
    return out;
}

std::string structured(Input& in) {
    static const char* names[] = {"q", "k", "v", "o", "lse", "do", "tq", "mask"};
    std::vector<std::pair<std::string, std::string>> members;
    for (std::size_t n = 1 + in.pick(4); n > 0; --n)
        members.emplace_back(std::string(names[in.pick(8)]) + ".npy", npy(in, false));
    if (in.flag()) members.emplace_back("case.npy", npy(in, true));
    std::string bytes = zip(members);
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
    const bool keep_nonfinite = in.flag();
    std::string bytes;
    if ((mode & 3u) == 0)
        while (!in.empty()) bytes += static_cast<char>(in.byte());
    else
        bytes = structured(in);
    const std::string path = temp_path("kernel_inputs.npz");
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    expect_documented("kernel array file", [&] {
        const KernelArrayFile f(path);
        for (const char* name : {"q", "k", "v", "o", "lse", "do", "tq", "mask"})
            if (f.has(name))
                expect_documented("KernelArrayFile::read",
                                  [&] { (void)f.read(name, keep_nonfinite); });
        expect_documented("read_stress_case", [&] {
            kernels::KernelCheckRun run;
            read_stress_case(f, run);
        });
    });
    expect_documented("load_attention_inputs", [&] {
        kernels::AttentionProblem p;
        load_attention_inputs(path, p);
        (void)kernels::problem_shape(p);
    });
    return 0;
}
