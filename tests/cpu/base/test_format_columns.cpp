// base/format.hpp, numbers for reading: digits per column, integers as integers, durations.
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "attnspec/base/format.hpp"
#include "test_support.hpp"

using namespace attnspec;

TEST_CASE("column_digits gives two values that differ in the 7th digit enough digits",
          "[format][report]") {
    // Planted: with the old fixed six digits both print as 1.23457.
    const std::vector<double> v{1.2345671, 1.2345679, 2.5};
    CHECK(format_number(v[0], 6) == format_number(v[1], 6));
    CHECK(column_digits(v) == 7);
    const auto t = format_column(v);
    CHECK(t[0] == "1.234567");
    CHECK(t[1] == "1.234568");
    CHECK(t[2] == "2.5");
    // Values far apart keep the minimum; a repeated value is not a collision.
    CHECK(column_digits({1.5, 1.5, 0.25}) == 3);
    CHECK(format_column({0.123456789, 42.0}) == std::vector<std::string>{"0.123", "42"});
    // The accuracy cap wins over distinctness: values closer than their enclosures allow.
    CHECK(column_digits(v, 3, 4) == 4);
    // A value that is not an integer never prints as one: 0.99996 is not "1", 123.4 is not "123".
    CHECK(format_column({0.99996, 0.5}) == std::vector<std::string>{"0.99996", "0.5"});
    CHECK(format_column({123.4, 7.0}) == std::vector<std::string>{"123.4", "7"});
    // Non-finite values are neither counted nor a reason for more digits.
    CHECK(column_digits({HUGE_VAL, -HUGE_VAL, 0.5}) == 3);
}

TEST_CASE("format_cell writes integers as integers and everything else as %g", "[format][report]") {
    CHECK(format_cell(12.0, 3) == "12");
    CHECK(format_cell(123456789.0, 3) == "123456789");
    CHECK(format_cell(-0.0, 3) == "0");
    CHECK(format_cell(12.5, 3) == "12.5");
    CHECK(format_cell(1e20, 3) == "1e+20");
    CHECK(format_cell(4.4e-12, 3) == "4.4e-12");
    CHECK(format_cell(std::strtod("nan", nullptr), 3) == "nan");
}

TEST_CASE("supported_digits is what an enclosure's ends share plus one", "[format][report]") {
    CHECK(supported_digits(2.0, 2.0) == 17);
    CHECK(supported_digits(1.2341, 1.2349) == 4);  // 1.234 shared: the 4th digit is uncertain
    CHECK(supported_digits(1.0, 2.0) == 1);
    CHECK(supported_digits(31.07142857, 31.07142859) == 10);
}

TEST_CASE("format_duration writes times as ms or s with three digits", "[format][report]") {
    CHECK(format_duration(0.0123) == "12.3 ms");
    CHECK(format_duration(4.5634) == "4.56 s");
    CHECK(format_duration(8.5e-4) == "850 \u00b5s");
    CHECK(format_duration(0.99996) == "1 s");  // never "1e+03 ms"
    CHECK(format_duration(150) == "2.5 min");
    CHECK(format_duration(-1) == "n/a");
}
