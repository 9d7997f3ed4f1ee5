#include "cli_runner.hpp"

#include <algorithm>
#include <iostream>
#include <sstream>

#include "cli.hpp"

namespace attnspec::fuzz {

namespace {
// Restores a stream's buffer on scope exit (also when the command throws).
class Swallow {
  public:
    explicit Swallow(std::ostream& os) : os_(os), old_(os.rdbuf(sink_.rdbuf())) {}
    ~Swallow() { os_.rdbuf(old_); }
    Swallow(const Swallow&) = delete;
    Swallow& operator=(const Swallow&) = delete;

  private:
    std::ostringstream sink_;
    std::ostream& os_;
    std::streambuf* old_;
};
}  // namespace

int run_cli(const std::string& command, const std::vector<std::string>& args) {
    const auto& table = cli::command_table();
    auto it = std::find_if(table.begin(), table.end(),
                           [&](const cli::Command& c) { return c.name == command; });
    if (it == table.end()) return 64;
    cli::Invocation inv;
    inv.command_line = "attnspec " + command;
    for (const auto& a : args) inv.command_line += " " + a;
    inv.args = args;
    Swallow out(std::cout), err(std::cerr);
    return it->run(inv);
}

}  // namespace attnspec::fuzz
