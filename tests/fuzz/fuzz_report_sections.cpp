// libFuzzer target: the analysis report sections (/neumann, /fidelity, /cond, /jacobian and the
// spectrum records inside them) as read by `attnspec report show` (text, --json, --tree) and
// `report render`. Structure-aware like fuzz_report.cpp, whose base files are check runs: here
// the base files are written at start-up by the CLI's own commands (neumann, fidelity, cond,
// jacobian --svd auto, at sizes of a few milliseconds), then up to 10 hostile mutations use the
// sections' names (report/names.hpp), so that a column can be declared with 10^9 entries and never
// written (issue 34, defect 2), become a string, a compound, a link cycle, ... Oracle as in
// support/fuzz_support.hpp.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "h5_builder.hpp"

using namespace attnspec;
using namespace attnspec::fuzz;

namespace {

// Writes one base report with the CLI; a failure here is a broken target, not a finding.
std::string base_report(const std::string& name, std::vector<std::string> args) {
    const std::string path = temp_path("base-" + name + ".h5");
    args.push_back("--out");
    args.push_back(path);
    const std::string command = args.front();
    args.erase(args.begin());
    if (run_cli(command, args) != 0 || !std::filesystem::exists(path)) {
        std::fprintf(stderr, "fuzz_report_sections: base report %s was not written\n",
                     name.c_str());
        std::abort();
    }
    return path;
}

const std::vector<std::string>& base_files() {
    static const std::vector<std::string> files = [] {
        // the cond input: a 6 x 4 matrix (values from a fixed byte string: the same every run)
        const std::string input = temp_path("cond-input.h5");
        {
            const std::uint8_t bytes[] = {1,  2,  3,  5,  8,   13,  21,  34,  55,  89,  144, 233,
                                          17, 40, 77, 99, 120, 131, 150, 170, 190, 200, 230, 250};
            Input in(bytes, sizeof bytes);
            H5File f = H5File::create(input);
            write_matrix(f.id(), "M", 6, 4, in);
        }
        return std::vector<std::string>{
            base_report("neumann", {"neumann", "--tokens", "16", "--dh", "4"}),
            base_report("fidelity", {"fidelity", "--tokens", "16", "--dh", "4", "--draws", "1"}),
            base_report("cond", {"cond", "--input", input, "--matrix", "/M"}),
            base_report("jacobian",
                        {"jacobian", "--random", "6,8,2", "--seed", "1", "--svd", "auto"}),
        };
    }();
    return files;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    init_common();
    base_files();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Input in(data, size);
    // the sections' names (report/names.hpp) and a few columns only their writers spell
    fuzz_report_command(in, base_files(), {"neumann",
                                           "fidelity",
                                           "cond",
                                           "jacobian",
                                           "truncation",
                                           "K",
                                           "bound",
                                           "error",
                                           "invariants",
                                           "centralities",
                                           "sigma",
                                           "sigma_lo",
                                           "sigma_hi",
                                           "kappa_strict",
                                           "kappa_nz",
                                           "value",
                                           "enclosure_lo",
                                           "enclosure_hi",
                                           "rank",
                                           "head_0",
                                           "spectrum",
                                           "sigma_max",
                                           "sigma_min",
                                           "gamma",
                                           "N",
                                           "rho_lo",
                                           "rho_hi",
                                           "norm2_hi",
                                           "K_for_target",
                                           "records",
                                           "family",
                                           "heads",
                                           "frobenius",
                                           "max_abs",
                                           "basis",
                                           "schema_version",
                                           "rows",
                                           "cols",
                                           "weyl_radius",
                                           "method"});
    return 0;
}
