// exp_lanes (kernels/exp_lanes.hpp), the float64 references' exp: its relative error against
// expl (64-bit significand) stays within the proved kExpLanesError u over the whole range, at the
// reduction's boundaries k +- 1/2 too; out-of-range values, NaN and +-inf are std::exp's; x == y
// and exp_lanes_in_range give the same bits.
#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

#include "attnspec/kernels/exp_lanes.hpp"
#include "test_support.hpp"

using namespace attnspec::kernels;

namespace {

constexpr double kU = 0x1p-53;

// max_j |y_j - exp(x_j)| / exp(x_j) in units of u, exp in long double.
double worst_error(const std::vector<double>& x, const std::vector<double>& y) {
    double worst = 0;
    for (size_t j = 0; j < x.size(); ++j) {
        const long double e = std::exp(static_cast<long double>(x[j]));
        const long double rel = std::fabs(static_cast<long double>(y[j]) - e) / e;
        worst = std::max(worst, static_cast<double>(rel) / kU);
    }
    return worst;
}

}  // namespace

TEST_CASE("exp_lanes: within its stated error bound over the range", "[kernels]") {
    REQUIRE(LDBL_MANT_DIG >= 64);  // expl more precise than double (x86-64: 64 bits)
    std::mt19937_64 rng(17);
    std::vector<double> x;
    for (auto [a, b] : {std::pair{-708.0, 708.0}, {-40.0, 0.0}, {-1.0, 1.0}, {-0.35, 0.35}}) {
        std::uniform_real_distribution<double> U(a, b);
        for (int i = 0; i < 200000; ++i) x.push_back(U(rng));
    }
    // Where the reduction's k changes: x near (k + 1/2) ln 2, so |r| is near its largest.
    for (int k = -1021; k < 1021; k += 3)
        for (int s = -3; s <= 3; ++s) {
            const double c = (k + 0.5) * 0.6931471805599453;
            if (std::fabs(c) < 708) x.push_back(c + s * 4e-16 * std::fabs(c));
        }
    std::vector<double> y(x.size());
    exp_lanes(x.data(), y.data(), static_cast<long>(x.size()));
    const double worst = worst_error(x, y);
    INFO("worst relative error " << worst << " u");
    CHECK(worst <= kExpLanesError);
    CHECK(worst > 0.5);  // rounded results: the measure sees errors
    // The measure catches a value 16 u off.
    std::vector<double> off = y;
    off[x.size() / 2] *= 1 + 0x1p-49;
    CHECK(worst_error(x, off) > kExpLanesError);
}

TEST_CASE("exp_lanes: out of range, NaN and infinities as std::exp, in place the same",
          "[kernels]") {
    std::vector<double> x;
    for (int i = 0; i < 37; ++i) x.push_back(-3.0 + 0.25 * i);
    x[3] = -709.5, x[8] = 709.5, x[9] = -740, x[17] = 800, x[20] = -INFINITY, x[21] = INFINITY;
    x[30] = NAN;
    std::vector<double> y(x.size()), z = x;
    exp_lanes(x.data(), y.data(), static_cast<long>(x.size()));
    exp_lanes(z.data(), z.data(), static_cast<long>(z.size()));  // x == y
    for (int j : {3, 8, 9, 17, 20, 21}) CHECK(y[j] == std::exp(x[j]));
    CHECK(std::isnan(y[30]));
    CHECK(y[9] > 0);        // exp(-750): a subnormal, as std::exp gives it
    CHECK(y[35] == y[35]);  // -708: in range, the vector path
    for (size_t j = 0; j < x.size(); ++j)
        if (!std::isnan(y[j])) CHECK(z[j] == y[j]);
    // exp_lanes_in_range on values within the range: the same bits.
    std::vector<double> w(x.size()), v(x.size());
    for (size_t j = 0; j < x.size(); ++j) w[j] = -0.37 * static_cast<double>(j);
    exp_lanes(w.data(), v.data(), static_cast<long>(w.size()));
    exp_lanes_in_range(w.data(), w.data(), static_cast<long>(w.size()));
    CHECK(w == v);
}
