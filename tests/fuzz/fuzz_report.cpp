// libFuzzer target: reports as read by `attnspec report show` (text, --json, --tree) and `report
// render` (stdout or --out), through the CLI's own run_report (cli/cmd_report.cpp,
// lib/src/report/summary.cpp). Structure-aware: a valid report written from real check runs
// (support/check_pool.hpp), then up to 10 hostile mutations (array lengths, array-valued
// attributes, hard-link cycles, ...). --out goes to the per-process temp dir. Oracle as in
// support/fuzz_support.hpp.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "check_pool.hpp"
#include "cli_runner.hpp"
#include "h5_builder.hpp"

using namespace attnspec;
using namespace attnspec::fuzz;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    init_common();
    base_report_files();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Input in(data, size);
    fuzz_report_command(in, base_report_files(),
                        {"checks",
                         "regimes",
                         "records",
                         "instances",
                         "regime",
                         "n_holds",
                         "n_violated",
                         "n_inconclusive",
                         "n_not_applicable",
                         "median_ratio",
                         "worst_ratio",
                         "schema_version",
                         "verdict",
                         "seed",
                         "instance_0",
                         "is_worst",
                         "headline_comparison",
                         "claim",
                         "seconds",
                         "lhs",
                         "rhs",
                         "ratio",
                         "margin",
                         "comparisons",
                         "instance",
                         "values"});
    return 0;
}
