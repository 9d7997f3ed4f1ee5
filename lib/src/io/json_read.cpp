// Recursive descent over the RFC 8259 grammar; numbers are validated and kept as written.
#include "attnspec/io/json_read.hpp"

#include <algorithm>
#include <functional>
#include <unordered_set>

#include "attnspec/base/errors.hpp"

namespace attnspec {
namespace {

constexpr int kMaxDepth = 64;

class Parser {
  public:
    Parser(const std::string& s, const std::string& what) : s_(s), what_(what) {}

    JsonValue document() {
        JsonValue v = value(0);
        skip_space();
        if (pos_ != s_.size()) fail("unexpected text after the JSON value");
        return v;
    }

  private:
    // A key as echoed in a message: at most 80 characters, then "...".
    static std::string shortened(const std::string& key) {
        if (key.size() <= 80) return key;
        size_t n = 80;
        while (n > 0 && (static_cast<unsigned char>(key[n]) & 0xC0) == 0x80) --n;  // UTF-8
        return key.substr(0, n) + "...";
    }
    [[noreturn]] void fail(const std::string& why) const {
        fail_data(what_ + ": malformed JSON at byte " + std::to_string(pos_) + ": " + why);
    }
    void skip_space() {
        while (pos_ < s_.size() &&
               (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
            ++pos_;
    }
    bool eat(char c) {
        skip_space();
        if (pos_ < s_.size() && s_[pos_] == c) return ++pos_, true;
        return false;
    }
    void expect(char c) {
        if (!eat(c)) fail(std::string("expected '") + c + "'");
    }
    bool literal(const char* word) {
        const std::string w(word);
        if (s_.compare(pos_, w.size(), w) != 0) return false;
        pos_ += w.size();
        return true;
    }

    JsonValue value(int depth) {
        if (depth > kMaxDepth) fail("nesting deeper than 64 levels");
        skip_space();
        if (pos_ >= s_.size()) fail("unexpected end of text");
        JsonValue v;
        const char c = s_[pos_];
        if (c == '{') {
            ++pos_;
            v.kind = JsonValue::Object;
            if (eat('}')) return v;
            // Keys seen so far, as indices into v.members hashed by the key: linear in the
            // number of keys (a scan per key made 200,000 keys take minutes).
            auto& mem = v.members;
            const auto hash = [&mem](std::uint32_t i) {
                return std::hash<std::string>()(mem[i].first);
            };
            const auto same = [&mem](std::uint32_t a, std::uint32_t b) {
                return mem[a].first == mem[b].first;
            };
            std::unordered_set<std::uint32_t, decltype(hash), decltype(same)> seen(16, hash, same);
            do {
                skip_space();
                if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a string key");
                if (mem.size() >= UINT32_MAX) fail("too many keys in one object");
                mem.emplace_back(string(), JsonValue());
                if (!seen.insert(static_cast<std::uint32_t>(mem.size() - 1)).second)
                    fail("duplicate key \"" + shortened(mem.back().first) + "\"");
                expect(':');
                mem.back().second = value(depth + 1);
            } while (eat(','));
            expect('}');
            v.key_order.resize(mem.size());
            for (std::uint32_t i = 0; i < v.key_order.size(); ++i) v.key_order[i] = i;
            std::sort(
                v.key_order.begin(), v.key_order.end(),
                [&mem](std::uint32_t a, std::uint32_t b) { return mem[a].first < mem[b].first; });
        } else if (c == '[') {
            ++pos_;
            v.kind = JsonValue::Array;
            if (eat(']')) return v;
            do v.items.push_back(value(depth + 1));
            while (eat(','));
            expect(']');
        } else if (c == '"') {
            v.kind = JsonValue::String;
            v.text = string();
        } else if (literal("true")) {
            v.kind = JsonValue::Bool;
            v.boolean = true;
        } else if (literal("false")) {
            v.kind = JsonValue::Bool;
        } else if (literal("null")) {
            v.kind = JsonValue::Null;
        } else {
            v.kind = JsonValue::Number;
            v.text = number();
        }
        return v;
    }

    std::string number() {
        const size_t start = pos_;
        auto digits = [&] {
            const size_t from = pos_;
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
            return pos_ - from;
        };
        if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
        const size_t first = pos_;
        const size_t n = digits();
        if (n == 0) fail("expected a value");
        if (n > 1 && s_[first] == '0') fail("a number may not start with 0");
        if (pos_ < s_.size() && s_[pos_] == '.') {
            ++pos_;
            if (digits() == 0) fail("expected digits after '.'");
        }
        if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
            ++pos_;
            if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
            if (digits() == 0) fail("expected digits in the exponent");
        }
        return s_.substr(start, pos_ - start);
    }

    unsigned hex4() {
        if (pos_ + 4 > s_.size()) fail("truncated \\u escape");
        unsigned u = 0;
        for (int i = 0; i < 4; ++i) {
            const char h = s_[pos_++];
            const int d = h >= '0' && h <= '9'   ? h - '0'
                          : h >= 'a' && h <= 'f' ? h - 'a' + 10
                          : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                 : -1;
            if (d < 0) fail("bad hex digit in \\u escape");
            u = u * 16 + static_cast<unsigned>(d);
        }
        return u;
    }

    static void put_utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }

    std::string string() {
        ++pos_;  // the opening quote
        std::string out;
        while (true) {
            if (pos_ >= s_.size()) fail("unterminated string");
            const char c = s_[pos_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (pos_ >= s_.size()) fail("unterminated escape");
            const char e = s_[pos_++];
            const std::string plain = "\"\\/bfnrt", decoded = "\"\\/\b\f\n\r\t";
            const size_t k = plain.find(e);
            if (k != std::string::npos) {
                out += decoded[k];
                continue;
            }
            if (e != 'u') fail(std::string("unknown escape \\") + e);
            unsigned cp = hex4();
            if (cp >= 0xD800 && cp < 0xDC00) {  // high surrogate: a low one must follow
                if (!literal("\\u")) fail("unpaired surrogate in \\u escape");
                const unsigned lo = hex4();
                if (lo < 0xDC00 || lo >= 0xE000) fail("unpaired surrogate in \\u escape");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp < 0xE000) {
                fail("unpaired surrogate in \\u escape");
            }
            put_utf8(out, cp);
        }
    }

    const std::string& s_;
    const std::string& what_;
    size_t pos_ = 0;
};

}  // namespace

const JsonValue* JsonValue::find(const std::string& key) const {
    if (key_order.size() == members.size() && !members.empty()) {
        const auto it = std::lower_bound(
            key_order.begin(), key_order.end(), key,
            [this](std::uint32_t i, const std::string& k) { return members[i].first < k; });
        if (it != key_order.end() && *it < members.size() && members[*it].first == key)
            return &members[*it].second;
        return nullptr;
    }
    for (const auto& [k, v] : members)
        if (k == key) return &v;
    return nullptr;
}

bool JsonValue::as_uint64(std::uint64_t& out) const {
    if (kind != Number || text.empty() || text.size() > 20) return false;
    std::uint64_t v = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return false;
        const auto d = static_cast<std::uint64_t>(c - '0');
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    out = v;
    return true;
}

const char* JsonValue::kind_name(Kind k) {
    static const char* names[] = {"null", "bool", "number", "string", "array", "object"};
    return names[k];
}

JsonValue parse_json(const std::string& text, const std::string& what) {
    return Parser(text, what).document();
}

}  // namespace attnspec
