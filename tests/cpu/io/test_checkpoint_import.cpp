// attnspec import, library side: SHA-256 against the FIPS 180-4 examples, the strict JSON reader,
// the safetensors and .npz/.npy parsers on hand-built bytes (valid, truncated, overlapping,
// oversized, malformed, wrong dtype), and the mapping: heads split and transposed so that the Q,
// K, V of an imported head equal X W^T + b of the original, sliced.
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <tuple>

#include "attnspec/base/memory.hpp"
#include "attnspec/base/sha256.hpp"
#include "attnspec/io/attention_input.hpp"
#include "attnspec/io/checkpoint_import.hpp"
#include "attnspec/io/json_read.hpp"
#include "attnspec/io/report_writer.hpp"
#include "attnspec/io/tensor_files.hpp"
#include "test_support.hpp"

using namespace attnspec;
using attnspec::test::error_of;
using attnspec::test::has;

namespace {

std::string le(std::uint64_t v, int bytes) {
    std::string s;
    for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
    return s;
}

std::string f32_bytes(const std::vector<double>& v) {
    std::string s;
    for (double x : v) {
        const float f = static_cast<float>(x);
        std::uint32_t u = 0;
        std::memcpy(&u, &f, 4);
        s += le(u, 4);
    }
    return s;
}

std::string f64_bytes(const std::vector<double>& v) {
    std::string s;
    for (double x : v) {
        std::uint64_t u = 0;
        std::memcpy(&u, &x, 8);
        s += le(u, 8);
    }
    return s;
}

struct StEntry {
    std::string name, dtype;
    std::vector<std::int64_t> shape;
    std::string data;
};

std::string shape_json(const std::vector<std::int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
    return s + "]";
}

// A safetensors image: entries laid out back to back in the given order.
std::string safetensors(const std::vector<StEntry>& es) {
    std::string header = "{\"__metadata__\":{\"format\":\"pt\"}", data;
    for (const StEntry& e : es) {
        header += ",\"" + e.name + "\":{\"dtype\":\"" + e.dtype +
                  "\",\"shape\":" + shape_json(e.shape) + ",\"data_offsets\":[" +
                  std::to_string(data.size()) + "," + std::to_string(data.size() + e.data.size()) +
                  "]}";
        data += e.data;
    }
    header += "}";
    return test::safetensors(header, data);
}

std::string write_bytes(const std::string& dir, const std::string& name, const std::string& b) {
    const std::string path = dir + "/" + name;
    test::write_file(path, b);
    return path;
}

std::string message_of(const std::function<void()>& f, ExitCode expected) {
    const Error e = error_of(f);
    CHECK(e.code() == expected);
    return e.what();
}

// Values exactly representable in float32, distinct, of both signs.
std::vector<double> ramp(size_t n, double start) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = start + 0.125 * static_cast<double>(i) * (i % 2 ? -1 : 1);
    return v;
}

Eigen::MatrixXd as_matrix(const std::vector<double>& v, Eigen::Index rows, Eigen::Index cols) {
    Eigen::MatrixXd M(rows, cols);
    for (Eigen::Index i = 0; i < rows; ++i)
        for (Eigen::Index j = 0; j < cols; ++j) M(i, j) = v[i * cols + j];
    return M;
}

// A .npy image (format version `major`).
std::string npy(const std::string& descr, const std::string& shape, const std::string& data,
                int major = 1, bool fortran = false) {
    std::string dict = "{'descr': '" + descr +
                       "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
    const size_t prefix = major == 1 ? 10 : 12;
    while ((prefix + dict.size() + 1) % 64 != 0) dict += ' ';
    dict += '\n';
    return std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0' +
           le(dict.size(), major == 1 ? 2 : 4) + dict + data;
}

// A zip of members stored as given (method 0, or 8 when the data are raw deflate), with correct
// CRCs unless `bad_crc`; `declared` overrides the uncompressed size in the headers.
std::string zip_stored(const std::vector<std::pair<std::string, std::string>>& members,
                       bool bad_crc = false, std::uint32_t declared = 0, int method = 0) {
    std::string out, cd;
    for (const auto& [name, data] : members) {
        std::uint32_t crc = static_cast<std::uint32_t>(
            crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
        if (bad_crc) crc ^= 1;
        const auto stored = static_cast<std::uint32_t>(data.size());
        const std::uint32_t size = declared ? declared : stored;
        const std::string common = le(20, 2) + le(0, 2) + le(method, 2) + le(0, 2) + le(0, 2) +
                                   le(crc, 4) + le(stored, 4) + le(size, 4) + le(name.size(), 2) +
                                   le(0, 2);
        const std::uint64_t offset = out.size();
        out += "PK\x03\x04" + common + name + data;
        cd += "PK\x01\x02" + le(20, 2) + common + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) +
              le(offset, 4) + name;
    }
    const std::uint64_t cd_offset = out.size();
    out += cd;
    out += "PK\x05\x06" + le(0, 2) + le(0, 2) + le(members.size(), 2) + le(members.size(), 2) +
           le(cd.size(), 4) + le(cd_offset, 4) + le(0, 2);
    return out;
}

}  // namespace

TEST_CASE("sha256 matches the FIPS 180-4 examples", "[import]") {
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const std::string dir = attnspec::test::temp_dir();
    const std::string million(1000000, 'a');
    CHECK(sha256_file_hex(write_bytes(dir, "a.bin", million)) ==
          "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    Sha256 pieces;  // the same bytes fed across block boundaries
    for (size_t i = 0; i < million.size(); i += 37)
        pieces.update(million.data() + i, std::min<size_t>(37, million.size() - i));
    CHECK(pieces.hex() == sha256_hex(million));
    CHECK(error_of([&] { sha256_file_hex(dir + "/missing"); }).code() == ExitCode::NoInput);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("json reader: values, and malformed text refused with the byte offset", "[import]") {
    const JsonValue v = parse_json(
        R"({"a": [1, 2.5e3, -0, true, false, null], "s": "x\u00e9\ud83d\ude00\n"})", "t");
    REQUIRE(v.kind == JsonValue::Object);
    REQUIRE(v.find("a")->items.size() == 6);
    std::uint64_t u = 0;
    CHECK(v.find("a")->items[0].as_uint64(u));
    CHECK(u == 1);
    CHECK_FALSE(v.find("a")->items[1].as_uint64(u));  // not an integer literal
    CHECK_FALSE(v.find("a")->items[2].as_uint64(u));  // signed
    CHECK(v.find("a")->items[3].boolean);
    CHECK_FALSE(v.find("a")->items[4].boolean);
    CHECK(v.find("s")->text == "x\xc3\xa9\xf0\x9f\x98\x80\n");
    CHECK(parse_json("18446744073709551615", "t").as_uint64(u));
    CHECK_FALSE(parse_json("18446744073709551616", "t").as_uint64(u));  // 2^64 overflows
    for (const char* bad : {"{\"a\":1,\"a\":2}", "[1,]", "{} x", "\"\\x\"", "01", "\"\\ud800\"",
                            "[", "\"a\nb\"", "{1:2}", "1.", "-"}) {
        INFO(bad);
        CHECK(has(message_of([&] { parse_json(bad, "hdr"); }, ExitCode::DataError),
                  "hdr: malformed JSON at byte"));
    }
    const std::string deep = std::string(100, '[') + std::string(100, ']');
    CHECK(has(message_of([&] { parse_json(deep, "hdr"); }, ExitCode::DataError), "64 levels"));
}

TEST_CASE("half and bfloat16 decode exactly", "[import]") {
    CHECK(half_to_double(0x3C00) == 1.0);
    CHECK(half_to_double(0xC000) == -2.0);
    CHECK(half_to_double(0x7BFF) == 65504.0);
    CHECK(half_to_double(0x0001) == std::ldexp(1.0, -24));  // smallest subnormal
    CHECK(half_to_double(0x0400) == std::ldexp(1.0, -14));  // smallest normal
    CHECK(half_to_double(0x3555) == (1 + 0x155 / 1024.0) * 0.25);
    CHECK(std::isinf(half_to_double(0x7C00)));
    CHECK(std::isnan(half_to_double(0x7E00)));
    CHECK(bfloat16_to_double(0x3F80) == 1.0);
    CHECK(bfloat16_to_double(0x4049) == 3.140625);
    CHECK(bfloat16_to_double(0xBF00) == -0.5);
}

TEST_CASE("safetensors: every float dtype read exactly, other dtypes refused on read", "[import]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::vector<double> a = ramp(6, -1.5);
    const std::string path =
        write_bytes(dir, "ok.safetensors",
                    safetensors({{"a32", "F32", {2, 3}, f32_bytes(a)},
                                 {"ids", "I64", {1, 2}, le(7, 8) + le(9, 8)},
                                 {"a64", "F64", {3}, f64_bytes({0.1, -1e300, 5e-324})},
                                 {"h", "F16", {2}, le(0x3C00, 2) + le(0x0001, 2)},
                                 {"b", "BF16", {1, 1}, le(0x4049, 2)},
                                 {"empty", "F32", {0, 4}, ""}}));
    const auto f = open_tensor_file(path);
    REQUIRE(f->format() == "safetensors");
    REQUIRE(f->entries().size() == 6);
    CHECK(f->entries()[0].name == "a32");  // file order
    const Tensor t = f->read("a32");
    CHECK(t.shape == std::vector<std::int64_t>{2, 3});
    CHECK(t.values == a);
    CHECK(t.matrix("a32")(1, 0) == a[3]);  // row-major
    CHECK(f->read("a64").values == std::vector<double>{0.1, -1e300, 5e-324});
    CHECK(f->read("h").values == std::vector<double>{1.0, std::ldexp(1.0, -24)});
    CHECK(f->read("b").values == std::vector<double>{3.140625});
    CHECK(f->read("empty").values.empty());
    CHECK(has(message_of([&] { f->read("ids"); }, ExitCode::DataError),
              "tensor 'ids' has dtype I64; only F32, F64, F16 and BF16"));
    CHECK(has(message_of([&] { f->read("nope"); }, ExitCode::DataError), "no tensor 'nope'"));
    const std::string inf =
        write_bytes(dir, "inf.safetensors", safetensors({{"w", "F16", {1}, le(0x7C00, 2)}}));
    CHECK(has(message_of([&] { open_safetensors(inf)->read("w"); }, ExitCode::DataError),
              "non-finite value (inf)"));
    CHECK(error_of([&] { open_safetensors(dir + "/missing"); }).code() == ExitCode::NoInput);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("safetensors: hostile headers refused before reading data", "[import]") {
    const std::string dir = attnspec::test::temp_dir();
    const auto refused = [&](const std::string& bytes, const std::string& expect) {
        const std::string p = write_bytes(dir, "bad.safetensors", bytes);
        CHECK(has(message_of([&] { open_tensor_file(p); }, ExitCode::DataError), expect));
    };
    const std::string good = safetensors({{"w", "F32", {2, 2}, f32_bytes({1, 2, 3, 4})}});
    refused(good.substr(0, 5), "shorter than the 8-byte header length");
    refused(good.substr(0, 20), "exceeds the file");                          // truncated header
    refused(good.substr(0, good.size() - 4), "lie outside the data buffer");  // truncated data
    refused(le(~0ull, 8) + "{}", "exceeds the file");                         // length near 2^64
    {  // a sparse file of 101 MiB whose header claims all of it
        const std::string p = write_bytes(dir, "huge.safetensors", le(101ull << 20, 8));
        std::filesystem::resize_file(p, (101ull << 20) + 8);
        CHECK(has(message_of([&] { open_tensor_file(p); }, ExitCode::DataError), "above 100 MiB"));
    }
    // {header, bytes of data after it, what the message must say}
    const std::tuple<const char*, size_t, const char*> headers[] = {
        {R"({"w": )", 0, "malformed JSON"},
        {"[1]", 0, "not a JSON object"},
        {R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", 8,
         "exactly the keys dtype, shape and data_offsets"},
        {R"({"w":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}})", 16, "unknown dtype 'F128'"},
        {R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8,
         "needs 12 bytes, data_offsets span 8"},
        {R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,8]}})", 8,
         "not a non-negative integer"},
        {R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8,
         "lie outside the data buffer"},
        {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
         R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
         12, "two tensors overlap (data offsets 0..8 and 4..12)"},
        // a shape whose element count overflows: refused from the header alone
        {R"({"w":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 8,
         "more than 2^53 elements"},
    };
    for (const auto& [header, data, expect] : headers) {
        INFO(header);
        refused(test::safetensors(header, std::string(data, '\0')), expect);
    }
    refused(test::safetensors(R"({"__metadata__":{"a":1}})", ""), "__metadata__ value 'a'");
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("safetensors and npz: a size above the memory budget is refused before reading",
          "[import]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::string st = write_bytes(
        dir, "w.safetensors", safetensors({{"w", "F64", {64, 64}, f64_bytes(ramp(4096, 0))}}));
    // npz whose central directory declares a 4 GiB member: never inflated or allocated
    const std::string npz = write_bytes(
        dir, "big.npz", zip_stored({{"w.npy", std::string(64, 'x')}}, false, 0xF0000000u, 8));
    const test::MemoryBudget guard(32 * 1024);  // the tensor needs 32 KiB as F64 + 32 KiB as double
    const Error e = error_of([&] { open_tensor_file(st)->read("w"); });
    CHECK(e.code() == ExitCode::DataError);
    CHECK(e.parameter() == "max_bytes");
    CHECK(has(e.what(), "tensor 'w'"));
    const auto f = open_tensor_file(npz);
    CHECK(error_of([&] { f->read("w"); }).parameter() == "max_bytes");
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("npy: versions 1 to 3, float32 and float64, C and Fortran order", "[import]") {
    const std::vector<double> v = ramp(6, 2.0);
    for (int major : {1, 2, 3}) {
        const Tensor t = parse_npy(npy("<f8", "(2, 3)", f64_bytes(v), major), "a.npy");
        CHECK(t.shape == std::vector<std::int64_t>{2, 3});
        CHECK(t.values == v);
    }
    CHECK(parse_npy(npy("<f4", "(6,)", f32_bytes(v)), "a.npy").values == v);
    // Fortran order: the data are column by column; read back row-major
    const Eigen::MatrixXd M = as_matrix(v, 2, 3);
    std::vector<double> col_major(M.data(), M.data() + M.size());  // Eigen stores by column
    const Tensor f = parse_npy(npy("<f8", "(2, 3)", f64_bytes(col_major), 1, true), "f.npy");
    CHECK(f.matrix("f") == M);
    CHECK(parse_npy(npy("<f8", "()", f64_bytes({4.5})), "s.npy").values ==
          std::vector<double>{4.5});
}

TEST_CASE("npy: object, big-endian, other dtypes and malformed headers refused", "[import]") {
    const auto refused = [](const std::string& bytes, const std::string& expect) {
        CHECK(has(message_of([&] { parse_npy(bytes, "x.npy"); }, ExitCode::DataError), expect));
    };
    refused(npy("|O", "(1,)", std::string(8, '\0')), "object arrays");
    refused(npy(">f8", "(1,)", std::string(8, '\0')), "big-endian dtype '>f8'");
    refused(npy("<i8", "(1,)", std::string(8, '\0')), "dtype '<i8' is not supported");
    refused(npy("<f8", "(2,)", std::string(8, '\0')), "needs 16 data bytes, the member holds 8");
    refused(npy("<f8", "(-2,)", ""), "not a non-negative integer");
    refused(npy("<f8", "(99999999999, 99999999999)", ""), "more than 2^53 elements");
    refused("\x93NUMPZ\x01\x00", "no \\x93NUMPY magic");
    refused(std::string("\x93NUMPY\x04\x00\x00\x00", 10), "version 4 is not supported");
    refused(std::string("\x93NUMPY\x01\x00\xff\x00{}", 12), "header runs past the end");
    refused(npy("<f8", "(1,)", f64_bytes({NAN})), "non-finite value (NaN)");
    std::string extra = npy("<f8", "(1,)", f64_bytes({1}));
    extra.replace(extra.find("'shape'"), 7, "'shapo'");
    refused(extra, "unknown header key 'shapo'");
}

TEST_CASE("npz: stored members read, CRC and archive structure checked", "[import]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::string a = npy("<f8", "(2,)", f64_bytes({1.5, -2}));
    const std::string b = npy("<f4", "(1, 1)", f32_bytes({0.25}));
    const std::string ok = write_bytes(
        dir, "ok.npz", zip_stored({{"a.npy", a}, {"sub/b.npy", b}, {"notes.txt", "hello"}}));
    const auto f = open_tensor_file(ok);
    REQUIRE(f->format() == "npz");
    REQUIRE(f->entries().size() == 2);  // notes.txt is not an array
    CHECK(f->entries()[1].name == "sub/b");
    CHECK(f->read("a").values == std::vector<double>{1.5, -2});
    CHECK(f->read("sub/b").values == std::vector<double>{0.25});
    const auto refused = [&](const std::string& bytes, const std::string& expect, bool on_read) {
        const std::string p = write_bytes(dir, "bad.npz", bytes);
        CHECK(has(message_of(
                      [&] {
                          const auto g = open_tensor_file(p);
                          if (on_read) g->read("a");
                      },
                      ExitCode::DataError),
                  expect));
    };
    refused(zip_stored({{"a.npy", a}}, true), "fails its CRC-32 check", true);
    refused(zip_stored({{"a.npy", a}, {"a.npy", a}}), "appears twice", false);
    refused(zip_stored({{"a.npy", a}}, false, 0, 12), "compression method 12", false);
    refused(zip_stored({{"a.npy", "garbage"}}, false, 100, 8), "does not inflate", true);
    refused(zip_stored({{"archive/data.pkl", "x"}, {"archive/data/0", "y"}}),
            "is a PyTorch pickle checkpoint (.bin/.pt), which is not read", false);
    const std::string z = zip_stored({{"a.npy", a}});
    refused(z.substr(0, z.size() - 30), "no end-of-central-directory record", false);
    refused(z.substr(0, 4) + std::string(40, '\0'), "no end-of-central-directory record", false);
    std::string moved = z;  // central directory offset past the end
    moved[moved.size() - 3] = '\x7f';
    refused(moved, "central directory out of range", false);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("npz written by NumPy: savez and savez_compressed read back exactly", "[import]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::string script =
        "import numpy as np\n"
        "a = np.arange(12, dtype=np.float64).reshape(3, 4) / 7\n"
        "np.savez('" +
        dir +
        "/p.npz', a=a, b=np.asfortranarray(a).astype(np.float32))\n"
        "np.savez_compressed('" +
        dir + "/c.npz', a=a)\n";
    REQUIRE(test::python(script) == 0);
    Eigen::MatrixXd expect(3, 4);
    for (int i = 0; i < 12; ++i) expect(i / 4, i % 4) = i / 7.0;
    for (const char* name : {"p.npz", "c.npz"}) {
        const auto f = open_tensor_file(dir + "/" + name);
        CHECK(f->read("a").matrix("a") == expect);
    }
    const Eigen::MatrixXd b = open_tensor_file(dir + "/p.npz")->read("b").matrix("b");
    CHECK(b == expect.cast<float>().cast<double>());
    std::system(("rm -rf " + dir).c_str());
}

namespace {

// A BERT-style layer: weights (out, in) = (D, D) and biases (D), distinct per layer and role.
struct TorchLayer {
    Eigen::MatrixXd W[3];
    Eigen::VectorXd b[3];
};

TorchLayer torch_layer(int layer, Eigen::Index D) {
    TorchLayer t;
    for (int k = 0; k < 3; ++k) {
        t.W[k] = as_matrix(ramp(D * D, 0.5 + layer + 0.25 * k), D, D);
        const auto bv = ramp(D, -1.0 - k - layer);
        t.b[k] = Eigen::Map<const Eigen::VectorXd>(bv.data(), D);
    }
    return t;
}

std::vector<double> row_major(const Eigen::MatrixXd& M) {
    std::vector<double> v;
    for (Eigen::Index i = 0; i < M.rows(); ++i)
        for (Eigen::Index j = 0; j < M.cols(); ++j) v.push_back(M(i, j));
    return v;
}

std::vector<double> values(const Eigen::VectorXd& b) { return {b.data(), b.data() + b.size()}; }

std::vector<StEntry> bert_entries(const std::string& prefix, const std::vector<TorchLayer>& ls,
                                  const char* self = "self") {
    std::vector<StEntry> es;
    const char* role[] = {"query", "key", "value"};
    for (size_t l = 0; l < ls.size(); ++l)
        for (int k = 0; k < 3; ++k) {
            const std::string base = prefix + "encoder.layer." + std::to_string(l) + ".attention." +
                                     self + "." + role[k];
            const auto D = static_cast<std::int64_t>(ls[l].W[k].rows());
            es.push_back({base + ".weight", "F32", {D, D}, f32_bytes(row_major(ls[l].W[k]))});
            es.push_back({base + ".bias", "F32", {D}, f32_bytes(values(ls[l].b[k]))});
        }
    return es;
}

// Q, K, V of head h computed from the imported weights equal X W^T + b of the original, sliced.
void check_head(const HeadWeights& hw, const TorchLayer& t, int h, Eigen::Index d, bool biased) {
    const Eigen::MatrixXd X = as_matrix(ramp(3 * t.W[0].cols(), 0.3), 3, t.W[0].cols());
    const Eigen::MatrixXd* imported[] = {&hw.W_Q, &hw.W_K, &hw.W_V};
    const Eigen::VectorXd* bias[] = {&hw.b_Q, &hw.b_K, &hw.b_V};
    for (int k = 0; k < 3; ++k) {
        CHECK(*imported[k] == t.W[k].middleRows(h * d, d).transpose());  // exact copy
        Eigen::MatrixXd direct = X * t.W[k].transpose();
        Eigen::MatrixXd mine = X * *imported[k];
        if (biased) {
            CHECK(*bias[k] == t.b[k].segment(h * d, d));
            direct.rowwise() += t.b[k].transpose();
            mine.rowwise() += bias[k]->transpose();
        } else {
            CHECK(bias[k]->size() == 0);
        }
        CHECK_THAT(mine,
                   attnspec::test::IsClose(direct.middleCols(h * d, d), 8 * attnspec::test::kU));
    }
}

}  // namespace

TEST_CASE("import mapping: BERT and ViT heads are transposed row blocks with their biases",
          "[import]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::vector<TorchLayer> ls = {torch_layer(0, 6), torch_layer(1, 6)};
    for (const auto& [prefix, self, family] :
         {std::tuple<std::string, const char*, const char*>{"", "self", "bert"},
          {"bert.", "self", "bert"},
          {"vit.", "attention", "vit"}}) {
        auto es = bert_entries(prefix, ls, self);
        es.push_back({"embeddings.position_ids", "I64", {1}, le(0, 8)});  // ignored
        es.push_back(
            {prefix + "encoder.layer.0.attention.output.dense.weight", "F32", {1}, f32_bytes({1})});
        const auto f = open_tensor_file(write_bytes(dir, "m.safetensors", safetensors(es)));
        const CheckpointMap m = map_checkpoint(*f, 3, {});
        INFO(prefix << family);
        CHECK(m.family == family);
        REQUIRE(m.layers.size() == 2);
        CHECK(m.D == 6);
        CHECK(m.d == 2);
        CHECK(m.biases);
        CHECK(m.mapped == 12);
        CHECK(m.ignored == 2);
        for (size_t l = 0; l < 2; ++l) {
            CHECK(m.layers[l].source == static_cast<int>(l));
            REQUIRE(m.layers[l].heads.size() == 3);
            for (int h = 0; h < 3; ++h) check_head(m.layers[l].heads[h], ls[l], h, 2, true);
        }
        const CheckpointMap one = map_checkpoint(*f, 2, {1});  // --layers 1, H = 2
        REQUIRE(one.layers.size() == 1);
        CHECK(one.layers[0].source == 1);
        CHECK(one.d == 3);
        check_head(one.layers[0].heads[1], ls[1], 1, 3, true);
    }
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("import mapping: timm fused qkv is cut into q, k, v before the heads", "[import]") {
    const std::string dir = attnspec::test::temp_dir();
    const TorchLayer t = torch_layer(2, 4);
    Eigen::MatrixXd qkv(12, 4);
    qkv << t.W[0], t.W[1], t.W[2];
    Eigen::VectorXd b(12);
    b << t.b[0], t.b[1], t.b[2];
    const auto f = open_tensor_file(write_bytes(
        dir, "t.safetensors",
        safetensors({{"blocks.0.attn.qkv.weight", "F64", {12, 4}, f64_bytes(row_major(qkv))},
                     {"blocks.0.attn.qkv.bias", "F64", {12}, f64_bytes(values(b))},
                     {"blocks.0.attn.proj.weight", "F64", {1}, f64_bytes({0})}})));
    const CheckpointMap m = map_checkpoint(*f, 2, {});
    CHECK(m.family == "timm");
    REQUIRE(m.layers.size() == 1);
    for (int h = 0; h < 2; ++h) check_head(m.layers[0].heads[h], t, h, 2, true);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("import mapping: plain npz arrays keep their (D, H d) orientation", "[import]") {
    const std::string dir = attnspec::test::temp_dir();
    const TorchLayer t = torch_layer(0, 4);
    std::vector<std::pair<std::string, std::string>> members;
    const char* names[] = {"W_Q", "W_K", "W_V"};
    for (int k = 0; k < 3; ++k)  // stored as attnspec orientation: the transpose of (out, in)
        members.push_back({std::string("layer3/") + names[k] + ".npy",
                           npy("<f8", "(4, 4)", f64_bytes(row_major(t.W[k].transpose())))});
    members.push_back({"layer3/X.npy", npy("<f8", "(2, 4)", f64_bytes(ramp(8, 1)))});
    const auto f = open_tensor_file(write_bytes(dir, "p.npz", zip_stored(members)));
    const CheckpointMap m = map_checkpoint(*f, 2, {});
    CHECK(m.family == "plain");
    CHECK_FALSE(m.biases);
    REQUIRE(m.layers.size() == 1);
    CHECK(m.layers[0].source == 3);
    REQUIRE(m.inputs.size() == 1);
    CHECK(m.inputs[0] == std::make_pair(3, std::string("layer3/X")));
    for (int h = 0; h < 2; ++h) check_head(m.layers[0].heads[h], t, h, 2, false);
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("import mapping: names and shapes it cannot map are refused, naming them", "[import]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::vector<TorchLayer> ls = {torch_layer(0, 4)};
    const auto refused = [&](std::vector<StEntry> es, int heads, std::vector<int> layers,
                             const std::string& expect) {
        const auto f = open_tensor_file(write_bytes(dir, "m.safetensors", safetensors(es)));
        CHECK(has(message_of([&] { map_checkpoint(*f, heads, layers); }, ExitCode::DataError),
                  expect));
    };
    auto es = bert_entries("", ls);
    auto lora = es;
    lora.push_back(
        {"encoder.layer.0.attention.self.query.lora_A.weight", "F32", {1}, f32_bytes({1})});
    refused(lora, 2, {}, "tensor 'encoder.layer.0.attention.self.query.lora_A.weight' looks like");
    refused(lora, 2, {}, "blocks.<l>.attn.qkv.{weight,bias}");  // the patterns are listed
    refused({{"embeddings.word_embeddings.weight", "F32", {1}, f32_bytes({1})},
             {"pooler.dense.weight", "F32", {1}, f32_bytes({1})}},
            2, {},
            "no attention weights found among its 2 tensors (first: "
            "embeddings.word_embeddings.weight, pooler.dense.weight)");
    refused(es, 3, {}, "4 output features (D = 4) are not divisible by H = 3 heads");
    refused(es, 2, {5}, "layer 5 not found");
    auto partial = es;
    partial.erase(partial.begin() + 3);  // key.bias
    refused(partial, 2, {}, "has 2 of the three biases");
    auto no_key = es;
    no_key.erase(no_key.begin() + 2);  // key.weight
    refused(no_key, 2, {}, "layer 0 lacks its key weight");
    auto mixed = es;
    mixed.push_back({"blocks.1.attn.qkv.weight", "F32", {1}, f32_bytes({1})});
    refused(mixed, 2, {}, "is in timm naming, earlier tensors in bert naming");
    auto odd = es;
    odd[0] = {"encoder.layer.0.attention.self.query.weight", "F32", {4, 3}, f32_bytes(ramp(12, 0))};
    refused(odd, 2, {}, "layer 0: the key weight is 4x4 as (D, H*d), the query weight 3x4");
    auto short_bias = es;
    short_bias[5] = {"encoder.layer.0.attention.self.value.bias", "F32", {3}, f32_bytes({1, 2, 3})};
    refused(short_bias, 2, {}, "the value bias has 3 entries, its weight 4 output features");
    std::system(("rm -rf " + dir).c_str());
}

TEST_CASE("attention input: a PyTorch-layout weight gets the hint to transpose or import",
          "[import]") {
    const std::string dir = attnspec::test::temp_dir();
    const auto load = [&](const Eigen::MatrixXd& wq, const Eigen::MatrixXd& wk) {
        Provenance p;
        p.command_line = "test";
        ReportWriter w(dir + "/h.h5", p);
        w.root().write("X", as_matrix(ramp(12, 0), 3, 4));
        w.root().write("W_Q", wq);
        w.root().write("W_K", wk);
        w.root().write("W_V", wk);
        w.commit();
        return message_of([&] { load_attention_heads(dir + "/h.h5"); }, ExitCode::DataError);
    };
    const Eigen::MatrixXd ok = as_matrix(ramp(8, 1), 4, 2), torch = ok.transpose();
    CHECK(has(load(torch, ok),
              "is 2x4, expected 4xd (D = 4 from /X) (looks like PyTorch's "
              "(out, in) layout: transpose it, or convert the checkpoint with "
              "`attnspec import`)"));
    CHECK(has(load(ok, torch), "/W_K is 2x4, expected 4x2"));
    CHECK(has(load(ok, torch), "attnspec import"));
    const std::string unrelated = load(ok, as_matrix(ramp(12, 1), 4, 3));  // d mismatch only
    CHECK(has(unrelated, "/W_K is 4x3, expected 4x2"));
    CHECK_FALSE(has(unrelated, "PyTorch"));
    std::system(("rm -rf " + dir).c_str());
}
