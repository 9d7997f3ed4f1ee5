#include "attnspec/base/check.hpp"
#include "attnspec/base/errors.hpp"
#include "attnspec/spectral/svd.hpp"
#include "test_support.hpp"

using namespace attnspec;

TEST_CASE("compare: le proves, refutes or stays inconclusive", "[check]") {
    auto c = compare("c", "a", 1.0, Interval::around(1.0, 0.1), Relation::le, "b", 2.0,
                     Interval::point(2.0));
    CHECK(c.verdict == Verdict::holds);
    c = compare("c", "a", 3.0, Interval::around(3.0, 0.1), Relation::le, "b", 2.0,
                Interval::point(2.0));
    CHECK(c.verdict == Verdict::violated);
    c = compare("c", "a", 2.0, Interval::around(2.0, 0.1), Relation::le, "b", 2.0,
                Interval::point(2.0));
    CHECK(c.verdict == Verdict::inconclusive);
    c = compare("c", "a", 2.0, Interval::around(2.0, 0.1), Relation::le, "b", 2.0,
                Interval::point(2.0), /*attainable=*/true);
    CHECK(c.verdict == Verdict::holds);
}

TEST_CASE("compare: eq is consistent or proved unequal", "[check]") {
    auto c = compare("c", "a", 1.0, Interval::around(1.0, 1e-12), Relation::eq, "b", 1.0 + 1e-13,
                     Interval::point(1.0 + 1e-13));
    CHECK(c.verdict == Verdict::holds);
    c = compare("c", "a", 1.0, Interval::around(1.0, 1e-12), Relation::eq, "b", 1.0 + 1e-9,
                Interval::point(1.0 + 1e-9));
    CHECK(c.verdict == Verdict::violated);
}

TEST_CASE("svd enclosures contain closed-form singular values", "[spectral]") {
    // diag(3, 2, 1e-8) rotated by orthogonal factors: exact singular values known.
    Eigen::MatrixXd Q1 =
        Eigen::HouseholderQR<Eigen::MatrixXd>(Eigen::MatrixXd::Random(5, 3)).householderQ() *
        Eigen::MatrixXd::Identity(5, 3);
    Eigen::MatrixXd Q2 =
        Eigen::HouseholderQR<Eigen::MatrixXd>(Eigen::MatrixXd::Random(3, 3)).householderQ();
    Eigen::Vector3d s(3.0, 2.0, 1e-8);
    Eigen::MatrixXd M = Q1 * s.asDiagonal() * Q2.transpose();
    auto r = svd(M);
    for (int i = 0; i < 3; ++i) {
        INFO("i = " << i << " sigma = " << r.sigma[i] << " radius = " << r.radius[i]);
        // M is rounded when formed from the (nearly orthogonal) Q1, Q2: its exact singular values
        // lie within ~k u sigma_max of s (k ~ 10); the refined enclosures are tighter than that.
        const double formation = 32 * attnspec::test::kU * 3.0;
        CHECK(r.enclosure(i).lo <= s[i] + formation);
        CHECK(s[i] - formation <= r.enclosure(i).hi);
        CHECK(r.radius[i] < 1e-13);  // absolute accuracy ~ u * ||M||
    }
    // A planted wrong sigma falls outside.
    CHECK_FALSE(r.enclosure(1).contains(2.0 * (1 + 1e-10)));
}

TEST_CASE("widen and svd_from_values keep radius, lo and hi consistent", "[spectral]") {
    Eigen::MatrixXd M(2, 2);
    M << 3, 0, 0, 1;
    SvdResult s = svd(M);
    const Interval before = s.enclosure(1);
    widen(s, 0.25);
    CHECK(s.enclosure(1).lo <= before.lo - 0.25);
    CHECK(s.enclosure(1).hi >= before.hi + 0.25);
    CHECK(s.enclosure(1).contains(1.2));  // a value the widened enclosure must admit
    Eigen::VectorXd sig(3), rad(3);
    sig << 1.0, 5.0, 0.0;
    rad << 0.1, 0.2, 0.0;
    SvdResult v = svd_from_values(sig, rad, "test");
    CHECK(v.sigma[0] == 5.0);
    CHECK(v.enclosure(0).contains(5.19));
    CHECK_FALSE(v.enclosure(1).contains(1.11));
    CHECK(v.enclosure(2).lo == 0.0);
}
