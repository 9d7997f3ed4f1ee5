// attnspec jacobian --certify: the certified sigma_min bound through the CLI (proofs §6).
#include "test_support.hpp"

using attnspec::test::run_cli;

TEST_CASE("jacobian --certify: always certifies a small head, bad values are usage errors",
          "[cli][jacobian][certify]") {
    auto r = run_cli("jacobian --random 8,10,3 --seed 2 --svd full --certify always --no-report");
    CHECK(r.code == 0);
    CHECK(r.out.find("note: certify: certified") != std::string::npos);
    CHECK(r.out.find("Rump isspd") != std::string::npos);
    r = run_cli("jacobian --random 8,10,3 --seed 2 --svd full --certify never --no-report");
    CHECK(r.code == 0);
    CHECK(r.out.find("certify") == std::string::npos);
    r = run_cli("jacobian --random 8,10,3 --svd full --certify sometimes --no-report");
    CHECK(r.code == 64);
    CHECK(r.err.find("sometimes") != std::string::npos);
    CHECK(run_cli("jacobian --help").out.find("--certify") != std::string::npos);
}
