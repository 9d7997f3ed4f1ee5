// encode_check_result / decode_check_result (instance_spread.hpp): a flat little-endian byte
// image of a CheckResult, sent between the processes of verify --mpi. Integers as 8 bytes,
// doubles as their 8-byte pattern, strings and lists as a length then their items, matrices as
// rows, cols and the column-major entries. Both ends are the same build, so there is no version.
#include <cstdint>
#include <cstring>
#include <string>

#include "attnspec/base/errors.hpp"
#include "attnspec/proofs/instance_spread.hpp"

namespace attnspec::proofs {
namespace {

void put_u64(std::string& out, std::uint64_t v) {
    char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xffu);
    out.append(b, 8);
}
void put_f64(std::string& out, double x) {
    std::uint64_t v = 0;
    std::memcpy(&v, &x, sizeof v);
    put_u64(out, v);
}
void put_str(std::string& out, const std::string& s) {
    put_u64(out, s.size());
    out += s;
}
void put_interval(std::string& out, const Interval& i) {
    put_f64(out, i.lo);
    put_f64(out, i.hi);
}

struct Reader {
    const char* p;
    const char* end;
    void need(std::uint64_t n) const {
        if (static_cast<std::uint64_t>(end - p) < n)
            fail_data("instance exchange: a result's bytes end early (truncated or malformed)");
    }
    std::uint64_t u64() {
        need(8);
        std::uint64_t v = 0;
        for (int i = 0; i < 8; ++i)
            v |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
        p += 8;
        return v;
    }
    double f64() {
        const std::uint64_t v = u64();
        double x = 0;
        std::memcpy(&x, &v, sizeof x);
        return x;
    }
    // A count of items of at least `min_bytes` each: refused when the rest cannot hold them, so a
    // corrupt length never asks for a huge allocation.
    std::size_t count(std::uint64_t min_bytes) {
        const std::uint64_t n = u64();
        if (min_bytes > 0 && n > static_cast<std::uint64_t>(end - p) / min_bytes)
            fail_data("instance exchange: a length of " + std::to_string(n) +
                      " items exceeds the bytes left (malformed)");
        return static_cast<std::size_t>(n);
    }
    std::string str() {
        const std::size_t n = count(1);
        std::string s(p, n);
        p += n;
        return s;
    }
    Interval interval() {
        Interval i;
        i.lo = f64();
        i.hi = f64();
        return i;
    }
    template <class E>
    E small_enum(std::uint64_t last) {
        const std::uint64_t v = u64();
        if (v > last) fail_data("instance exchange: an enumeration value is out of range");
        return static_cast<E>(v);
    }
};

}  // namespace

void encode_check_result(const CheckResult& r, std::string& out) {
    put_str(out, r.check);
    put_str(out, r.claim);
    put_str(out, r.regime);
    put_u64(out, r.seed);
    put_u64(out, static_cast<std::uint64_t>(r.verdict));
    put_u64(out, r.hypotheses.size());
    for (const auto& h : r.hypotheses) {
        put_str(out, h.name);
        put_u64(out, h.met ? 1 : 0);
        put_str(out, h.detail);
    }
    put_u64(out, r.comparisons.size());
    for (const auto& c : r.comparisons) {
        put_str(out, c.name);
        put_str(out, c.lhs_name);
        put_str(out, c.rhs_name);
        put_f64(out, c.lhs);
        put_f64(out, c.rhs);
        put_interval(out, c.lhs_enc);
        put_interval(out, c.rhs_enc);
        put_u64(out, static_cast<std::uint64_t>(c.rel));
        put_u64(out, c.attainable ? 1 : 0);
        put_u64(out, static_cast<std::uint64_t>(c.verdict));
        put_f64(out, c.margin);
        put_f64(out, c.ratio);
        put_str(out, c.basis);
    }
    put_u64(out, r.tolerances.size());
    for (const auto& t : r.tolerances) {
        put_str(out, t.name);
        put_f64(out, t.value);
        put_str(out, t.reason);
    }
    put_u64(out, r.conventions.size());
    for (const auto& [k, v] : r.conventions) {
        put_str(out, k);
        put_str(out, v);
    }
    put_u64(out, r.values.size());
    for (const auto& [k, v] : r.values) {
        put_str(out, k);
        put_f64(out, v);
    }
    put_u64(out, r.instance.size());
    for (const auto& [k, m] : r.instance) {
        put_str(out, k);
        put_u64(out, static_cast<std::uint64_t>(m.rows()));
        put_u64(out, static_cast<std::uint64_t>(m.cols()));
        for (Eigen::Index i = 0; i < m.size(); ++i) put_f64(out, m.data()[i]);
    }
    put_str(out, r.note);
}

CheckResult decode_check_result(const char** p, const char* end) {
    Reader in{*p, end};
    CheckResult r;
    r.check = in.str();
    r.claim = in.str();
    r.regime = in.str();
    r.seed = in.u64();
    r.verdict = in.small_enum<Verdict>(3);
    r.hypotheses.resize(in.count(24));
    for (auto& h : r.hypotheses) {
        h.name = in.str();
        h.met = in.u64() != 0;
        h.detail = in.str();
    }
    r.comparisons.resize(in.count(136));
    for (auto& c : r.comparisons) {
        c.name = in.str();
        c.lhs_name = in.str();
        c.rhs_name = in.str();
        c.lhs = in.f64();
        c.rhs = in.f64();
        c.lhs_enc = in.interval();
        c.rhs_enc = in.interval();
        c.rel = in.small_enum<Relation>(2);
        c.attainable = in.u64() != 0;
        c.verdict = in.small_enum<Verdict>(3);
        c.margin = in.f64();
        c.ratio = in.f64();
        c.basis = in.str();
    }
    r.tolerances.resize(in.count(24));
    for (auto& t : r.tolerances) {
        t.name = in.str();
        t.value = in.f64();
        t.reason = in.str();
    }
    r.conventions.resize(in.count(16));
    for (auto& [k, v] : r.conventions) {
        k = in.str();
        v = in.str();
    }
    r.values.resize(in.count(16));
    for (auto& [k, v] : r.values) {
        k = in.str();
        v = in.f64();
    }
    r.instance.resize(in.count(24));
    for (auto& [k, m] : r.instance) {
        k = in.str();
        const std::uint64_t rows = in.u64(), cols = in.u64();
        constexpr std::uint64_t kMaxDim = std::uint64_t{1} << 31;  // an Eigen::Index, any product
        if (rows > kMaxDim || cols > kMaxDim ||
            (cols != 0 && rows > static_cast<std::uint64_t>(end - in.p) / 8 / cols))
            fail_data("instance exchange: a " + std::to_string(rows) + " x " +
                      std::to_string(cols) + " matrix exceeds the bytes left (malformed)");
        m.resize(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
        for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = in.f64();
    }
    r.note = in.str();
    *p = in.p;
    return r;
}

std::string encode_owned_slots(const std::vector<InstanceSpread::Slot>& slots) {
    std::string out;
    for (std::size_t i = 0; i < slots.size(); ++i) {
        const auto& s = slots[i];
        if (!s.owned) continue;
        put_u64(out, i);
        if (s.error_code != 0) {
            put_u64(out, 2);
            put_u64(out, static_cast<std::uint64_t>(s.error_code));
            put_str(out, s.error);
            continue;
        }
        put_u64(out, s.result ? 1 : 0);
        if (s.result) encode_check_result(*s.result, out);
        put_u64(out, s.numbers.size());
        for (double x : s.numbers) put_f64(out, x);
        put_str(out, s.text);
    }
    return out;
}

void decode_owned_slots(const std::string& bytes, std::vector<InstanceSpread::Slot>& slots) {
    const char* p = bytes.data();
    const char* end = p + bytes.size();
    while (p != end) {
        Reader in{p, end};
        const std::uint64_t i = in.u64();
        if (i >= slots.size() || slots[i].owned)
            fail_data("instance exchange: slot " + std::to_string(i) + " of " +
                      std::to_string(slots.size()) + " is not another process's (malformed)");
        auto& s = slots[i];
        const std::uint64_t kind = in.u64();
        if (kind == 2) {
            const std::uint64_t code = in.u64();
            if (code == 0 || code > 255) fail_data("instance exchange: an error has no exit code");
            s.error_code = static_cast<int>(code);
            s.error = in.str();
            p = in.p;
            continue;
        }
        if (kind > 1) fail_data("instance exchange: unknown slot kind " + std::to_string(kind));
        if (kind == 1) s.result = decode_check_result(&in.p, end);
        s.numbers.resize(in.count(8));
        for (double& x : s.numbers) x = in.f64();
        s.text = in.str();
        p = in.p;
    }
}

}  // namespace attnspec::proofs
