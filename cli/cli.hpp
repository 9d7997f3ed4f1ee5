// The attnspec command table and the helpers every cmd_<name>.cpp shares: option parsing with
// Boost.Program_options (usage errors -> exit 64), the short --help, --json output,
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
#include "attnspec/report/kappa_text.hpp"
#include "attnspec/spectral/svd.hpp"

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

// Parses `inv.args` against `desc` (plus positional `pos`). Prints the short help and returns
// false when --help was given: the usage line with `synopsis`, the command's summary, one line per
// option, `examples` (two, under "examples:") and the path of docs/cli/<command>.md, which holds
// the long form (tests/cli/help_pages.sh checks that every flag of the help is on that page; no
// machine timings in --help). Throws Error(Usage) on unknown or malformed options.
bool parse(const Invocation& inv, const std::string& command, const std::string& synopsis,
           const std::string& examples, po::options_description& desc, po::variables_map& vm,
           const po::positional_options_description* pos = nullptr);

// Strict numbers, one set for every command. Each throws Error(Usage) with a one-line message
// naming `option` on anything but a plain decimal number in range: no sign where none is allowed,
// no trailing text, no overflow, no NaN or infinity.
//   parse_seed:  0 .. 2^64 - 1 (digits only; "-1" is refused, not wrapped)
//   parse_count: an integer in [min, max]
//   parse_dim:   a dimension, 1 .. kMaxDim (the BLAS/LAPACK backends index with 32-bit ints)
//   parse_real:  a finite number >= min (> min when `open_min`) and <= max; a bound of magnitude
//                1e300 or more is no bound
constexpr long kMaxDim = 2147483647;
std::uint64_t parse_seed(const std::string& text, const std::string& option);
long parse_count(const std::string& text, const std::string& option, long min, long max);
long parse_dim(const std::string& text, const std::string& option);
double parse_real(const std::string& text, const std::string& option, double min, double max,
                  bool open_min = false);
// Boost option values that keep the text and convert it with the helpers above when the options
// are stored (po::notify in parse()), so a malformed value is a usage error naming the option.
po::typed_value<std::string>* seed_value(std::uint64_t* target, const std::string& option);
po::typed_value<std::string>* count_value(long* target, const std::string& option, long min,
                                          long max);
po::typed_value<std::string>* count_value(int* target, const std::string& option, long min,
                                          long max);
po::typed_value<std::string>* real_value(double* target, const std::string& option, double min,
                                         double max, bool open_min = false);
// The options of `desc` the user gave on the command line (not defaulted).
bool given(const po::variables_map& vm, const std::string& name);
// Throws Usage "<command>: --flag does not apply <why>" for the first of `flags` given.
void reject_given(const po::variables_map& vm, const std::string& command,
                  const std::vector<std::string>& flags, const std::string& why);

// "128x64" or "128,64" -> {128, 64} (each a dimension as parse_dim); throws Usage, with an example
// of `count` dimensions.
std::vector<long> parse_dims(const std::string& s, size_t count, const std::string& option);

// Progress on stderr: "\r[thm3.5] 120/500" when stderr is a TTY, a line every ~10% otherwise
// unless quiet.
class Progress {
  public:
    Progress(std::string label, long total, bool enabled = true);
    void update(long done);
    // The same with a note after the count, e.g. "products, ~12 s left".
    void update(long done, const std::string& note);
    // A new total (instances dropped or added while running); the printed deciles carry on.
    void set_total(long total) { total_ = total; }
    // Ends the bar: on a TTY, its last count redrawn (a bar drawn beside others ends on its own
    // count) and a newline.
    void done();

  private:
    std::string label_;
    std::string last_;  // the last count and note drawn (TTY)
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
