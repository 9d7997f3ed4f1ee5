// check-kernel's files beyond stdout (docs/cli/check-kernel.md): the HDF5 report (--out,
// report/kernel_check_report.hpp), the JUnit XML (--junit, report/kernel_check_junit.hpp) and the
// reproducer written on fail or wrong (io/kernel_reproducer.hpp). Kept apart from
// cmd_check_kernel.cpp, which parses options and runs the checks.
#pragma once
#include <string>
#include <vector>

#include "attnspec/io/kernel_files.hpp"
#include "attnspec/kernels/check_run.hpp"
#include "cli.hpp"

namespace attnspec::cli {

struct CheckKernelFiles {
    std::string junit, report;  // "" when not asked for
};

// Before any work: each given target must be creatable (check_output_target: 73 special file or
// uncreatable, 64 when it is one of `inputs`, here IN and OUT), and --junit and --out must differ.
void check_kernel_targets(const CheckKernelFiles& f, const std::vector<std::string>& inputs);

// After the check: the reproducer (verdict fail or wrong; beside the report, else beside the
// output; its path goes into run.reproducer), then the report and the JUnit file. `arrays`: the
// inputs and the kernel's outputs, as the reproducer stores them. A reproducer that cannot be
// written beside the output (no --out) is a warning on stderr, not an error: the verdict stands.
// `quiet` (--json): no "written to" lines. Returns the paths written (reproducer, report, JUnit
// XML, in that order; check-kernel --json lists them as "files").
std::vector<std::string> write_check_kernel_files(kernels::KernelCheckRun& run,
                                                  const std::vector<NamedArray>& arrays,
                                                  const CheckKernelFiles& f, const Invocation& inv,
                                                  bool quiet);

}  // namespace attnspec::cli
