// libFuzzer target: option parsing. The input picks a subcommand from the CLI's command table
// (or an unknown one) and up to 12 argv tokens (option names of the tool, awkward values such as
// -1, nan, 1e9, 2^32+1, 2^64, "4x4", or free text) and runs them through the command's own
// run_<command> (support/cli_runner.hpp). So that a fuzzed argv can neither start a long
// computation nor write a file:
//   - mode "parse" (every command): argv = "--help" + tokens. Boost.Program_options parses and
//     converts every token (unknown, malformed, duplicate, out-of-range values: Usage) and the
//     command returns after printing its help; nothing after the parse phase runs. A token "--"
//     is dropped (it would turn "--help" into ... nothing: --help is first, but "--" could make
//     later tokens positional names; dropped to keep the parse-only promise simple).
//   - mode "run" (only `report` and `info`, which compute nothing): the tokens as given, in the
//     per-process temp dir (the process chdir's there; tokens containing '/' are dropped), where
//     r.h5 is a valid report; `report render --out` writes there.
// Oracle as in support/fuzz_support.hpp.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "check_pool.hpp"
#include "cli.hpp"
#include "cli_runner.hpp"
#include "fuzz_support.hpp"

using namespace attnspec;
using namespace attnspec::fuzz;

namespace {

const char* const kFlags[] = {"all",           "check",      "correction",  "d",        "dh",
                              "draws",         "embedded",   "eps",         "fail-on",  "family",
                              "gamma",         "heads",      "input",       "instance", "json",
                              "kappa-lambda",  "list",       "matrix-free", "method",   "mu",
                              "no-report",     "orders",     "quiet",       "rank",     "record",
                              "regime",        "regimes",    "rtol",        "s",        "scale",
                              "search-budget", "seed",       "shape",       "target",   "thorough",
                              "time-budget",   "tokens",     "trials",      "tree",     "wrt",
                              "out",           "max-memory", "store-limit", "device",   "cuda",
                              "rows",          "cols",       "affinity"};

const char* const kValues[] = {"-1",
                               "0",
                               "1",
                               "2",
                               "3",
                               "64",
                               "1e9",
                               "4294967297",
                               "18446744073709551616",
                               "9223372036854775807",
                               "nan",
                               "inf",
                               "-inf",
                               "1e-300",
                               "5e-324",
                               "0x10",
                               "4x4",
                               "8x8x2",
                               "2,3",
                               "0x0",
                               "-4x4",
                               "abc",
                               "",
                               "show",
                               "render",
                               "thm3.5",
                               "thm3.8",
                               "infsa.neumann",
                               "r.h5",
                               "x.md",
                               "missing.h5",
                               "-h",
                               "1MiB",
                               "1GiB",
                               "-1KiB",
                               "1e400",
                               "strict",
                               "nz",
                               "layernorm"};

std::string token(Input& in) {
    const unsigned sel = in.byte() % 8;
    if (sel < 3) return std::string("--") + kFlags[in.pick(sizeof kFlags / sizeof kFlags[0])];
    if (sel < 6) return kValues[in.pick(sizeof kValues / sizeof kValues[0])];
    return in.text(16);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    init_common();
    const auto& reports = base_report_files();
    std::filesystem::copy_file(reports.front(), temp_path("r.h5"),
                               std::filesystem::copy_options::overwrite_existing);
    if (::chdir(temp_dir().c_str()) != 0) {
        std::perror("attnspec fuzz: chdir");
        std::abort();
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Input in(data, size);
    const auto& table = cli::command_table();
    const std::size_t which = in.pick(table.size() + 1);
    const std::string command = which < table.size() ? table[which].name : "no-such-command";
    const bool cheap = command == "report" || command == "info";
    const bool run = cheap && in.flag();
    std::vector<std::string> args;
    if (!run) args.push_back("--help");
    for (int i = 0; i < 12 && !in.empty(); ++i) {
        std::string t = token(in);
        if (t == "--" || t.find('/') != std::string::npos) continue;
        args.push_back(std::move(t));
    }
    expect_documented(run ? "option run" : "option parse", [&] { (void)run_cli(command, args); });
    return 0;
}
