// Issue 14, "validate before computing" and "what a run prints": strict numbers, flags that do
// not apply, one meaning per flag name, --trials / --time-budget semantics, progress totals, the
// digits of enclosures and the skipped dense J.
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "test_support.hpp"

using namespace attnspec::test;

namespace {

// Exit 64 with a one-line message naming `flag`.
void usage_error_names(const std::string& args, const std::string& flag) {
    INFO(args);
    const auto r = run_cli(args);
    INFO(r.err);
    CHECK(r.code == 64);
    CHECK(has(r.err, flag));
    CHECK(r.err.find('\n') == r.err.size() - 1);
}

// A Q/K input file with N = 20 tokens and d_h = 12 (one head).
std::string qk_file() {
    const std::string f = temp_dir() + "/qk.h5";
    REQUIRE(python("import h5py, numpy as np\nr = np.random.default_rng(3)\n"
                   "with h5py.File('" +
                   f +
                   "', 'w') as h:\n"
                   "    h['Q'] = r.standard_normal((20, 12)) + 1\n"
                   "    h['K'] = r.standard_normal((20, 12)) + 1\n") == 0);
    return f;
}

const std::string kHeads =
    std::string(ATTNSPEC_SOURCE_DIR) + "/datasets/embedded/attention_heads.h5";

}  // namespace

TEST_CASE("flags: numbers are parsed strictly, naming the option", "[cli][flags]") {
    for (const char* seed : {"-1", "abc", "12x", "18446744073709551616", "1e3", " 5", ""})
        usage_error_names("verify thm3.5 --no-report --seed '" + std::string(seed) + "'", "--seed");
    const auto ok = run_cli("verify thm3.5 --trials 1 --no-report --seed 18446744073709551615");
    INFO(ok.err);
    CHECK(ok.code == 0);
    for (const char* t : {"0", "-3", "1.5", "2147483648", "four"})
        usage_error_names("verify thm3.5 --no-report --trials " + std::string(t), "--trials");
    for (const char* b : {"nan", "inf", "-1", "0", "2s"}) {
        usage_error_names("verify thm3.5 --no-report --time-budget " + std::string(b),
                          "--time-budget");
        if (std::string(b) != "0")
            usage_error_names("verify thm3.4 --no-report --search-budget " + std::string(b),
                              "--search-budget");
    }
    // Sizes beyond 32 bits: 64 naming the flag, not 70 from an integer overflow.
    usage_error_names("neumann --no-report --tokens 4294967297", "--tokens");
    usage_error_names("neumann --no-report --dh 4294967297", "--dh");
    usage_error_names("neumann --no-report --tokens -5", "--tokens");
    usage_error_names("fidelity --no-report --tokens 64,4294967297", "--tokens");
    usage_error_names("fidelity --no-report --dh 0", "--dh");
    usage_error_names("fidelity --no-report --draws 0", "--draws");
    usage_error_names("fidelity --no-report --mu nan", "--mu");
    usage_error_names("neumann --no-report --gamma nan", "--gamma");
    usage_error_names("jacobian --no-report --random 4294967297,4,2", "--random");
    usage_error_names("jacobian --no-report --random 4,3,2 --heads 0", "--heads");
    usage_error_names("jacobian --no-report --random 4,3,2 --weight-scale inf", "--weight-scale");
    usage_error_names("verify thm3.5 --no-report --shape 4294967297x4", "--shape");
    // The message gives an example of the right arity.
    const auto r = run_cli("jacobian --no-report --random 4,3");
    CHECK(r.code == 64);
    CHECK(has(r.err, "3 dimensions"));
    CHECK(has(r.err, "128x64x32"));
    CHECK_FALSE(has(r.err, "like 128x64,"));
}

TEST_CASE("flags: verify --trials N runs exactly N instances per check", "[cli][flags]") {
    // thm3.5 has 12 regimes, lemma3.7 9, thm3.3 its attention grid (embedded heads off);
    // thm3.8-trained learns its regimes after the draw; specA-sweep counts curves (4 per head).
    for (const char* c : {"thm3.5", "lemma3.7", "thm3.3", "thm3.8-trained", "specA-sweep"})
        for (int n : {1, 4, 13}) {
            const auto r = run_cli(std::string("verify ") + c + " --embedded '' --no-report " +
                                   "--json --fail-on never --trials " + std::to_string(n));
            INFO(c << " --trials " << n << "\n" << r.err);
            REQUIRE(r.code == 0);
            CHECK(has(r.out, "\"instances\": " + std::to_string(n) + ","));
        }
    CHECK(has(run_cli("verify --help").out, "exactly N instances per check"));
}

TEST_CASE("flags: --time-budget bounds the wall time of a huge --trials", "[cli][flags]") {
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = run_cli(
        "verify thm3.5 lemma3.7 --trials 2147483647 --time-budget 1 --no-report --quiet --json "
        "--fail-on never");
    const double s = seconds_since(t0);
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(s < 8.0);  // two checks of ~1 s each, plus start-up
    CHECK(has(r.out, "\"name\": \"lemma3.7\""));
}

TEST_CASE("flags: progress counts never pass their total and end at the instance count",
          "[cli][flags]") {
    // infsa.neumann skips draws whose scores are all <= 0 (28 of 30 by default); thm3.3 adds the
    // embedded heads after its grid.
    for (const char* c : {"infsa.neumann", "thm3.3"}) {
        const auto r = run_cli(std::string("verify ") + c + " --no-report --json --fail-on never");
        INFO(c << "\n" << r.err);
        REQUIRE(r.code == 0);
        std::smatch m;
        REQUIRE(std::regex_search(r.out, m, std::regex("\"instances\": ([0-9]+)")));
        const long n = std::stol(m[1]);
        const std::regex line("\\[" + std::regex_replace(std::string(c), std::regex("\\."), "\\.") +
                              "\\] ([0-9]+)/([0-9]+)");
        long last_done = -1, last_total = -1;
        for (auto it = std::sregex_iterator(r.err.begin(), r.err.end(), line);
             it != std::sregex_iterator(); ++it) {
            last_done = std::stol((*it)[1]), last_total = std::stol((*it)[2]);
            CHECK(last_done <= last_total);
        }
        CHECK(last_done == n);
        CHECK(last_total == n);
    }
    // With --regime the total counts the kept regimes from the start, and --trials N goes to
    // them: thm3.5's 4 square regimes (of 12) draw 40 each by default, 10 of them share 10.
    const auto r = run_cli("verify thm3.5 --regime square --no-report --fail-on never");
    REQUIRE(r.code == 0);
    CHECK(has(r.err, "[thm3.5] 16/160\n"));
    CHECK(has(r.err, "[thm3.5] 160/160\n"));
    CHECK_FALSE(has(r.err, "/480"));
    const auto t =
        run_cli("verify thm3.5 --regime square --trials 10 --no-report --json --fail-on never");
    INFO(t.err);
    REQUIRE(t.code == 0);
    CHECK(has(t.out, "\"instances\": 10,"));
    CHECK(has(t.err, "[thm3.5] 10/10\n"));
}

TEST_CASE("flags: options that do not apply to --input are refused", "[cli][flags]") {
    for (const char* f : {"--token-dist layernorm", "--seed 5", "--weight-scale 9"})
        usage_error_names("jacobian --no-report --input " + kHeads + " " + f,
                          std::string(f).substr(0, std::string(f).find(' ')));
    const std::string qk = qk_file();
    for (const char* f :
         {"--dh 7", "--family gaussian", "--mu 2", "--draws 2", "--tokens 64", "--seed 3"})
        usage_error_names("fidelity --no-report --input " + qk + " " + f,
                          std::string(f).substr(0, std::string(f).find(' ')));
    for (const char* f : {"--tokens 64", "--dh 7", "--family shared-mean", "--mu 2", "--seed 3"})
        usage_error_names("neumann --no-report --input " + qk + " " + f,
                          std::string(f).substr(0, std::string(f).find(' ')));
    // What applies: the data's d_h (12) is printed and stored, mu is not printed.
    const std::string out = temp_dir() + "/f.h5";
    const auto r = run_cli("fidelity --input " + qk + " --out " + out);
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(has(r.out, "d_h 12"));
    CHECK_FALSE(has(r.out, "mu "));
    CHECK(python("import h5py, sys\nf = h5py.File('" + out +
                 "', 'r')['fidelity']\n"
                 "sys.exit(0 if f.attrs['d_h'] == 12 else 1)\n") == 0);
}

TEST_CASE("flags: --tokens is a count everywhere, and jacobian's distribution is --token-dist",
          "[cli][flags]") {
    const auto old = run_cli("jacobian --no-report --random 4,3,2 --tokens layernorm");
    CHECK(old.code == 64);
    CHECK(has(old.err, "--tokens"));
    const auto r = run_cli("jacobian --no-report --random 4,3,2 --token-dist layernorm");
    INFO(r.err);
    CHECK(r.code == 0);
    usage_error_names("jacobian --no-report --random 4,3,2 --token-dist uniform", "");
    const auto h = run_cli("jacobian --help");
    CHECK(has(h.out, "--token-dist"));
    CHECK_FALSE(has(h.out, "--tokens"));
}

TEST_CASE("flags: enclosures print with the digits that tell their ends apart", "[cli][flags]") {
    const auto r = run_cli("jacobian --no-report --random 6,4,3 --seed 2 --svd full");
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const std::regex enc("= ([-+0-9.e]+) in \\[([-+0-9.e]+), ([-+0-9.e]+)\\]");
    int n = 0;
    for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), enc);
         it != std::sregex_iterator(); ++it, ++n) {
        const std::string lo = (*it)[2], hi = (*it)[3];
        // Either the printed ends differ, or all 17 digits are shown (a point enclosure).
        CHECK((lo != hi || lo.find_first_of("123456789") + 17 <= lo.size() ||
               std::strtod(lo.c_str(), nullptr) == 0));
    }
    CHECK(n >= 4);  // sigma_max, sigma_min, kappa_strict, kappa_nz
    CHECK_FALSE(has(r.out, "0.000000"));
}

TEST_CASE("flags: a replayed record prints small values in exponent form", "[cli][flags]") {
    // The first thm3.5 instance has sigma_1(W) ~ 4e-7: printed "0.000000" before.
    const std::string f = temp_dir() + "/v.h5";
    REQUIRE(run_cli("verify thm3.5 --trials 1 -q --out " + f).code == 0);
    const auto r = run_cli("verify thm3.5 --instance " + f);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK_FALSE(has(r.out, "0.000000"));
    CHECK(has(r.out, "sigma_1(W) = "));
    std::smatch m;
    REQUIRE(std::regex_search(r.out, m, std::regex("sigma_1\\(W\\) = ([^ )]+)")));
    CHECK(std::strtod(m[1].str().c_str(), nullptr) > 0);  // the value, not a rounded 0
}

TEST_CASE("flags: a malformed seed in a stored record is bad data, not an internal error",
          "[cli][flags]") {
    const std::string f = temp_dir() + "/v.h5";
    REQUIRE(run_cli("verify thm3.5 --trials 1 -q --out " + f).code == 0);
    for (const char* seed : {"abc", "-1", "184467440737095516160"}) {
        REQUIRE(python("import h5py\nf = h5py.File('" + f +
                       "', 'r+')\ng = f['checks/thm3.5/records']\n"
                       "g[list(g)[0]].attrs['seed'] = '" +
                       seed + "'\n") == 0);
        const auto r = run_cli("verify thm3.5 --instance " + f);
        INFO(seed << ": " << r.err);
        CHECK(r.code == 65);
        CHECK(has(r.err, "seed"));
    }
}

TEST_CASE("flags: a skipped dense J prints no NaN and names --max-memory", "[cli][flags]") {
    const std::string dir = temp_dir();
    // Dense J needs 96 KiB, its Gram 6 KiB: --max-memory 40KiB skips J and keeps the spectrum.
    const std::string base = "jacobian --random 4,64,4 --seed 3 --svd full ";
    auto full = run_cli(base + "--out " + dir + "/full.h5");
    REQUIRE(full.code == 0);
    auto skip = run_cli(base + "--max-memory 40KiB --out " + dir + "/skip.h5");
    INFO(skip.out << skip.err);
    REQUIRE(skip.code == 0);
    CHECK_FALSE(has(skip.out, "nan"));
    CHECK_FALSE(has(skip.err, "computed in"));
    CHECK(has(skip.out, "--max-memory"));
    CHECK_FALSE(has(skip.out, "--store-limit"));
    const auto js = run_cli(base + "--max-memory 40KiB --no-report --json");
    REQUIRE(js.code == 0);
    CHECK_FALSE(has(js.out, "nan"));
    CHECK_FALSE(has(js.out, "\"max_abs\""));
    CHECK(has(js.out, "\"frobenius\""));
    // ||J||_F from the Gram spectrum equals the dense J's norm.
    CHECK(python("import h5py, sys\n"
                 "a = h5py.File('" +
                 dir +
                 "/full.h5', 'r')['jacobian/head_0']\n"
                 "b = h5py.File('" +
                 dir +
                 "/skip.h5', 'r')['jacobian']\n"
                 "h = b['head_0']\n"
                 "ok = abs(h.attrs['frobenius'] - a.attrs['frobenius']) <= 1e-12 * "
                 "a.attrs['frobenius']\n"
                 "ok = ok and 'max_abs' not in h.attrs and 'J' not in h\n"
                 "ok = ok and 'max-memory' in b.attrs['stored']\n"
                 "sys.exit(0 if ok else 1)\n") == 0);
}

// Found by the option fuzzer (tests/fuzz/fuzz_options.cpp): Boost's placeholder substitution
// looped forever on `--seed %value%`. Run under timeout(1) so a regression fails instead of
// hanging.
TEST_CASE("flags: a value holding a Boost placeholder is a usage error, not a hang",
          "[cli][flags]") {
    for (const std::string args :
         {"verify thm3.5 --seed '%value%'", "verify thm3.5 --trials '%canonical_option%'",
          "neumann --tokens '%original_token%'"}) {
        INFO(args);
        const std::string cmd = std::string("timeout 20 ") + ATTNSPEC_CLI_PATH + " " + args +
                                " --no-report > /dev/null 2>&1";
        const int rc = std::system(cmd.c_str());
        REQUIRE(WIFEXITED(rc));
        CHECK(WEXITSTATUS(rc) == 64);
    }
}
