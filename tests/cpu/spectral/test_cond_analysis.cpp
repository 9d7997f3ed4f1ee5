// The condition analysis behind `attnspec cond` (spectral/cond_analysis.hpp): a diagonal matrix
// with known singular values 4, 2, 0.5 (kappa 8), both conventions, and the rtol refusal.
#include "attnspec/base/errors.hpp"
#include "attnspec/spectral/cond_analysis.hpp"
#include "test_support.hpp"

using namespace attnspec;

TEST_CASE("cond analysis: enclosures contain the exact sigma and kappa", "[spectral][cond]") {
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(4, 3);
    A(0, 0) = 2.0, A(1, 1) = -4.0, A(3, 2) = 0.5;
    CondOptions opt;
    opt.headline = KappaConvention::nz;
    const CondAnalysis a = cond_analysis(A, opt);
    CHECK(a.rows == 4);
    CHECK(a.cols == 3);
    REQUIRE(a.svd.sigma.size() == 3);
    const double exact[3] = {4.0, 2.0, 0.5};
    for (int i = 0; i < 3; ++i) {
        CHECK(a.svd.lo[i] <= exact[i]);
        CHECK(exact[i] <= a.svd.hi[i]);
    }
    CHECK(a.strict.enclosure.lo <= 8.0);
    CHECK(a.strict.enclosure.hi >= 8.0);
    CHECK(a.nz.rank == 3);
    CHECK(&a.headline_kappa() == &a.nz);
    CHECK(a.seconds >= 0);
}

TEST_CASE("cond analysis: rtol must lie below 1, the error names the parameter",
          "[spectral][cond]") {
    CondOptions opt;
    opt.rtol = 2;
    try {
        cond_analysis(Eigen::MatrixXd::Identity(2, 2), opt);
        FAIL("rtol = 2 must be refused");
    } catch (const Error& e) {
        CHECK(e.code() == ExitCode::DataError);
        CHECK(e.parameter() == "rtol");
    }
}
