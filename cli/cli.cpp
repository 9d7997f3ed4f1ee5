#include "cli.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <sstream>
#include <sys/stat.h>

#include "attnspec/gpu/base/device.hpp"
#include "attnspec/version.hpp"
#include "commands.hpp"

namespace attnspec::cli {

std::vector<Command>& command_table() {
    static std::vector<Command> table = {
        {"cond", "singular values and kappa (strict, nz) with enclosures of a matrix in an HDF5 file", run_cond},
        {"fidelity", "Linear-InfSA fidelity: cos(a, Perron/Katz vectors) over data families", run_fidelity},
        {"info", "build flags, library versions, CUDA device status", run_info},
        {"jacobian", "exact attention Jacobians J (weights) and J_X (input), Thm 3.3", run_jacobian},
        {"neumann", "InfSA Neumann kernel: invariants, truncation table, centralities, absorbing check", run_neumann},
        {"report", "show or render an attnspec HDF5 report", run_report},
        {"verify", "run the theorem checks (--list); --all is the main job", run_verify},
    };
    return table;
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
            ("report path (default reports/out/" + default_report + ", directory created)").c_str());
    if (which & kNoReport)
        desc.add_options()("no-report", po::bool_switch(&o.no_report),
                           "write no report (results on stdout only)");
    if (which & kJson)
        desc.add_options()("json", po::bool_switch(&o.json), "one JSON document on stdout");
}

std::string report_target(const CommonOptions& o, const std::string& default_report) {
    if (o.no_report) {
        if (!o.out.empty()) fail_usage("--out and --no-report exclude each other");
        return "";
    }
    return report_path(o.out, default_report);
}

std::string flag_for_parameter(const std::string& parameter) {
    static const std::pair<const char*, const char*> table[] = {
        {"max_bytes", "--max-memory"},
        {"gamma", "--gamma"},
        {"seed", "--seed"},
    };
    for (const auto& [p, f] : table)
        if (parameter == p) return f;
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
