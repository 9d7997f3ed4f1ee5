#include "attnspec/base/interval_ops.hpp"

namespace attnspec::iv {
namespace {
double prod(double x, double y) { return (x == 0 || y == 0) ? 0.0 : x * y; }
}  // namespace

Interval mul(Interval a, Interval b) {
    if (is_nan(a) || is_nan(b)) return nan();
    const double p[4] = {prod(a.lo, b.lo), prod(a.lo, b.hi), prod(a.hi, b.lo), prod(a.hi, b.hi)};
    return {down(*std::min_element(p, p + 4)), up(*std::max_element(p, p + 4))};
}

Interval div(Interval a, Interval b) {
    if (is_nan(a) || is_nan(b)) return nan();
    const double inf = std::numeric_limits<double>::infinity();
    if (b.lo > 0 || b.hi < 0) {
        const double p[4] = {a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi};
        return {down(*std::min_element(p, p + 4)), up(*std::max_element(p, p + 4))};
    }
    if (b.lo == 0 && b.hi > 0 && a.lo >= 0) return {down(a.lo / b.hi), inf};
    return whole();
}

Interval pow(Interval a, int k) {
    if (k < 0) return nan();
    Interval r = Interval::point(1.0);
    for (int i = 0; i < k; ++i) r = mul(r, a);
    if (k % 2 == 0 && k > 0 && a.lo <= 0 && a.hi >= 0) r.lo = 0;
    return r;
}

Interval sqrt(Interval a) {
    if (is_nan(a) || a.hi < 0) return nan();
    // std::sqrt is correctly rounded (IEEE 754), so one ulp outward is enough.
    return {a.lo <= 0 ? 0.0 : down(std::sqrt(a.lo)), up(std::sqrt(a.hi))};
}

}  // namespace attnspec::iv
