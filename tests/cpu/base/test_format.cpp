// base/format.hpp: the digits an enclosure supports, exponent form for small values.
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

#include "attnspec/base/format.hpp"
#include "test_support.hpp"

using namespace attnspec;

namespace {
// The text between "[" and ", " / between ", " and "]" of format_enclosure's result.
std::pair<std::string, std::string> ends(const std::string& t) {
    const auto a = t.find('['), c = t.find(", ", a), b = t.find(']', c);
    return {t.substr(a + 1, c - a - 1), t.substr(c + 2, b - c - 2)};
}
}  // namespace

TEST_CASE("format_enclosure shows the width of a tight enclosure", "[format]") {
    // sigma_max = 31.0714 in [31.0714, 31.0714] hid a width of 2e-9 with six digits.
    const double lo = 31.07142857, hi = 31.07142859;
    const std::string t = format_enclosure(31.07142858, lo, hi);
    const auto [l, h] = ends(t);
    CHECK(l != h);
    CHECK(std::strtod(l.c_str(), nullptr) <= lo);
    CHECK(std::strtod(h.c_str(), nullptr) >= hi - 1e-8);
    CHECK(enclosure_digits(lo, hi) == 10);
    // Ends one ulp apart need 16 or 17 digits; equal ends print with 17 (every digit holds).
    const double x = 1.0 / 3.0, y = std::nextafter(x, 1.0);
    CHECK(enclosure_digits(x, y) >= 16);
    CHECK(ends(format_enclosure(x, x, y)).first != ends(format_enclosure(x, x, y)).second);
    CHECK(enclosure_digits(2.0, 2.0) == 17);
    CHECK(format_enclosure(2.0, 2.0, 2.0) == "2 in [2, 2]");
    // Digits beyond six keep their trailing zeros: every number shows the same digits.
    CHECK(format_enclosure(1.981649595921, 1.98164959592, 1.981649595921) ==
          "1.981649595921 in [1.981649595920, 1.981649595921]");
    // Wide enclosures keep six digits.
    CHECK(enclosure_digits(1.0, 2.0) == 6);
    CHECK(format_enclosure(1.5, 1.0, 2.0) == "1.5 in [1, 2]");
}

TEST_CASE("format_number uses exponent form for small values, never a fixed 0.000000", "[format]") {
    CHECK(format_number(4.4e-12) == "4.4e-12");
    CHECK(format_number(31.0714285714) == "31.0714");
    CHECK(format_number(1e300) == "1e+300");
    CHECK(format_number(std::nan("")) == "nan");
    CHECK(format_number(-HUGE_VAL) == "-inf");
    const std::string t = format_enclosure(4.4e-12, 4.3e-12, 4.5e-12);
    CHECK(t.find("0.000000") == std::string::npos);
    CHECK(t == "4.4e-12 in [4.3e-12, 4.5e-12]");
}

TEST_CASE("format_exact reads back as the same double with the fewest digits", "[format]") {
    for (double v : {0.1, 2.0, 1.0 / 3.0, 6.02214076e23, 5e-324, -123.456}) {
        const std::string t = format_exact(v);
        CHECK(std::strtod(t.c_str(), nullptr) == v);
        CHECK(t.size() <= 24);
    }
    CHECK(format_exact(0.1) == "0.1");
    CHECK(format_exact(2.0) == "2");
}
