// attnspec's plain attention at a declared precision (kernels/attention_baseline.hpp).
#include "attnspec/kernels/attention_baseline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace attnspec::kernels {

void baseline_row(const RowInput& in, Format storage, Format accumulate, std::vector<double>& o,
                  double& lse, std::vector<double>& t) {
    const Format S = storage, out = output_format(storage);
    const Format A = unit_roundoff(accumulate) < unit_roundoff(S) ? accumulate : S;
    const long n = in.n, d = in.d, dv = in.dv;
    auto ra = [A](double x) { return round_to(x, A); };
    o.assign(static_cast<size_t>(dv), 0.0);
    lse = -std::numeric_limits<double>::infinity();
    if (n == 0) return;
    t.resize(static_cast<size_t>(n));
    const double s = ra(in.scale);
    double m = -std::numeric_limits<double>::infinity();
    for (long j = 0; j < n; ++j) {
        const double* k = in.K + j * d;
        double dot = 0;
        for (long c = 0; c < d; ++c) dot = ra(dot + ra(in.q[c] * k[c]));
        t[j] = ra(s * dot);
        m = std::max(m, t[j]);
    }
    double l = 0;
    for (long j = 0; j < n; ++j) l = ra(l + (t[j] = ra(std::exp(ra(t[j] - m)))));
    for (long j = 0; j < n; ++j) {
        const double p = round_to(ra(t[j] / l), S);
        const double* v = in.V + j * dv;
        for (long c = 0; c < dv; ++c) o[c] = ra(o[c] + ra(p * v[c]));
    }
    for (long c = 0; c < dv; ++c) o[c] = round_to(o[c], out);
    lse = ra(m + ra(std::log(l)));
}

}  // namespace attnspec::kernels
