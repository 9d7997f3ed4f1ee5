// attnspec's plain attention at a declared precision (kernels/attention_baseline.hpp).
#include "attnspec/kernels/attention_baseline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnspec::kernels {

void baseline_weights(const RowInput& in, Format storage, Format accumulate, std::vector<double>& p,
                      double& m, double& l) {
    const Format A = unit_roundoff(accumulate) < unit_roundoff(storage) ? accumulate : storage;
    const long n = in.n, d = in.d;
    auto ra = [A](double x) { return round_to(x, A); };
    p.resize(static_cast<size_t>(n));
    const double s = ra(in.scale);
    m = -std::numeric_limits<double>::infinity();
    for (long j = 0; j < n; ++j) {
        const double* k = in.K + in.key(j) * d;
        double dot = 0;
        for (long c = 0; c < d; ++c) dot = ra(dot + ra(in.q[c] * k[c]));
        p[j] = ra(s * dot);
        if (in.bias) p[j] = ra(p[j] + in.bias[in.key(j)]);  // the mask, as stored, added in A
        m = std::max(m, p[j]);
    }
    l = 0;
    for (long j = 0; j < n; ++j) l = ra(l + (p[j] = ra(std::exp(ra(p[j] - m)))));
    for (long j = 0; j < n; ++j) p[j] = round_to(ra(p[j] / l), storage);
}

void baseline_pv(const RowInput& in, const std::vector<double>& p, Format storage,
                 Format accumulate, std::vector<double>& o) {
    const Format A = unit_roundoff(accumulate) < unit_roundoff(storage) ? accumulate : storage;
    auto ra = [A](double x) { return round_to(x, A); };
    o.assign(static_cast<size_t>(in.dv), 0.0);
    for (long j = 0; j < in.n; ++j) {
        const double* v = in.V + in.key(j) * in.dv;
        for (long c = 0; c < in.dv; ++c) o[c] = ra(o[c] + ra(p[j] * v[c]));
    }
    for (long c = 0; c < in.dv; ++c) o[c] = round_to(o[c], output_format(storage));
}

void baseline_row(const RowInput& in, Format storage, Format accumulate, std::vector<double>& o,
                  double& lse, std::vector<double>& t) {
    const Format A = unit_roundoff(accumulate) < unit_roundoff(storage) ? accumulate : storage;
    o.assign(static_cast<size_t>(in.dv), 0.0);
    lse = -std::numeric_limits<double>::infinity();
    if (in.n == 0) return;
    double m = 0, l = 0;
    baseline_weights(in, storage, accumulate, t, m, l);
    baseline_pv(in, t, storage, accumulate, o);
    lse = round_to(m + round_to(std::log(l), A), A);
}

}  // namespace attnspec::kernels
