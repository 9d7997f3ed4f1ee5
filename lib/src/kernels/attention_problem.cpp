// Shapes of an attention kernel check (kernels/attention_problem.hpp).
#include "attnspec/kernels/attention_problem.hpp"

#include <algorithm>
#include <cmath>

#include "attnspec/base/enum_names.hpp"
#include "attnspec/base/errors.hpp"

namespace attnspec::kernels {
namespace {
constexpr EnumName<MaskKind> kMaskNames[] = {{MaskKind::none, "none"},
                                             {MaskKind::causal, "causal"},
                                             {MaskKind::boolean, "boolean"},
                                             {MaskKind::additive, "additive"}};

void check_rank(const Array& a, const char* name) {
    if (a.shape.size() < 2 || a.shape.size() > 4)
        fail_data(std::string(name) + " has shape " + shape_text(a.shape) +
                  ", expected (N, d), (H, N, d) or (B, H, N, d)");
    std::int64_t n = 1;
    for (std::int64_t e : a.shape) {
        if (e <= 0) fail_data(std::string(name) + " has an empty dimension " + shape_text(a.shape));
        n *= e;
    }
    if (static_cast<std::size_t>(n) != a.values.size())
        fail_data(std::string(name) + " holds " + std::to_string(a.values.size()) +
                  " values, its shape " + shape_text(a.shape) + " needs " + std::to_string(n));
}

// (B, H, N, d) of a rank-2..4 array.
std::vector<long> dims4(const Array& a) {
    std::vector<long> d(4, 1);
    const std::size_t off = 4 - a.shape.size();
    for (std::size_t i = 0; i < a.shape.size(); ++i) d[off + i] = static_cast<long>(a.shape[i]);
    return d;
}

// The mask array of a boolean or additive mask against the problem's shape (mask_B, mask_H).
void check_mask(const AttentionProblem& p, ProblemShape& s) {
    const Array& m = p.mask_array;
    if (!general_mask(p.mask)) {
        if (!m.shape.empty() || !m.values.empty())
            fail_data(std::string("an array mask goes with a boolean or additive mask, not ") +
                          mask_name(p.mask),
                      "mask");
        return;
    }
    const std::string nn = std::to_string(s.Nq) + ", " + std::to_string(s.Nk);
    const std::string want = "(" + nn + "), (H', " + nn + ") or (B', H', " + nn +
                             ") with H' = 1 or " + std::to_string(s.H) + ", B' = 1 or " +
                             std::to_string(s.B);
    const std::size_t rank = m.shape.size();
    std::vector<long> d(4, 1);
    for (std::size_t i = 0; i < rank && rank <= 4; ++i) d[4 - rank + i] = long(m.shape[i]);
    std::int64_t n = 1;
    for (std::int64_t e : m.shape) n *= e;
    if (rank < 2 || rank > 4 || d[2] != s.Nq || d[3] != s.Nk || (d[0] != 1 && d[0] != s.B) ||
        (d[1] != 1 && d[1] != s.H) || static_cast<std::size_t>(n) != m.values.size())
        fail_data(std::string(mask_name(p.mask)) + " mask has shape " + shape_text(m.shape) +
                      ", expected " + want,
                  "mask");
    s.mask_B = d[0], s.mask_H = d[1];
    for (double x : m.values) {
        if (p.mask == MaskKind::boolean && x != 0 && x != 1)
            fail_data("boolean mask holds " + value_text(x) + " (expected 0/1 or true/false)",
                      "mask");
        if (p.mask == MaskKind::additive && (std::isnan(x) || x == HUGE_VAL))
            fail_data("additive mask holds " + value_text(x) + " (NaN and +inf are refused)",
                      "mask");
    }
}

}  // namespace

const char* mask_name(MaskKind m) { return enum_name(m, kMaskNames); }

MaskKind parse_mask(const std::string& text, const std::string& parameter) {
    return enum_from_name(text, kMaskNames, "mask", parameter);
}

long ProblemShape::visible(long i, MaskKind m) const {
    if (m != MaskKind::causal) return Nk;
    return std::clamp(i + (Nk - Nq) + 1, 0L, Nk);
}

std::vector<std::int64_t> ProblemShape::out_shape() const {
    std::vector<std::int64_t> s = lse_shape();
    s.push_back(dv);
    return s;
}

std::vector<std::int64_t> ProblemShape::lse_shape() const {
    std::vector<std::int64_t> s;
    if (rank == 4) s.push_back(B);
    if (rank >= 3) s.push_back(H);
    s.push_back(Nq);
    return s;
}

ProblemShape problem_shape(const AttentionProblem& p) {
    check_rank(p.q, "q");
    check_rank(p.k, "k");
    check_rank(p.v, "v");
    if (p.q.shape.size() != p.k.shape.size() || p.q.shape.size() != p.v.shape.size())
        fail_data("q, k, v have shapes " + shape_text(p.q.shape) + ", " + shape_text(p.k.shape) +
                  ", " + shape_text(p.v.shape) + " of different ranks");
    const std::vector<long> q = dims4(p.q), k = dims4(p.k), v = dims4(p.v);
    ProblemShape s;
    s.rank = static_cast<int>(p.q.shape.size());
    s.B = q[0], s.H = q[1], s.H_kv = k[1], s.Nq = q[2], s.Nk = k[2], s.d = q[3], s.dv = v[3];
    const std::string shapes = "q " + shape_text(p.q.shape) + ", k " + shape_text(p.k.shape) +
                               ", v " + shape_text(p.v.shape);
    if (k[0] != s.B || v[0] != s.B) fail_data("q, k, v differ in the batch dimension: " + shapes);
    if (v[1] != s.H_kv || v[2] != s.Nk) fail_data("k and v differ in heads or keys: " + shapes);
    if (k[3] != s.d) fail_data("q and k differ in the feature dimension d: " + shapes);
    if (s.H % s.H_kv != 0)
        fail_data("the query heads (" + std::to_string(s.H) +
                  ") are not a multiple of the key/value heads (" + std::to_string(s.H_kv) +
                  "): " + shapes);
    if (p.scale != 0 && !(std::isfinite(p.scale) && p.scale > 0))
        fail_data("scale = " + value_text(p.scale) + " must be finite and > 0", "scale");
    check_mask(p, s);
    return s;
}

double effective_scale(const AttentionProblem& p, const ProblemShape& s) {
    return p.scale != 0 ? p.scale : 1.0 / std::sqrt(static_cast<double>(s.d));
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
    std::string t = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) t += (i ? ", " : "") + std::to_string(shape[i]);
    return t + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace attnspec::kernels
