#include "attnspec/base/json.hpp"

#include <cmath>
#include <cstdio>

namespace attnspec {

std::string JsonWriter::escape(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\r':
                out += "\\r";
                break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    return out + "\"";
}

void JsonWriter::sep() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!first_.empty()) {
        if (!first_.back()) os_ << ",";
        first_.back() = false;
        os_ << "\n" << std::string(2 * depth(), ' ');
    }
}

JsonWriter& JsonWriter::begin_object() {
    sep();
    os_ << "{";
    first_.push_back(true);
    return *this;
}
JsonWriter& JsonWriter::close(char bracket) {
    bool empty = first_.back();
    first_.pop_back();
    if (!empty) os_ << "\n" << std::string(2 * depth(), ' ');
    os_ << bracket;
    return *this;
}
JsonWriter& JsonWriter::end_object() { return close('}'); }
JsonWriter& JsonWriter::begin_array() {
    sep();
    os_ << "[";
    first_.push_back(true);
    return *this;
}
JsonWriter& JsonWriter::end_array() { return close(']'); }
JsonWriter& JsonWriter::key(const std::string& k) {
    sep();
    os_ << escape(k) << ": ";
    after_key_ = true;
    return *this;
}
JsonWriter& JsonWriter::value(const std::string& s) {
    sep();
    os_ << escape(s);
    return *this;
}
JsonWriter& JsonWriter::value(double x) {
    sep();
    if (std::isnan(x))
        os_ << "\"nan\"";
    else if (std::isinf(x))
        os_ << (x > 0 ? "\"inf\"" : "\"-inf\"");
    else {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", x);
        os_ << buf;
    }
    return *this;
}
JsonWriter& JsonWriter::value(std::int64_t x) {
    sep();
    os_ << x;
    return *this;
}
JsonWriter& JsonWriter::value(std::uint64_t x) {
    sep();
    os_ << x;
    return *this;
}
JsonWriter& JsonWriter::value(bool b) {
    sep();
    os_ << (b ? "true" : "false");
    return *this;
}
JsonWriter& JsonWriter::null() {
    sep();
    os_ << "null";
    return *this;
}
JsonWriter& JsonWriter::values(const std::vector<double>& xs) {
    begin_array();
    for (double x : xs) value(x);
    return end_array();
}
void JsonWriter::finish() { os_ << "\n"; }

}  // namespace attnspec
