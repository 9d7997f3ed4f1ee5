// NumPy .npz (a zip archive of .npy members, PKWARE APPNOTE 6.3: end of central directory, with
// the zip64 records NumPy writes for large archives; members stored or deflated, CRC-32 checked)
// and the .npy format itself (NEP 1, versions 1.0, 2.0, 3.0).
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/memory.hpp"
#include "attnspec/io/tensor_files.hpp"
#include "tensor_files_internal.hpp"

namespace attnspec {
namespace {

using detail::le_uint;

// ---- .npy header: a Python dict literal such as {'descr': '<f8', 'fortran_order': False,
// 'shape': (3, 4), } padded with spaces and a newline.
struct NpyHeader {
    std::string descr;
    bool fortran = false;
    std::vector<std::int64_t> shape;
};

NpyHeader npy_header(const std::string& bytes, const std::string& what, std::uint64_t* data_at);

class DictParser {
  public:
    DictParser(const std::string& s, const std::string& what) : s_(s), what_(what) {}
    NpyHeader parse() {
        NpyHeader h;
        bool seen[3] = {false, false, false};
        expect('{');
        while (!peek('}')) {
            const std::string key = quoted();
            expect(':');
            if (key == "descr") {
                if (peek('[')) bad("a structured dtype (descr is a list) is not supported");
                h.descr = quoted(), seen[0] = true;
            } else if (key == "fortran_order") {
                h.fortran = boolean(), seen[1] = true;
            } else if (key == "shape") {
                h.shape = tuple(), seen[2] = true;
            } else {
                bad("unknown header key '" + key + "'");
            }
            if (!peek('}')) expect(',');
        }
        expect('}');
        space();
        if (pos_ != s_.size()) bad("unexpected text after the header dict");
        if (!(seen[0] && seen[1] && seen[2]))
            bad("the header lacks one of 'descr', 'fortran_order', 'shape'");
        return h;
    }

  private:
    [[noreturn]] void bad(const std::string& why) const {
        fail_data(what_ + ": malformed .npy header: " + why);
    }
    void space() {
        while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n')) ++pos_;
    }
    bool peek(char c) {
        space();
        return pos_ < s_.size() && s_[pos_] == c;
    }
    void expect(char c) {
        if (!peek(c)) bad(std::string("expected '") + c + "'");
        ++pos_;
    }
    std::string quoted() {
        space();
        if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) bad("expected a string");
        const char q = s_[pos_++];
        const size_t end = s_.find(q, pos_);
        if (end == std::string::npos) bad("unterminated string");
        std::string out = s_.substr(pos_, end - pos_);
        pos_ = end + 1;
        return out;
    }
    bool boolean() {
        space();
        for (const char* w : {"True", "False"})
            if (s_.compare(pos_, std::strlen(w), w) == 0) {
                pos_ += std::strlen(w);
                return w[0] == 'T';
            }
        bad("fortran_order must be True or False");
    }
    std::vector<std::int64_t> tuple() {
        std::vector<std::int64_t> out;
        expect('(');
        while (!peek(')')) {
            std::int64_t v = 0;
            size_t n = 0;
            for (; pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'; ++pos_, ++n) {
                if (v > (INT64_MAX - 9) / 10) bad("a dimension overflows");
                v = v * 10 + (s_[pos_] - '0');
            }
            if (n == 0) bad("a shape entry is not a non-negative integer");
            if (out.size() == 32) bad("more than 32 dimensions");
            out.push_back(v);
            if (!peek(')')) expect(',');
        }
        expect(')');
        return out;
    }
    const std::string& s_;
    const std::string& what_;
    size_t pos_ = 0;
};

detail::FloatKind npy_kind(const std::string& descr, const std::string& what) {
    if (descr == "<f8") return detail::FloatKind::f64;
    if (descr == "<f4") return detail::FloatKind::f32;
    if (descr == "<f2") return detail::FloatKind::f16;
    if (descr == "|b1" || descr == "|u1") return detail::FloatKind::u8;  // masks
    if (descr.size() > 1 && descr[1] == 'O')
        fail_data(what + ": object arrays (dtype '" + descr +
                  "') are refused; store float32 or "
                  "float64 arrays");
    if (!descr.empty() && descr[0] == '>')
        fail_data(what + ": big-endian dtype '" + descr + "' is not supported; save it as '<" +
                  descr.substr(1) + "' (little-endian)");
    fail_data(what + ": dtype '" + descr +
              "' is not supported (float16 '<f2', float32 '<f4', float64 '<f8'; bool '|b1' or "
              "uint8 '|u1' for masks)");
}

// ---- zip
std::uint32_t crc32_of(const std::string& bytes) {
    uLong c = crc32(0L, Z_NULL, 0);
    for (std::uint64_t off = 0; off < bytes.size(); off += 1u << 30) {
        const auto len = static_cast<uInt>(std::min<std::uint64_t>(bytes.size() - off, 1u << 30));
        c = crc32(c, reinterpret_cast<const Bytef*>(bytes.data() + off), len);
    }
    return static_cast<std::uint32_t>(c);
}

struct Member {
    std::string file_name;
    std::uint64_t local_offset = 0, compressed = 0, size = 0;
    std::uint32_t crc = 0;
    int method = 0;
};

class NpzFile : public TensorFile {
  public:
    explicit NpzFile(const std::string& path) : TensorFile(path), file_(path) { index(); }
    const std::vector<TensorEntry>& entries() const override { return entries_; }
    std::string format() const override { return "npz"; }
    Tensor read(const std::string& name) const override;
    std::vector<std::int64_t> declared_shape(const std::string& name) const override;
    // The text of a 0-d byte-string member ('|S<n>'); "" when there is no member `name`.
    std::string text(const std::string& name) const;

  private:
    [[noreturn]] void bad(const std::string& why) const {
        fail_data("'" + path_ + "' is not a readable .npz archive: " + why);
    }
    void index();
    std::string member_bytes(const Member& m) const;
    std::uint64_t member_data(const Member& m) const;
    detail::ByteFile file_;
    std::vector<TensorEntry> entries_;
    std::map<std::string, Member> members_;
    std::uint64_t cd_offset_ = 0;
};

void NpzFile::index() {
    const std::uint64_t size = file_.size();
    if (size < 22) bad("shorter than an end-of-central-directory record");
    const std::uint64_t tail_len = std::min<std::uint64_t>(size, 22 + 65535);
    const std::string tail = file_.read(size - tail_len, tail_len);
    size_t eocd = std::string::npos;
    for (size_t i = tail.size() - 22 + 1; i-- > 0;)
        if (tail.compare(i, 4, "PK\x05\x06") == 0 &&
            i + 22 + le_uint(&tail[i + 20], 2) == tail.size()) {
            eocd = i;
            break;
        }
    if (eocd == std::string::npos) bad("no end-of-central-directory record");
    std::uint64_t count = le_uint(&tail[eocd + 10], 2), cd_size = le_uint(&tail[eocd + 12], 4);
    cd_offset_ = le_uint(&tail[eocd + 16], 4);
    const std::uint64_t eocd_pos = size - tail_len + eocd;
    std::uint64_t cd_end_limit = eocd_pos;
    if (count == 0xFFFF || cd_size == 0xFFFFFFFF || cd_offset_ == 0xFFFFFFFF) {  // zip64
        if (eocd_pos < 20) bad("zip64 locator missing");
        const std::string loc = file_.read(eocd_pos - 20, 20);
        if (loc.compare(0, 4, "PK\x06\x07") != 0) bad("zip64 locator missing");
        const std::uint64_t rec = le_uint(&loc[8], 8);
        if (rec > eocd_pos - 20 || eocd_pos - 20 - rec < 56) bad("zip64 record out of range");
        const std::string z = file_.read(rec, 56);
        if (z.compare(0, 4, "PK\x06\x06") != 0) bad("zip64 end record missing");
        count = le_uint(&z[32], 8), cd_size = le_uint(&z[40], 8), cd_offset_ = le_uint(&z[48], 8);
        cd_end_limit = rec;
    }
    if (cd_offset_ > cd_end_limit || cd_size > cd_end_limit - cd_offset_)
        bad("central directory out of range");
    if (count > cd_size / 46) bad("more members declared than the central directory holds");
    const std::string cd = file_.read(cd_offset_, cd_size);
    size_t p = 0;
    bool pickle = false;
    for (std::uint64_t i = 0; i < count; ++i) {
        if (p + 46 > cd.size() || cd.compare(p, 4, "PK\x01\x02") != 0)
            bad("central directory entry " + std::to_string(i) + " is malformed");
        Member m;
        const int flags = static_cast<int>(le_uint(&cd[p + 8], 2));
        m.method = static_cast<int>(le_uint(&cd[p + 10], 2));
        m.crc = static_cast<std::uint32_t>(le_uint(&cd[p + 16], 4));
        m.compressed = le_uint(&cd[p + 20], 4), m.size = le_uint(&cd[p + 24], 4);
        const size_t n = le_uint(&cd[p + 28], 2), extra = le_uint(&cd[p + 30], 2),
                     comment = le_uint(&cd[p + 32], 2);
        m.local_offset = le_uint(&cd[p + 42], 4);
        if (p + 46 + n + extra + comment > cd.size()) bad("central directory entry overruns");
        m.file_name = cd.substr(p + 46, n);
        for (size_t e = p + 46 + n; e + 4 <= p + 46 + n + extra;) {  // zip64 extended information
            const auto id = le_uint(&cd[e], 2), len = le_uint(&cd[e + 2], 2);
            if (e + 4 + len > p + 46 + n + extra) bad("extra field overruns in " + m.file_name);
            size_t q = e + 4;
            for (std::uint64_t* field : {&m.size, &m.compressed, &m.local_offset})
                if (id == 1 && *field == 0xFFFFFFFF) {
                    if (q + 8 > e + 4 + len) bad("short zip64 field in " + m.file_name);
                    *field = le_uint(&cd[q], 8), q += 8;
                }
            e += 4 + len;
        }
        p += 46 + n + extra + comment;
        if (flags & 1) bad("member '" + m.file_name + "' is encrypted");
        if (m.method != 0 && m.method != 8)
            bad("member '" + m.file_name + "' uses compression method " + std::to_string(m.method) +
                " (only stored and deflate are supported)");
        if (m.method == 0 && m.compressed != m.size) bad("stored member sizes differ");
        if (m.local_offset > cd_offset_ || m.compressed > cd_offset_ - m.local_offset)
            bad("member '" + m.file_name + "' lies outside the archive data");
        const size_t dot = m.file_name.size() >= 4 ? m.file_name.size() - 4 : 0;
        if (m.file_name.compare(dot, 4, ".npy") != 0) {  // not an array
            pickle = pickle || m.file_name.find("data.pkl") != std::string::npos;
            continue;
        }
        const std::string name = m.file_name.substr(0, dot);
        if (members_.count(name)) bad("member '" + m.file_name + "' appears twice");
        entries_.push_back({name, "", {}, m.size / 2});  // float16 is the smallest accepted
        members_.emplace(name, m);
    }
    if (entries_.empty() && pickle)
        fail_data("'" + path_ +
                  "' is a PyTorch pickle checkpoint (.bin/.pt), which is not read "
                  "(unpickling runs code): save it as safetensors (safetensors.torch.save_file) or "
                  "as .npz");
}

// Where the data of member `m` start (after its local header), checked to lie in the archive.
std::uint64_t NpzFile::member_data(const Member& m) const {
    if (m.local_offset > cd_offset_ || cd_offset_ - m.local_offset < 30) bad("bad local header");
    const std::string local = file_.read(m.local_offset, 30);
    if (local.compare(0, 4, "PK\x03\x04") != 0) bad("bad local header for " + m.file_name);
    const std::uint64_t data =
        m.local_offset + 30 + le_uint(&local[26], 2) + le_uint(&local[28], 2);
    if (data > cd_offset_ || m.compressed > cd_offset_ - data)
        bad("member '" + m.file_name + "' data overrun the archive");
    return data;
}

std::vector<std::int64_t> NpzFile::declared_shape(const std::string& name) const {
    const auto it = members_.find(name);
    if (it == members_.end()) fail_data(path_ + ": no array '" + name + "'");
    const Member& m = it->second;
    const std::string what = path_ + ":" + m.file_name;
    constexpr std::uint64_t kHead = 1 << 16;  // a .npy header is far shorter
    const std::uint64_t data = member_data(m);
    std::string head;
    if (m.method == 0) {
        head = file_.read(data, std::min(m.compressed, kHead));
    } else {
        std::string raw = file_.read(data, std::min(m.compressed, kHead));
        head.assign(static_cast<size_t>(std::min(m.size, kHead)), '\0');
        z_stream z{};
        if (inflateInit2(&z, -MAX_WBITS) != Z_OK) bad("zlib could not start");
        z.next_in = reinterpret_cast<Bytef*>(raw.data());
        z.avail_in = static_cast<uInt>(raw.size());
        z.next_out = reinterpret_cast<Bytef*>(head.data());
        z.avail_out = static_cast<uInt>(head.size());
        const int rc = inflate(&z, Z_SYNC_FLUSH);
        head.resize(head.size() - z.avail_out);
        inflateEnd(&z);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
            bad("member '" + m.file_name + "' does not inflate");
    }
    return npy_header(head, what, nullptr).shape;
}

std::string NpzFile::member_bytes(const Member& m) const {
    const std::string what = path_ + ":" + m.file_name;
    check_allocation(double(m.size) + double(m.compressed), memory_limit_bytes(), "reading " + what,
                     "max_bytes");
    const std::uint64_t data = member_data(m);
    std::string raw = file_.read(data, m.compressed);
    std::string out;
    if (m.method == 0) {
        out = std::move(raw);
    } else {
        out.assign(m.size, '\0');
        z_stream z{};
        if (inflateInit2(&z, -MAX_WBITS) != Z_OK) bad("zlib could not start");
        z.next_in = reinterpret_cast<Bytef*>(raw.data());
        z.next_out = reinterpret_cast<Bytef*>(out.data());
        std::uint64_t in_left = raw.size(), out_left = out.size();
        int rc = Z_OK;
        while (rc == Z_OK) {  // chunks of at most 1 GiB: zlib counts in 32 bits
            const uInt in_chunk = static_cast<uInt>(std::min<std::uint64_t>(in_left, 1u << 30));
            const uInt out_chunk = static_cast<uInt>(std::min<std::uint64_t>(out_left, 1u << 30));
            z.avail_in = in_chunk, z.avail_out = out_chunk;
            rc = inflate(&z, Z_NO_FLUSH);
            in_left -= in_chunk - z.avail_in, out_left -= out_chunk - z.avail_out;
            if (rc == Z_OK && in_chunk == z.avail_in && out_chunk == z.avail_out) break;
        }
        inflateEnd(&z);
        if (rc != Z_STREAM_END || out_left != 0 || in_left != 0)
            bad("member '" + m.file_name + "' does not inflate to its declared " +
                std::to_string(m.size) + " bytes");
    }
    if (crc32_of(out) != m.crc) bad("member '" + m.file_name + "' fails its CRC-32 check");
    return out;
}

Tensor NpzFile::read(const std::string& name) const {
    const auto it = members_.find(name);
    if (it == members_.end()) fail_data(path_ + ": no array '" + name + "'");
    return parse_npy(member_bytes(it->second), path_ + ":" + it->second.file_name, keep_nonfinite_);
}

std::string NpzFile::text(const std::string& name) const {
    const auto it = members_.find(name);
    if (it == members_.end()) return "";
    const Member& m = it->second;
    const std::string what = path_ + ":" + m.file_name;
    constexpr std::uint64_t kMaxText = 1u << 24;  // 16 MiB: a case description, not data
    if (m.size > kMaxText) fail_data(what + ": a text member larger than 16 MiB");
    const std::string bytes = member_bytes(m);
    std::uint64_t data = 0;
    const NpyHeader h = npy_header(bytes, what, &data);
    if (h.descr.size() < 3 || h.descr.compare(0, 2, "|S") != 0 || !h.shape.empty() ||
        h.descr.find_first_not_of("0123456789", 2) != std::string::npos ||
        std::to_string(bytes.size() - data) != h.descr.substr(2))
        fail_data(what + ": not a 0-d byte string (dtype '" + h.descr + "', shape " +
                  detail::shape_text(h.shape) + ")");
    std::string t = bytes.substr(data);
    t.erase(t.find_last_not_of('\0') + 1);  // numpy.bytes_ drops trailing NULs too
    return t;
}

}  // namespace

namespace {
// The header at the start of .npy `bytes` (which may stop after it); `data` gets the offset of
// the array data.
NpyHeader npy_header(const std::string& bytes, const std::string& what, std::uint64_t* data_at) {
    if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
        fail_data(what + ": not a .npy array (no \\x93NUMPY magic)");
    const int major = static_cast<unsigned char>(bytes[6]);
    if (major < 1 || major > 3)
        fail_data(what + ": .npy format version " + std::to_string(major) + " is not supported");
    const size_t len_bytes = major == 1 ? 2 : 4;
    if (bytes.size() < 8 + len_bytes) fail_data(what + ": truncated .npy header");
    const std::uint64_t header_len = le_uint(&bytes[8], static_cast<int>(len_bytes));
    const std::uint64_t data = 8 + len_bytes + header_len;
    if (data > bytes.size()) fail_data(what + ": the .npy header runs past the end");
    if (data_at) *data_at = data;
    return DictParser(bytes.substr(8 + len_bytes, header_len), what).parse();
}

}  // namespace

Tensor parse_npy(const std::string& bytes, const std::string& what, bool keep_nonfinite) {
    std::uint64_t data = 0;
    const NpyHeader h = npy_header(bytes, what, &data);
    const detail::FloatKind kind = npy_kind(h.descr, what);
    const std::uint64_t count = detail::element_count(h.shape, what);
    const std::uint64_t need = count * detail::float_bytes(kind);
    if (bytes.size() - data != need)
        fail_data(what + ": shape " + detail::shape_text(h.shape) + " of '" + h.descr + "' needs " +
                  std::to_string(need) + " data bytes, the member holds " +
                  std::to_string(bytes.size() - data));
    check_allocation(8.0 * double(count), memory_limit_bytes(), "reading " + what, "max_bytes");
    Tensor t;
    t.shape = h.shape;
    t.dtype = h.descr;
    t.values = detail::decode_floats(bytes.data() + data, count, kind, what, keep_nonfinite);
    if (h.fortran && h.shape.size() > 1) {  // column-major -> row-major
        std::vector<double> c(t.values.size());
        const size_t rank = h.shape.size();
        std::vector<std::int64_t> idx(rank, 0);
        for (std::uint64_t f = 0; f < count; ++f) {
            std::uint64_t r = 0;
            for (size_t k = 0; k < rank; ++k) r = r * h.shape[k] + idx[k];
            c[r] = t.values[f];
            for (size_t k = 0; k < rank && ++idx[k] == h.shape[k]; ++k) idx[k] = 0;
        }
        t.values = std::move(c);
    }
    return t;
}

std::unique_ptr<TensorFile> open_npz(const std::string& path) {
    return std::make_unique<NpzFile>(path);
}

std::string read_npz_text(const std::string& path, const std::string& name) {
    return NpzFile(path).text(name);
}

}  // namespace attnspec
