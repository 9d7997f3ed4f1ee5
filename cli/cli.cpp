#include "cli.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <sstream>
#include <sys/stat.h>

#include "attnspec/gpu/device.hpp"

namespace attnspec::cli {

std::vector<Command>& command_table() {
    static std::vector<Command> table;
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
