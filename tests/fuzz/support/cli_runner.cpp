#include "cli_runner.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli.hpp"
#include "h5_builder.hpp"

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

void fuzz_report_command(Input& in, const std::vector<std::string>& bases,
                         const std::vector<std::string>& vocab) {
    const std::string path = temp_path("report.h5");
    std::filesystem::copy_file(bases[in.pick(bases.size())], path,
                               std::filesystem::copy_options::overwrite_existing);
    std::vector<std::string> args;
    switch (in.byte() % 5) {
        case 0:
            args = {"show", path};
            break;
        case 1:
            args = {"show", path, "--tree"};
            break;
        case 2:
            args = {"show", path, "--json"};
            break;
        case 3:
            args = {"render", path};
            break;
        default:
            args = {"render", path, "--out", temp_path("report.md")};
            break;
    }
    {
        H5File f = H5File::open_rw(path);
        if (!f.ok()) return;
        mutate(f.id(), in, vocab, 10);
    }
    expect_documented("report", [&] { (void)run_cli("report", args); });
}

}  // namespace attnspec::fuzz
