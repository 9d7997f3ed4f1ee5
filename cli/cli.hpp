// The attnspec command table and the helpers every cmd_<name>.cpp shares: option parsing with
// Boost.Program_options (usage errors -> exit 64), --help text with examples, --json output,
// progress on stderr (only when stderr is a TTY), and report paths.
#pragma once
#include <boost/program_options.hpp>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "attnspec/errors.hpp"
#include "attnspec/json.hpp"
#include "attnspec/report.hpp"

namespace attnspec::cli {

namespace po = boost::program_options;

struct Invocation {
    std::string command_line;       // the whole argv, for provenance
    std::vector<std::string> args;  // the arguments after the subcommand name
};

struct Command {
    std::string name;
    std::string summary;  // one line for `attnspec --help`
    std::function<int(const Invocation&)> run;
};

std::vector<Command>& command_table();
struct CommandRegistrar {
    explicit CommandRegistrar(Command c) { command_table().push_back(std::move(c)); }
};

// Parses `inv.args` against `desc` (plus positional `pos`). Prints help and returns false when
// --help was given; throws Error(Usage) on unknown or malformed options.
bool parse(const Invocation& inv, const std::string& command, const std::string& synopsis,
           const std::string& examples, po::options_description& desc, po::variables_map& vm,
           const po::positional_options_description* pos = nullptr);

// "128x64" or "128,64" -> {128, 64}; throws Usage.
std::vector<long> parse_dims(const std::string& s, size_t count, const std::string& option);

// Progress on stderr: "\r[thm3.5] 120/500" when stderr is a TTY, a line every ~10% otherwise
// unless quiet.
class Progress {
  public:
    Progress(std::string label, long total, bool enabled = true);
    void update(long done);
    void done();

  private:
    std::string label_;
    long total_;
    bool tty_, enabled_;
    long last_decile_ = -1;
};

void log(const std::string& msg);  // "attnspec: msg" on stderr

// Default report path under reports/out/ (created when missing) or the given --out.
std::string report_path(const std::string& out, const std::string& default_name);
Provenance provenance(const Invocation& inv, std::uint64_t seed);

// Writes the common "schema_version"/"tool" header keys into a JSON object that is open.
void json_header(JsonWriter& j, const std::string& command);

}  // namespace attnspec::cli
