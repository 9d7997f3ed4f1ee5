// attnspec: entry point. Dispatches to the command table (cli.cpp); maps every error to its
// documented exit code (README "Exit codes") with a one-line message on stderr, naming the option
// that sets a parameter the library refused (flag_for_parameter).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <new>

#include "attnspec/base/blas_runtime.hpp"
#include "attnspec/base/format.hpp"
#include "attnspec/base/memory.hpp"
#include "attnspec/io/report_writer.hpp"
#include "attnspec/version.hpp"
#include "cli.hpp"
#include "git_info.hpp"

namespace {
// An error message as printed: control characters (but the line breaks of a multi-line hint)
// escaped as \xNN, so that a hostile name cannot drive the terminal; at most 2000 bytes, the
// middle of a longer one (an echoed 100k-character argument) replaced by an ellipsis.
std::string printable(const std::string& m) {
    std::string s = attnspec::escape_controls(m, "\n");
    constexpr std::size_t kMax = 2000, kHead = 1400, kTail = 400;
    if (s.size() <= kMax) return s;
    std::size_t head = kHead, tail = s.size() - kTail;
    while (head > 0 && (static_cast<unsigned char>(s[head]) & 0xC0) == 0x80) --head;  // UTF-8
    while (tail < s.size() && (static_cast<unsigned char>(s[tail]) & 0xC0) == 0x80) ++tail;
    return s.substr(0, head) + " ... (" + std::to_string(tail - head) + " bytes left out) ... " +
           s.substr(tail);
}
}  // namespace

int main(int argc, char** argv) {
    using namespace attnspec;
    select_blas_kernels(argc, argv);  // may re-execute with faster OpenBLAS kernels (issue 13)
    install_cleanup_signal_handlers();
    std::vector<std::string> all(argv + 1, argv + argc);
    if (all.empty() || all[0] == "--help" || all[0] == "-h" || all[0] == "help") {
        cli::print_help(std::cout);
        if (!all.empty()) return 0;
        std::cerr << "attnspec: error: no command given (usage: attnspec COMMAND [options]; "
                     "the commands are listed above)\n";
        return static_cast<int>(ExitCode::Usage);
    }
    if (all[0] == "--version" || all[0] == "-V") {
        std::cout << "attnspec " << ATTNSPEC_VERSION << " (git " << ATTNSPEC_GIT_SHA
                  << (std::string(ATTNSPEC_GIT_DIRTY) == "true" ? ", dirty" : "") << ")\n";
        return 0;
    }
    const auto& table = cli::command_table();
    auto it = std::find_if(table.begin(), table.end(), [&](auto& c) { return c.name == all[0]; });
    if (it == table.end()) {
        std::cerr << "attnspec: error: unknown command '" << printable(all[0])
                  << "' (see 'attnspec --help' for the list)\n";
        return static_cast<int>(ExitCode::Usage);
    }
    cli::Invocation inv;
    inv.command_line = "attnspec";
    for (const auto& a : all) inv.command_line += " " + a;
    inv.args.assign(all.begin() + 1, all.end());
    try {
        return it->run(inv);
    } catch (const Error& e) {
        const std::string flag = cli::flag_for_parameter(e.parameter());
        std::cerr << "attnspec: error: " << printable(e.what())
                  << (flag.empty() ? "" : " (option " + flag + ")") << "\n";
        return static_cast<int>(e.code());
    } catch (const std::bad_alloc&) {
        // Eigen and the standard library throw std::bad_alloc: the system refused memory that the
        // estimate allowed (--max-memory above what is free, ulimit -v, cgroup limit).
        std::cerr << "attnspec: error: out of memory: an allocation failed although the estimate "
                     "was within --max-memory = "
                  << human_bytes(memory_limit_bytes())
                  << " (less memory is available than the budget; lower --max-memory or the "
                     "problem size)\n";
        return static_cast<int>(ExitCode::OutOfMemory);
    } catch (const std::exception& e) {
        std::cerr << "attnspec: internal error: " << printable(e.what()) << "\n";
        return static_cast<int>(ExitCode::Internal);
    }
}
