// A strict JSON reader (RFC 8259) for the small documents that come with checkpoints: the header
// of a safetensors file and a model's config.json. Hostile input: nesting deeper than 64 levels,
// duplicate keys, control characters in strings, trailing text and malformed escapes are refused
// with DataError (65) naming `what` and the byte offset. CPU only.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attnspec {

struct JsonValue {
    enum Kind { Null, Bool, Number, String, Array, Object };
    Kind kind = Null;
    bool boolean = false;
    std::string text;              // String: the decoded value; Number: the literal as written
    std::vector<JsonValue> items;  // Array
    std::vector<std::pair<std::string, JsonValue>> members;  // Object, file order, unique keys
    // Object (set by parse_json): the indices of `members` sorted by key, so that find() is a
    // binary search; find() falls back to a linear scan when it does not cover `members`.
    std::vector<std::uint32_t> key_order;

    const JsonValue* find(const std::string& key) const;  // Object member or nullptr
    // A Number written as a plain non-negative integer ("0", "384") that fits in 64 bits.
    bool as_uint64(std::uint64_t& out) const;
    static const char* kind_name(Kind k);  // "null", "bool", "number", ...
};

JsonValue parse_json(const std::string& text, const std::string& what);

}  // namespace attnspec
