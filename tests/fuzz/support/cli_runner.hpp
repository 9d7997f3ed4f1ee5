// Runs an `attnspec` command through the CLI's own command table (cli/cli.hpp), with std::cout
// and std::cerr swallowed, as main() would but without its exit-code mapping: the caller applies
// expect_documented to what the command throws.
#pragma once
#include <string>
#include <vector>

#include "fuzz_support.hpp"

namespace attnspec::fuzz {

// `attnspec <command> <args...>`; returns the command's exit code. Throws what the command
// throws. An unknown command returns 64 (as main() does).
int run_cli(const std::string& command, const std::vector<std::string>& args);

// One `attnspec report` case of the report targets: a copy of one of `bases` (picked by `in`), a
// command picked by `in` (show, show --tree, show --json, render, render --out F.md), up to 10
// mutations of the copy with `vocab` (h5_builder.hpp), then the command under expect_documented.
// The bytes of `in` are read in that order (saved inputs keep their meaning).
void fuzz_report_command(Input& in, const std::vector<std::string>& bases,
                         const std::vector<std::string>& vocab);

}  // namespace attnspec::fuzz
