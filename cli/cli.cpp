#include "cli.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string_view>
#include <utility>

#include "attnspec/gpu/base/device.hpp"
#include "attnspec/version.hpp"
#include "commands.hpp"

namespace attnspec::cli {

// clang-format off
std::vector<Command>& command_table() {
    static std::vector<Command> table = {
        {"cond", "singular values and kappa (strict, nz) with enclosures of a matrix "
                 "in an HDF5 file",
         run_cond},
        {"fidelity", "Linear-InfSA fidelity: cos(a, Perron/Katz vectors) over data families",
         run_fidelity},
        {"info", "build flags, library versions, CUDA device status",
         run_info},
        {"jacobian", "exact attention Jacobians J (weights) and J_X (input), Thm 3.3",
         run_jacobian},
        {"neumann", "InfSA Neumann kernel: invariants, truncation table, centralities, "
                    "absorbing check",
         run_neumann},
        {"report", "show or render an attnspec HDF5 report",
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
          "       attnspec --version\n\n"
          "commands:\n";
    for (const auto& c : command_table())
        os << "  " << c.name << std::string(c.name.size() < 12 ? 12 - c.name.size() : 1, ' ')
           << c.summary << "\n";
    os << "\nEvery command takes --json (one JSON document on stdout); logs and progress go to\n"
          "stderr. Exit codes: 0 ok/holds, 1 violated, 2 inconclusive, 64 usage, 65 bad data,\n"
          "66 input missing, 69 no CUDA device, 70 internal error, 71 out of memory, 73 cannot\n"
          "create output, 74 I/O error.\n\n"
          "start with:  attnspec verify --all        (every check, report in reports/out/)\n";
}

bool parse(const Invocation& inv, const std::string& command, const std::string& synopsis,
           const std::string& examples, po::options_description& desc, po::variables_map& vm,
           const po::positional_options_description* pos) {
    desc.add_options()("help,h", "show this help and exit");
    try {
        auto parser = po::command_line_parser(inv.args).options(desc);
        if (pos) parser.positional(*pos);
        po::store(parser.run(), vm);
        if (vm.count("help")) {
            std::cout << "usage: attnspec " << command << " " << synopsis << "\n\n"
                      << desc << "\n"
                      << examples;
            return false;
        }
        po::notify(vm);
    } catch (const po::error& e) {
        throw Error(ExitCode::Usage,
                    command + ": " + e.what() + " (see 'attnspec " + command + " --help')");
    }
    return true;
}

void add_common_options(po::options_description& desc, CommonOptions& o,
                        const std::string& default_report, unsigned which) {
    if (which & kSeed)
        desc.add_options()("seed", po::value(&o.seed),
                           ("master seed of every random draw, recorded in the report (default " +
                            std::to_string(o.seed) + ")")
                               .c_str());
    if (which & kOut)
        desc.add_options()(
            "out", po::value(&o.out),
            ("report path (default reports/out/" + default_report + ", directory created)")
                .c_str());
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
    {"affinity", "--affinity"},
    {"correction", "--correction"},
    {"eps", "--eps"},
    {"family", "--family"},
    {"gamma", "--gamma"},
    {"heads", "--heads"},
    {"kappa_convention", "--convention"},
    {"kappa_lambda", "--kappa-lambda"},
    {"large_svd_mode", "--svd"},
    {"matrix_free", "--matrix-free"},
    {"max_bytes", "--max-memory"},
    {"mu", "--mu"},
    {"regimes", "--regime"},
    {"rtol", "--rtol"},
    {"search_evals", "--search-evals"},
    {"search_seconds", "--search-seconds"},
    {"seed", "--seed"},
    {"store_bytes", "--store-limit"},
    {"svd_method", "--method"},
    {"target", "--target"},
    {"time_budget_s", "--time-budget"},
    {"token_dist", "--tokens"},
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

std::vector<long> parse_dims(const std::string& s, size_t count, const std::string& option) {
    std::string t = s;
    for (char& c : t)
        if (c == 'x' || c == 'X') c = ',';
    std::vector<long> out;
    std::stringstream ss(t);
    std::string part;
    while (std::getline(ss, part, ',')) {
        char* end = nullptr;
        long v = std::strtol(part.c_str(), &end, 10);
        if (part.empty() || *end != '\0' || v <= 0)
            fail_usage(option + " expects " + std::to_string(count) +
                       " positive integers like 128x64, got '" + s + "'");
        out.push_back(v);
    }
    if (out.size() != count)
        fail_usage(option + " expects " + std::to_string(count) + " dimensions, got '" + s + "'");
    return out;
}

Progress::Progress(std::string label, long total, bool enabled)
    : label_(std::move(label)), total_(total), tty_(isatty(STDERR_FILENO)), enabled_(enabled) {}

void Progress::update(long done) {
    if (!enabled_ || total_ <= 0) return;
    if (tty_) {
        std::fprintf(stderr, "\r[%s] %ld/%ld", label_.c_str(), done, total_);
        std::fflush(stderr);
        return;
    }
    long decile = done * 10 / total_;
    if (decile != last_decile_ && decile > 0) {
        last_decile_ = decile;
        std::fprintf(stderr, "[%s] %ld/%ld\n", label_.c_str(), done, total_);
    }
}

void Progress::done() {
    if (enabled_ && tty_) std::fprintf(stderr, "\n");
}

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
    p.extra.emplace_back("cuda", gpu::device_info().summary());
    return p;
}

void json_header(JsonWriter& j, const std::string& command) {
    j.kv("schema_version", kSchemaVersion);
    j.kv("tool", std::string("attnspec ") + ATTNSPEC_VERSION);
    j.kv("command", command);
}

}  // namespace attnspec::cli
