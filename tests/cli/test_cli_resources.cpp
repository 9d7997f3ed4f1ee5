// --max-memory in every allocating command, refusals from an estimate before anything is drawn
// (exit 65 with the estimate, fast), allocation failures as exit 71, cond near DBL_MAX (issue 14).
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>

#include "attnspec/base/memory.hpp"
#include "attnspec/base/random.hpp"
#include "attnspec/io/report_writer.hpp"
#include "test_support.hpp"

using namespace attnspec;
using namespace attnspec::test;

namespace {

struct Timed {
    CliResult r;
    double seconds = 0;
};
Timed timed_cli(const std::string& args) {
    const auto t0 = std::chrono::steady_clock::now();
    Timed t{run_cli(args), 0};
    t.seconds = seconds_since(t0);
    return t;
}

// The number after "key": in a JSON document (NaN when absent or not a number).
double json_number(const std::string& doc, const std::string& key) {
    const auto at = doc.find("\"" + key + "\": ");
    if (at == std::string::npos) return std::nan("");
    const char* p = doc.c_str() + at + key.size() + 4;
    char* end = nullptr;
    const double v = std::strtod(p, &end);
    return end == p ? std::nan("") : v;
}

// The executable in a child shell whose address space is capped (ulimit -v = setrlimit
// RLIMIT_AS, in KiB) with one BLAS thread: an allocation above the cap fails deterministically.
CliResult run_cli_capped(long kib, const std::string& args) {
    return attnspec::test::run_shell("OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 sh -c 'ulimit -v " +
                                     std::to_string(kib) + " && exec " + ATTNSPEC_CLI_PATH + " " +
                                     args + "'");
}

}  // namespace

TEST_CASE("every allocating command has --max-memory, with the default stated",
          "[cli][resources]") {
    for (const char* cmd : {"jacobian", "cond", "neumann", "fidelity", "verify"}) {
        INFO(cmd);
        const auto r = run_cli(std::string(cmd) + " --help");
        CHECK(r.code == 0);
        std::string flat;  // --help wraps lines: compare with whitespace collapsed
        for (char c : r.out)
            if (!std::isspace(static_cast<unsigned char>(c)))
                flat += c;
            else if (!flat.empty() && flat.back() != ' ')
                flat += ' ';
        CHECK(has(flat, "--max-memory"));
        CHECK(has(flat, "default half of physical memory, " +
                            human_bytes(default_memory_limit_bytes()) + " here"));
        CHECK(run_cli(std::string(cmd) + " --max-memory lots").code == 64);
        CHECK(run_cli(std::string(cmd) + " --max-memory 0").code == 64);
        CHECK(run_cli(std::string(cmd) + " --max-memory -1GiB").code == 64);
    }
}

TEST_CASE("neumann: huge --tokens or --dh is refused from the estimate before any draw",
          "[cli][resources]") {
    // Beyond a 32-bit dimension (4294967297) the parse helpers refuse with 64 (test_cli_flags).
    for (const char* args : {"--tokens 10000000", "--dh 100000000"}) {
        INFO(args);
        const Timed t =
            timed_cli(std::string("neumann ") + args + " --max-memory 8GiB --no-report");
        CHECK(t.r.code == 65);
        CHECK(has(t.r.err, "the Neumann analysis at N = "));
        CHECK(has(t.r.err, "would need"));
        CHECK(has(t.r.err, "(option --max-memory)"));
        CHECK(t.seconds < 5.0);
    }
    // A budget below a small problem refuses it too; a budget above lets it run.
    CHECK(run_cli("neumann --tokens 64 --dh 8 --max-memory 100KiB --no-report").code == 65);
    CHECK(run_cli("neumann --tokens 64 --dh 8 --max-memory 64MiB --no-report").code == 0);
}

TEST_CASE("neumann: --target that cannot be met is refused with the reason", "[cli][resources]") {
    auto r = run_cli("neumann --tokens 16 --dh 4 --target 5e-324 --no-report");
    CHECK(r.code == 65);
    CHECK(has(r.err, "(option --target)"));
    r = run_cli("neumann --tokens 16 --dh 4 --target 1e-12 --no-report --json");
    CHECK(r.code == 0);
}

TEST_CASE("fidelity: memory and time estimate before starting, refusal above the budget",
          "[cli][resources]") {
    Timed t = timed_cli(
        "fidelity --tokens 10000000 --matrix-free --draws 1 --family gaussian --max-memory 4GiB "
        "--no-report");
    CHECK(t.r.code == 65);
    CHECK(has(t.r.err, "estimate: memory"));
    CHECK(has(t.r.err, "flops (operation count"));
    CHECK(has(t.r.err, "measured on one 512 x 64 tiled pass"));
    CHECK(has(t.r.err, "matrix-free fidelity at N = 10000000"));
    CHECK(has(t.r.err, "(option --max-memory)"));
    CHECK(t.seconds < 5.0);
    // Dense mode names --matrix-free, the way around N x N.
    t = timed_cli(
        "fidelity --tokens 100000 --draws 1 --family gaussian --max-memory 1GiB "
        "--no-report");
    CHECK(t.r.code == 65);
    CHECK(has(t.r.err, "(option --matrix-free)"));
    // Within the budget: the estimate is printed and the run completes.
    const auto r = run_cli("fidelity --tokens 32 --dh 8 --draws 1 --family gaussian --no-report");
    CHECK(r.code == 0);
    CHECK(has(r.err, "estimate: memory"));
}

TEST_CASE("verify: a --shape beyond the budget is refused with 65, not out of memory 70",
          "[cli][resources]") {
    const Timed t =
        timed_cli("verify thm3.5 --shape 100000x100000 --trials 1 --max-memory 8GiB --no-report");
    CHECK(t.r.code == 65);
    CHECK(has(t.r.err, "--shape 100000x100000"));
    CHECK(has(t.r.err, "(option --max-memory)"));
    CHECK(t.seconds < 5.0);
    CHECK(run_cli("verify thm3.5 --shape 16x8 --trials 2 --max-memory 1GiB --no-report -q").code ==
          0);
}

TEST_CASE("jacobian --svd: the Gram refusal follows --max-memory", "[cli][resources]") {
    const auto r = run_cli("jacobian --random 64,32,8 --svd full --max-memory 64KiB --no-report");
    CHECK(r.code == 65);
    CHECK(has(r.err, "(option --max-memory)"));
}

TEST_CASE("an allocation failure under the estimate exits 71 with one line", "[cli][resources]") {
#if defined(__SANITIZE_ADDRESS__)
    // ASan reserves terabytes of shadow address space at start: no ulimit -v can hold it.
    WARN("not run under AddressSanitizer (its shadow memory cannot start under ulimit -v)");
    return;
#endif
    // The estimate (12 N^2 doubles, 224 GiB) is within --max-memory 1TiB, but the address space
    // is capped at 8 GiB: the 20 GB affinity cannot be allocated. (8 GiB, not less: a CUDA build
    // maps cuBLAS/cuSOLVER, about 1.5 GiB of address space, before main runs.)
    const CliResult r =
        run_cli_capped(8L << 20, "neumann --tokens 50000 --dh 4 --max-memory 1TiB --no-report");
    INFO(r.err);
    CHECK(r.code == 71);
    CHECK(has(r.err, "attnspec: error: out of memory"));
    CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
}

TEST_CASE("cond: entries near DBL_MAX and subnormal", "[cli][resources]") {
    const std::string dir = attnspec::test::temp_dir();
    const std::string path = dir + "/big.h5";
    Eigen::MatrixXd G = Rng(3).gaussian(5, 3);
    G /= std::ldexp(1.0, std::ilogb(G.cwiseAbs().maxCoeff()));
    const Eigen::MatrixXd big = G * std::ldexp(1.0, 1021);  // up to ~4.5e307, sigma_max < 1.8e308
    Eigen::MatrixXd tiny = (G * 16).array().round().matrix() * std::ldexp(1.0, -1060);
    {
        ReportWriter w(path, Provenance{"test", 1, {}});
        w.root().write("big", big);
        w.root().write("tiny", tiny);
        w.root().write("over", Eigen::MatrixXd::Constant(3, 3, 1e308));
        w.commit();
    }
    auto r = run_cli("cond -i " + path + " -d big --json --no-report");
    INFO(r.err);
    REQUIRE(r.code == 0);
    const double sigma_G = G.jacobiSvd().singularValues()[0];
    CHECK(json_number(r.out, "sigma_max") == Approx(std::ldexp(sigma_G, 1021)).epsilon(1e-12));
    CHECK(std::isfinite(json_number(r.out, "value")));  // kappa_strict
    r = run_cli("cond -i " + path + " -d tiny --json --no-report");
    REQUIRE(r.code == 0);
    const Eigen::MatrixXd tiny_up =  // exact: small integers
        tiny.unaryExpr([](double x) { return std::ldexp(x, 1060); });
    const double sigma_t = tiny_up.jacobiSvd().singularValues()[0];
    // Subnormal results are on a grid of 2^-1074: an absolute margin of two grid steps.
    CHECK(json_number(r.out, "sigma_max") ==
          Approx(std::ldexp(sigma_t, -1060)).epsilon(1e-12).margin(std::ldexp(2.0, -1074)));
    CHECK(std::isfinite(json_number(r.out, "value")));
    r = run_cli("cond -i " + path + " -d over --no-report");
    CHECK(r.code == 65);
    CHECK(has(r.err, "above the largest double"));
    std::system(("rm -rf " + dir).c_str());
}
