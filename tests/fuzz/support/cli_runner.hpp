// Runs an `attnspec` command through the CLI's own command table (cli/cli.hpp), with std::cout
// and std::cerr swallowed, as main() would but without its exit-code mapping: the caller applies
// expect_documented to what the command throws.
#pragma once
#include <string>
#include <vector>

namespace attnspec::fuzz {

// `attnspec <command> <args...>`; returns the command's exit code. Throws what the command
// throws. An unknown command returns 64 (as main() does).
int run_cli(const std::string& command, const std::vector<std::string>& args);

}  // namespace attnspec::fuzz
