// A minimal streaming JSON writer for `--json` output (one document on stdout). Non-finite
// doubles, which JSON cannot carry, are written as the strings "inf", "-inf" and "nan".
// CPU only.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace attnspec {

class JsonWriter {
  public:
    explicit JsonWriter(std::ostream& os) : os_(os) {}
    JsonWriter& begin_object();
    JsonWriter& end_object();
    JsonWriter& begin_array();
    JsonWriter& end_array();
    JsonWriter& key(const std::string& k);
    JsonWriter& value(const std::string& s);
    JsonWriter& value(const char* s) { return value(std::string(s)); }
    JsonWriter& value(double x);
    JsonWriter& value(std::int64_t x);
    JsonWriter& value(int x) { return value(static_cast<std::int64_t>(x)); }
    JsonWriter& value(std::uint64_t x);
    JsonWriter& value(bool b);
    JsonWriter& null();
    JsonWriter& values(const std::vector<double>& xs);
    template <class T>
    JsonWriter& kv(const std::string& k, const T& v) {
        key(k);
        return value(v);
    }
    void finish();  // newline after the top-level value

    static std::string escape(const std::string& s);

  private:
    void sep();
    JsonWriter& close(char bracket);
    std::ostream& os_;
    std::vector<bool> first_;  // per open container: no element written yet
    bool after_key_ = false;
    int depth() const { return static_cast<int>(first_.size()); }
};

}  // namespace attnspec
