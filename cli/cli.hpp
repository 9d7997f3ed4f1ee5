// The attnspec command table and the helpers every cmd_<name>.cpp shares: option parsing with
// Boost.Program_options (usage errors -> exit 64), --help text with examples, --json output,
// progress on stderr (only when stderr is a TTY), and report paths.
#pragma once
#include <boost/program_options.hpp>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/base/json.hpp"
#include "attnspec/io/report_writer.hpp"

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

// The explicit table of commands (cli.cpp), sorted by name: one line {name, summary, run_<name>}
// per command, run_<name> declared in commands.hpp and defined in cmd_<name>.cpp.
std::vector<Command>& command_table();
// `attnspec --help`: usage, the commands of the table in table order, exit codes.
void print_help(std::ostream& os);

// The options every command spells and treats the same way (where the command has them):
//   --seed S      master seed of anything random, recorded in the report (default per command)
//   --out F.h5    report path (default reports/out/<command>.h5, directory created)
//   --no-report   write no report at all (stdout only)
//   --json        one JSON document on stdout instead of text
struct CommonOptions {
    std::uint64_t seed = 0;
    std::string out;
    bool no_report = false;
    bool json = false;
};
enum CommonFlag : unsigned { kSeed = 1u, kOut = 2u, kNoReport = 4u, kJson = 8u, kAllCommon = 15u };
// Adds the selected common options to `desc`, bound to `o`; `o.seed` holds the default seed and
// `default_report` names the default report file in the --out help text.
void add_common_options(po::options_description& desc, CommonOptions& o,
                        const std::string& default_report, unsigned which = kAllCommon);
// The report path for these options: "" with --no-report (write nothing), else report_path(),
// checked before any work (check_output_target in io/report_writer.hpp): exit 73 when it is a
// special file or cannot be created, 64 when it is one of `inputs`. Call it before loading or
// computing anything. Rejects --out together with --no-report (Usage).
std::string report_target(const CommonOptions& o, const std::string& default_report,
                          const std::vector<std::string>& inputs = {});

// The command-line option that sets a library parameter (Error::parameter()), e.g. "max_bytes"
// -> "--max-memory"; "" when the parameter has no option. main() appends it to error messages.
std::string flag_for_parameter(const std::string& parameter);

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
