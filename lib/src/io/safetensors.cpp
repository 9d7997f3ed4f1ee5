// safetensors: an unsigned 64-bit little-endian header length n, n bytes of a JSON object
// {"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {..}},
// then the data buffer; offsets are relative to the buffer. Validated before any tensor is read:
// header length within the file and at most 100 MiB, every entry with exactly those three keys,
// a known dtype, end - begin = elements x dtype size, end within the buffer, no two tensors
// overlapping.
#include <algorithm>
#include <map>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/memory.hpp"
#include "attnspec/io/json_read.hpp"
#include "attnspec/io/tensor_files.hpp"
#include "tensor_files_internal.hpp"

namespace attnspec {
namespace {

constexpr std::uint64_t kMaxHeader = 100ull << 20;

struct Slot {
    std::string dtype;
    std::uint64_t begin = 0, end = 0;
};

int dtype_bytes(const std::string& dtype) {
    static const std::map<std::string, int> sizes = {
        {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
        {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
        {"U32", 4},  {"F32", 4}, {"I64", 8}, {"U64", 8},     {"F64", 8}};
    const auto it = sizes.find(dtype);
    return it == sizes.end() ? 0 : it->second;
}

class SafetensorsFile : public TensorFile {
  public:
    explicit SafetensorsFile(const std::string& path) : TensorFile(path), file_(path) { index(); }
    const std::vector<TensorEntry>& entries() const override { return entries_; }
    std::string format() const override { return "safetensors"; }
    Tensor read(const std::string& name) const override;

  private:
    [[noreturn]] void bad(const std::string& why) const {
        fail_data("'" + path_ + "' is not a valid safetensors file: " + why);
    }
    void index();
    void add_entry(const std::string& name, const JsonValue& v, std::uint64_t buffer);
    detail::ByteFile file_;
    std::vector<TensorEntry> entries_;
    std::map<std::string, Slot> slots_;
    std::uint64_t data_start_ = 0;
};

void SafetensorsFile::index() {
    const std::uint64_t size = file_.size();
    if (size < 8) bad("shorter than the 8-byte header length");
    const std::uint64_t n = detail::le_uint(file_.read(0, 8).data(), 8);
    if (n > size - 8)
        bad("header length " + std::to_string(n) + " exceeds the file (" + std::to_string(size) +
            " bytes)");
    if (n > kMaxHeader) bad("header length " + std::to_string(n) + " is above 100 MiB");
    if (n < 2) bad("header length " + std::to_string(n) + " is too short for a JSON object");
    data_start_ = 8 + n;
    const JsonValue header = parse_json(file_.read(8, n), path_ + " (safetensors header)");
    if (header.kind != JsonValue::Object) bad("the header is not a JSON object");
    for (const auto& [name, v] : header.members) {
        if (name == "__metadata__") {
            if (v.kind != JsonValue::Object) bad("__metadata__ is not an object");
            for (const auto& m : v.members)
                if (m.second.kind != JsonValue::String)
                    bad("__metadata__ value '" + m.first + "' is not a string");
            continue;
        }
        add_entry(name, v, size - data_start_);
    }
    std::vector<const Slot*> order;
    for (const auto& [name, s] : slots_) order.push_back(&s);
    std::sort(order.begin(), order.end(), [](const Slot* a, const Slot* b) {
        return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
    });
    for (size_t i = 1; i < order.size(); ++i)
        if (order[i]->begin < order[i - 1]->end)
            bad("two tensors overlap (data offsets " + std::to_string(order[i - 1]->begin) + ".." +
                std::to_string(order[i - 1]->end) + " and " + std::to_string(order[i]->begin) +
                ".." + std::to_string(order[i]->end) + ")");
}

void SafetensorsFile::add_entry(const std::string& name, const JsonValue& v, std::uint64_t buffer) {
    const std::string what = "tensor '" + name + "'";
    if (v.kind != JsonValue::Object) bad(what + " is not an object");
    const JsonValue* dtype = v.find("dtype");
    const JsonValue* shape = v.find("shape");
    const JsonValue* offsets = v.find("data_offsets");
    if (!dtype || !shape || !offsets || v.members.size() != 3)
        bad(what + " must have exactly the keys dtype, shape and data_offsets");
    if (dtype->kind != JsonValue::String) bad(what + ": dtype is not a string");
    const int width = dtype_bytes(dtype->text);
    if (width == 0) bad(what + " has an unknown dtype '" + dtype->text + "'");
    if (shape->kind != JsonValue::Array || shape->items.size() > 32)
        bad(what + ": shape is not an array of at most 32 dimensions");
    TensorEntry e{name, dtype->text, {}, 0};
    for (const JsonValue& d : shape->items) {
        std::uint64_t u = 0;
        if (!d.as_uint64(u) || u > (1ull << 53))
            bad(what + ": a shape entry is not a non-negative integer");
        e.shape.push_back(static_cast<std::int64_t>(u));
    }
    const std::uint64_t count = detail::element_count(e.shape, path_ + ": " + what);
    e.max_elements = count;
    Slot s{dtype->text, 0, 0};
    if (offsets->kind != JsonValue::Array || offsets->items.size() != 2 ||
        !offsets->items[0].as_uint64(s.begin) || !offsets->items[1].as_uint64(s.end))
        bad(what + ": data_offsets is not a pair of non-negative integers");
    if (s.begin > s.end || s.end > buffer)
        bad(what + ": data_offsets [" + std::to_string(s.begin) + ", " + std::to_string(s.end) +
            "] lie outside the data buffer of " + std::to_string(buffer) + " bytes");
    if (s.end - s.begin != count * static_cast<std::uint64_t>(width))
        bad(what + ": shape " + detail::shape_text(e.shape) + " of " + dtype->text + " needs " +
            std::to_string(count * width) + " bytes, data_offsets span " +
            std::to_string(s.end - s.begin));
    entries_.push_back(std::move(e));
    slots_.emplace(name, s);
}

Tensor SafetensorsFile::read(const std::string& name) const {
    const auto it = slots_.find(name);
    if (it == slots_.end()) fail_data(path_ + ": no tensor '" + name + "'");
    const Slot& s = it->second;
    const std::string what = path_ + ": tensor '" + name + "'";
    detail::FloatKind kind = detail::FloatKind::f32;
    if (s.dtype == "F64")
        kind = detail::FloatKind::f64;
    else if (s.dtype == "F16")
        kind = detail::FloatKind::f16;
    else if (s.dtype == "BF16")
        kind = detail::FloatKind::bf16;
    else if (s.dtype != "F32")
        fail_data(what + " has dtype " + s.dtype +
                  "; only F32, F64, F16 and BF16 tensors can be imported");
    const std::uint64_t count = (s.end - s.begin) / detail::float_bytes(kind);
    check_allocation(8.0 * double(count) + double(s.end - s.begin), memory_limit_bytes(),
                     "reading " + what, "max_bytes");
    Tensor t;
    for (const TensorEntry& e : entries_)
        if (e.name == name) t.shape = e.shape;
    t.dtype = s.dtype;
    const std::string raw = file_.read(data_start_ + s.begin, s.end - s.begin);
    t.values = detail::decode_floats(raw.data(), count, kind, what);
    return t;
}

}  // namespace

std::unique_ptr<TensorFile> open_safetensors(const std::string& path) {
    return std::make_unique<SafetensorsFile>(path);
}

}  // namespace attnspec
