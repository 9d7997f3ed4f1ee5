// --max-memory, the one memory budget option of every command that allocates (jacobian, cond,
// neumann, fidelity, verify): a size such as 512MiB, 4GiB or a byte count, default half of this
// machine's physical memory (base/memory.hpp). The command calls add_memory_option() while
// declaring its options and apply_memory_option() right after parsing, before anything is
// estimated or allocated; every library refusal then compares its estimate with the budget.
#pragma once
#include <string>

#include "cli.hpp"

namespace attnspec::cli {

// "512MiB", "4GiB", "1.5TiB", "1000000" or "1000000B" (KiB/MiB/GiB/TiB, also K/M/G/T, are powers
// of 1024) -> bytes. Throws Error(Usage) naming `option` unless the size is finite and positive
// (or zero, with `allow_zero`: e.g. jacobian's --store-limit 0).
double parse_size(const std::string& s, const std::string& option, bool allow_zero = false);

// Declares --max-memory SIZE bound to `value` ("" = the default, shown in --help with its value
// on this machine).
void add_memory_option(po::options_description& desc, std::string& value);

// Sets the process budget (set_memory_limit_bytes) from the option's value ("" = default) and
// returns it in bytes. Usage error on a malformed size.
double apply_memory_option(const std::string& value);

}  // namespace attnspec::cli
