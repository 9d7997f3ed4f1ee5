#include "cli.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string_view>
#include <utility>

#include "attnspec/base/format.hpp"
#include "attnspec/gpu/base/driver_probe.hpp"
#include "attnspec/version.hpp"
#include "commands.hpp"

namespace attnspec::cli {

// clang-format off
std::vector<Command>& command_table() {
    static std::vector<Command> table = {
        {"check-kernel", "a user's attention kernel output (forward, vjp, jvp, linear-infsa, "
                         "pure-infsa, neumann, spec-attention) against the float64 reference: "
                         "rounding bound, baseline rule, verdict",
         run_check_kernel},
        {"cond", "singular values and kappa (strict, nz) with enclosures of a matrix "
                 "in an HDF5 file",
         run_cond},
        {"dataset", "the named datasets (real model heads) that --dataset selects: list, show",
         run_dataset},
        {"fidelity", "Linear-InfSA fidelity: cos(a, Perron/Katz vectors) over data families",
         run_fidelity},
        {"gpu-check", "every CUDA twin against its CPU reference: errors, tolerances, timings",
         run_gpu_check},
        {"import", "convert a checkpoint (safetensors, .npz) into the model input schema",
         run_import},
        {"info", "build flags, library versions, CUDA device status in words",
         run_info},
        {"jacobian", "exact attention Jacobians J (weights) and J_X (input), Thm 3.3",
         run_jacobian},
        {"neumann", "InfSA Neumann kernel: invariants, truncation table, centralities, "
                    "absorbing check",
         run_neumann},
        {"report", "show, render or merge attnspec HDF5 reports",
         run_report},
        {"verify", "run the theorem checks (--list); --all is the main job",
         run_verify},
    };
    return table;
}
// clang-format on

void print_help(std::ostream& os) {
    os << "attnspec " << ATTNSPEC_VERSION
       << " - numerical verification of the spectral theory of attention\n\n"
          "usage: attnspec <command> [options]\n"
          "       attnspec <command> --help   (options and examples for one command)\n"
          "       docs/cli/<command>.md       (everything about one command)\n"
          "       attnspec --version\n\n"
          "commands:\n";
    for (const auto& c : command_table())
        os << "  " << c.name << std::string(c.name.size() < 12 ? 12 - c.name.size() : 1, ' ')
           << c.summary << "\n";
    os << "\nEvery command takes --json (one JSON document on stdout); logs and progress go to\n"
          "stderr. Exit codes: 0 ok/holds, 1 violated, 2 inconclusive, 64 usage, 65 bad data,\n"
          "66 input missing, 69 no CUDA device, 70 internal error, 71 out of memory, 72 GPU\n"
          "backend failed to load, 73 cannot create output, 74 I/O error.\n\n"
          "start with:  attnspec verify --all        (every check, report in reports/out/)\n";
}

namespace {
// Boost 1.74 fills the "%value%"-style placeholders of an option error in a loop that never ends
// when the text it substitutes holds the placeholder itself (`--seed %value%` hung). When an
// argument holds a '%', the message is built without substitution.
std::string option_error_text(const po::error& e, const std::vector<std::string>& args) {
    const bool percent = std::any_of(args.begin(), args.end(), [](const std::string& a) {
        return a.find('%') != std::string::npos;
    });
    if (percent)
        if (const auto* named = dynamic_cast<const po::error_with_option_name*>(&e))
            return "the option '" + named->get_option_name() +
                   "' or its value is not valid (an argument holds '%': shown without its value)";
    return e.what();
}

// The options of a --help, one line each: spellings and value, then the description (one line;
// the long form of every option is on docs/cli/<command>.md).
void print_options(std::ostream& os, const po::options_description& desc) {
    std::vector<std::pair<std::string, std::string>> rows;
    std::size_t width = 0;
    for (const auto& o : desc.options()) {
        std::string name = o->format_name();
        const std::string param = o->format_parameter();
        if (!param.empty()) name += " " + param;
        width = std::max(width, name.size());
        rows.emplace_back(name, o->description());
    }
    width = std::min<std::size_t>(width, 30);
    os << "options:\n";
    for (const auto& [name, text] : rows)
        os << "  " << name << std::string(name.size() < width ? width - name.size() + 2 : 2, ' ')
           << text << "\n";
}

const Command* find_command(const std::string& name) {
    for (const auto& c : command_table())
        if (c.name == name) return &c;
    return nullptr;
}
}  // namespace

bool parse(const Invocation& inv, const std::string& command, const std::string& synopsis,
           const std::string& examples, po::options_description& desc, po::variables_map& vm,
           const po::positional_options_description* pos) {
    desc.add_options()("help,h", "show this help and exit");
    try {
        auto parser = po::command_line_parser(inv.args).options(desc);
        if (pos) parser.positional(*pos);
        const po::parsed_options parsed = parser.run();
        // Without a positional description Boost keeps a bare word under an empty key and
        // store() drops it: `attnspec neumann 64` would run with the defaults. Refuse it.
        for (const po::option& opt : parsed.options)
            if (opt.string_key.empty() && opt.position_key >= 0)
                throw Error(ExitCode::Usage,
                            command + ": unexpected argument '" +
                                (opt.original_tokens.empty() ? std::string()
                                                             : opt.original_tokens.front()) +
                                "': it takes no positional arguments (options start with --; "
                                "see 'attnspec " +
                                command + " --help')");
        // An empty value is not "not given": `--max-memory ''` would run with the default,
        // `--out ''` write the default path. Refuse it for every option but the two where an
        // empty list means something (verify --dataset '' / --embedded '': no such checks).
        for (const po::option& opt : parsed.options)
            if (!opt.string_key.empty() && opt.position_key < 0 && opt.value.size() == 1 &&
                opt.value.front().empty() && opt.string_key != "dataset" &&
                opt.string_key != "embedded")
                throw Error(ExitCode::Usage, command + ": --" + opt.string_key + " expects " +
                                                 (opt.string_key == "out" ? "a path" : "a value") +
                                                 ", got an empty string (see 'attnspec " + command +
                                                 " --help')");
        po::store(parsed, vm);
        if (vm.count("help")) {  // short: the long form is docs/cli/<command>.md
            std::cout << "usage: attnspec " << command << " " << synopsis << "\n";
            if (const Command* c = find_command(command)) std::cout << c->summary << "\n";
            std::cout << "\n";
            print_options(std::cout, desc);
            std::cout << "\n"
                      << examples << "\nfull documentation: docs/cli/" << command << ".md\n";
            return false;
        }
        po::notify(vm);
    } catch (const po::error& e) {
        throw Error(ExitCode::Usage, command + ": " + option_error_text(e, inv.args) +
                                         " (see 'attnspec " + command + " --help')");
    }
    return true;
}

void add_common_options(po::options_description& desc, CommonOptions& o,
                        const std::string& default_report, unsigned which) {
    if (which & kSeed)
        desc.add_options()(
            "seed", seed_value(&o.seed, "--seed"),
            ("master seed, recorded in the report (default " + std::to_string(o.seed) + ")")
                .c_str());
    if (which & kOut)
        desc.add_options()("out", po::value(&o.out)->notifier([](const std::string& v) {
            if (v.empty()) fail_usage("--out expects a path, got an empty string");
        }),
                           ("report path (default reports/out/" + default_report + ")").c_str());
    if (which & kNoReport)
        desc.add_options()("no-report", po::bool_switch(&o.no_report),
                           "write no report (results on stdout only)");
    if (which & kJson)
        desc.add_options()("json", po::bool_switch(&o.json), "one JSON document on stdout");
}

std::string report_target(const CommonOptions& o, const std::string& default_report,
                          const std::vector<std::string>& inputs) {
    if (o.no_report) {
        if (!o.out.empty()) fail_usage("--out and --no-report exclude each other");
        return "";
    }
    std::string target = report_path(o.out, default_report);
    check_output_target(target, inputs);  // 73 special file / uncreatable, 64 an input
    return target;
}

namespace {
// Library parameter (Error::parameter()) -> the option that sets it. Keep sorted by parameter:
// the static_assert below refuses an unsorted table.
constexpr std::pair<std::string_view, std::string_view> kParameterFlags[] = {
    {"K", "--orders"},
    {"accumulate", "--accumulate"},
    {"affinity", "--affinity"},
    {"bias", "--bias"},
    {"correction", "--correction"},
    {"dtype", "--dtype"},
    {"eps", "--eps"},
    {"factor", "--factor"},
    {"family", "--family"},
    {"gamma", "--gamma"},
    {"heads", "--heads"},
    {"kappa_convention", "--convention"},
    {"kappa_lambda", "--kappa-lambda"},
    {"large_svd_mode", "--svd"},
    {"layers", "--layers"},
    {"mask", "--mask"},
    {"matrix_free", "--matrix-free"},
    {"max_bytes", "--max-memory"},
    {"mu", "--mu"},
    {"regimes", "--regime"},
    {"rtol", "--rtol"},
    {"scale", "--scale"},
    {"search_evals", "--search-evals"},
    {"search_seconds", "--search-seconds"},
    {"seed", "--seed"},
    {"store_bytes", "--store-limit"},
    {"stress_case", "--generate"},
    {"svd_method", "--method"},
    {"target", "--target"},
    {"time_budget_s", "--time-budget"},
    {"token_dist", "--token-dist"},
    {"trials", "--trials"},
    {"weight_scale", "--weight-scale"},
};
constexpr bool sorted_by_parameter() {
    for (size_t i = 1; i < std::size(kParameterFlags); ++i)
        if (!(kParameterFlags[i - 1].first < kParameterFlags[i].first)) return false;
    return true;
}
static_assert(sorted_by_parameter(), "kParameterFlags must be sorted by parameter, no duplicates");
}  // namespace

std::string flag_for_parameter(const std::string& parameter) {
    for (const auto& [p, f] : kParameterFlags)
        if (parameter == p) return std::string(f);
    return "";
}

namespace {
[[noreturn]] void bad_number(const std::string& option, const std::string& what,
                             const std::string& text) {
    fail_usage(option + " expects " + what + ", got '" + text + "'");
}
std::string number_text(double x) {
    std::ostringstream os;
    os << x;
    return os.str();
}
// "digits only" (an optional '-' first when negatives are allowed): no blanks, '+', hex.
bool plain_integer(const std::string& t, bool allow_minus) {
    const std::size_t first = allow_minus && !t.empty() && t[0] == '-' ? 1 : 0;
    if (t.size() == first) return false;
    for (std::size_t i = first; i < t.size(); ++i)
        if (t[i] < '0' || t[i] > '9') return false;
    return true;
}
}  // namespace

std::uint64_t parse_seed(const std::string& text, const std::string& option) {
    const std::string what = "a seed, an integer from 0 to 18446744073709551615";
    if (!plain_integer(text, false)) bad_number(option, what, text);
    errno = 0;
    const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
    if (errno == ERANGE) bad_number(option, what, text);
    return static_cast<std::uint64_t>(v);
}

long parse_count(const std::string& text, const std::string& option, long min, long max) {
    const std::string what =
        "an integer from " + std::to_string(min) + " to " + std::to_string(max);
    if (!plain_integer(text, min < 0)) bad_number(option, what, text);
    errno = 0;
    const long long v = std::strtoll(text.c_str(), nullptr, 10);
    if (errno == ERANGE || v < min || v > max) bad_number(option, what, text);
    return static_cast<long>(v);
}

long parse_dim(const std::string& text, const std::string& option) {
    return parse_count(text, option, 1, kMaxDim);
}

double parse_real(const std::string& text, const std::string& option, double min, double max,
                  bool open_min) {
    std::string what = "a finite number";  // bounds of magnitude >= 1e300 mean "none"
    if (min > -1e300) what += std::string(open_min ? " > " : " >= ") + number_text(min);
    if (max < 1e300) what += (min > -1e300 ? " and <= " : " <= ") + number_text(max);
    char* end = nullptr;
    const double v = text.empty() || std::isspace(static_cast<unsigned char>(text[0]))
                         ? std::nan("")
                         : std::strtod(text.c_str(), &end);
    if (!end || *end != '\0' || !std::isfinite(v) || v < min || (open_min && v == min) || v > max)
        bad_number(option, what, text);
    return v;
}

po::typed_value<std::string>* seed_value(std::uint64_t* target, const std::string& option) {
    return po::value<std::string>()->notifier(
        [target, option](const std::string& t) { *target = parse_seed(t, option); });
}

po::typed_value<std::string>* count_value(long* target, const std::string& option, long min,
                                          long max) {
    return po::value<std::string>()->notifier([target, option, min, max](const std::string& t) {
        *target = parse_count(t, option, min, max);
    });
}

po::typed_value<std::string>* count_value(int* target, const std::string& option, long min,
                                          long max) {
    max = std::min<long>(max, std::numeric_limits<int>::max());
    min = std::max<long>(min, std::numeric_limits<int>::min());
    return po::value<std::string>()->notifier([target, option, min, max](const std::string& t) {
        *target = static_cast<int>(parse_count(t, option, min, max));
    });
}

po::typed_value<std::string>* real_value(double* target, const std::string& option, double min,
                                         double max, bool open_min) {
    return po::value<std::string>()->notifier(
        [target, option, min, max, open_min](const std::string& t) {
            *target = parse_real(t, option, min, max, open_min);
        });
}

bool given(const po::variables_map& vm, const std::string& name) {
    return vm.count(name) > 0 && !vm[name].defaulted();
}

void reject_given(const po::variables_map& vm, const std::string& command,
                  const std::vector<std::string>& flags, const std::string& why) {
    for (const auto& f : flags)
        if (given(vm, f)) fail_usage(command + ": --" + f + " does not apply " + why);
}

std::vector<long> parse_dims(const std::string& s, size_t count, const std::string& option) {
    static const char* kExamples[] = {"", "128", "128x64", "128x64x32"};
    const std::string example = count < 4 ? kExamples[count] : "128x64x...";
    const std::string what = std::to_string(count) + (count == 1 ? " dimension" : " dimensions") +
                             " from 1 to " + std::to_string(kMaxDim) + " like " + example;
    std::string t = s;
    for (char& c : t)
        if (c == 'x' || c == 'X') c = ',';
    std::vector<long> out;
    std::stringstream ss(t);
    std::string part;
    while (std::getline(ss, part, ',')) {
        if (!plain_integer(part, false)) bad_number(option, what, s);
        errno = 0;
        const long long v = std::strtoll(part.c_str(), nullptr, 10);
        if (errno == ERANGE || v < 1 || v > kMaxDim) bad_number(option, what, s);
        out.push_back(static_cast<long>(v));
    }
    if (out.size() != count || t.empty() || t.back() == ',') bad_number(option, what, s);
    return out;
}

Progress::Progress(std::string label, long total, bool enabled)
    : label_(std::move(label)), total_(total), tty_(isatty(STDERR_FILENO)), enabled_(enabled) {}

void Progress::update(long done) { update(done, ""); }

void Progress::update(long done, const std::string& note) {
    if (!enabled_ || total_ <= 0) return;
    done = std::min(std::max(done, 0L), total_);  // the count never passes the total
    const std::string tail = note.empty() ? "" : " " + note;
    if (tty_) {  // "\033[K" clears what a longer previous note left on the line
        last_ = std::to_string(done) + "/" + std::to_string(total_) + tail;
        std::fprintf(stderr, "\r[%s] %s\033[K", label_.c_str(), last_.c_str());
        std::fflush(stderr);
        return;
    }
    long decile = done * 10 / total_;
    if (decile != last_decile_ && decile > 0) {
        last_decile_ = decile;
        std::fprintf(stderr, "[%s] %ld/%ld%s\n", label_.c_str(), done, total_, tail.c_str());
    }
}

void Progress::done() {
    if (!enabled_ || !tty_) return;
    if (last_.empty())
        std::fprintf(stderr, "\n");
    else
        std::fprintf(stderr, "\r[%s] %s\033[K\n", label_.c_str(), last_.c_str());
}

// cli.hpp: Kappa::describe with the digits its enclosure supports.
void log(const std::string& msg) { std::cerr << "attnspec: " << msg << "\n"; }

std::string report_path(const std::string& out, const std::string& default_name) {
    if (!out.empty()) return out;
    ::mkdir("reports", 0755);
    ::mkdir("reports/out", 0755);
    return "reports/out/" + default_name;
}

Provenance provenance(const Invocation& inv, std::uint64_t seed) {
    Provenance p;
    p.command_line = inv.command_line;
    p.seed = seed;
    // The driver probe (dlopen libcuda.so.1), not the CUDA runtime: no command but gpu-check
    // loads the CUDA libraries (gpu/base/backend.hpp).
    p.extra.emplace_back("cuda", gpu::cuda_summary(gpu::probe_driver(), gpu::build_cuda_version()));
    return p;
}

void json_header(JsonWriter& j, const std::string& command) {
    j.kv("schema_version", kSchemaVersion);
    j.kv("tool", std::string("attnspec ") + ATTNSPEC_VERSION);
    j.kv("command", command);
}

}  // namespace attnspec::cli
