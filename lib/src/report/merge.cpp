// report merge: validation of shard reports and the merged report (report/merge.hpp).
#include "attnspec/report/merge.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "attnspec/base/errors.hpp"
#include "attnspec/io/h5.hpp"
#include "attnspec/io/provenance.hpp"
#include "attnspec/io/report_writer.hpp"
#include "attnspec/report/check_records.hpp"
#include "attnspec/report/shard.hpp"
#include "attnspec/report/summary.hpp"

namespace attnspec {
namespace {

namespace fs = std::filesystem;

// The counterexample attributes of a check run (report/check_records.cpp, write_check_run).
const char* const kCounterexampleDir = "counterexample_dir";
const char* const kCounterexampleFiles = "counterexample_files";

Error data_error(const std::string& msg) {
    return Error(ExitCode::DataError, "report merge: " + msg);
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    if (s.empty()) return out;
    std::stringstream in(s);
    for (std::string part; std::getline(in, part, sep);) out.push_back(part);
    return out;
}

std::string companion_of(const std::string& report) {
    const bool h5 = report.size() > 3 && report.compare(report.size() - 3, 3, ".h5") == 0;
    return (h5 ? report.substr(0, report.size() - 3) : report) + ".counterexamples";
}

// One shard report, read and checked to carry the shard attributes.
struct Shard {
    std::string path;
    std::unique_ptr<H5Reader> r;
    long index = 0, count = 0;
    std::string selection, options;
    std::vector<std::string> checks;
    std::map<std::string, std::vector<std::string>> files;  // check -> counterexample files
};

Shard read_shard(const std::string& path) {
    Shard s;
    s.path = path;
    s.r = std::make_unique<H5Reader>(path);
    for (const char* a : kShardAttributes)
        if (!s.r->has_attr("/", a))
            throw data_error(path + " is not a shard report (no root attribute '" + a +
                             "'; shards are written by 'attnspec verify --shard i/n')");
    s.index = s.r->attr_count("/", kShardAttributes[0]);
    s.count = s.r->attr_count("/", kShardAttributes[1]);
    s.selection = s.r->attr_string("/", kShardAttributes[2]);
    s.checks = split(s.r->attr_string("/", kShardAttributes[3]), ',');
    s.options = s.r->attr_string("/", kShardAttributes[4]);
    if (s.count < 1 || s.index >= s.count)
        throw data_error(path + ": shard_index " + std::to_string(s.index) + " of shard_count " +
                         std::to_string(s.count) + " is out of range");
    return s;
}

// Refuses a shard that is not a part of the same run as `first`.
void check_same_run(const Shard& first, const Shard& s) {
    const std::string pair = s.path + " and " + first.path;
    if (s.count != first.count)
        throw data_error(pair + " split a run into different numbers of shards (" +
                         std::to_string(s.count) + " vs " + std::to_string(first.count) + ")");
    if (s.selection != first.selection)
        throw data_error(pair + " ran different check selections ('" + s.selection + "' vs '" +
                         first.selection + "')");
    if (s.options != first.options)
        throw data_error(pair + " ran with different options (" +
                         first_difference(first.options, s.options) + ")");
    std::vector<std::string> keys = {"schema_version", "seed"};
    for (const auto& kv : build_versions()) keys.push_back(kv.first);
    for (const auto& k : keys) {
        const std::string a = first.r->has_attr("/", k) ? first.r->attr_as_text("/", k) : "(none)";
        const std::string b = s.r->has_attr("/", k) ? s.r->attr_as_text("/", k) : "(none)";
        if (a != b)
            throw data_error(pair + " come from different runs or builds (" + k + " " + b + " vs " +
                             a + ")");
    }
}

// Every index 0..n-1 once, every selected check held once and stored in its shard.
void check_cover(const std::vector<Shard>& shards) {
    const long n = shards.front().count;
    std::map<long, const Shard*> by_index;
    for (const auto& s : shards) {
        const auto [it, fresh] = by_index.emplace(s.index, &s);
        if (!fresh)
            throw data_error(s.path + " and " + it->second->path + " are both shard " +
                             std::to_string(s.index) + " of " + std::to_string(n));
    }
    // Indices are distinct and in [0, n): n - |given| are missing. Name the first few only, so
    // that a file claiming 10^18 shards costs no more than one claiming 3 (no loop to n).
    const long n_missing = n - static_cast<long>(by_index.size());
    if (n_missing > 0) {
        constexpr long kNamed = 10;
        std::string missing;
        long named = 0;
        for (long i = 0; named < kNamed && named < n_missing; ++i)
            if (!by_index.count(i)) {
                missing += (named ? ", " : "") + std::to_string(i);
                ++named;
            }
        if (n_missing > named) missing += " and " + std::to_string(n_missing - named) + " more";
        throw data_error("shard(s) " + missing + " of " + std::to_string(n) + " missing (given " +
                         std::to_string(shards.size()) + " file(s))");
    }
    std::map<std::string, const Shard*> holder;
    for (const auto& s : shards)
        for (const auto& c : s.checks) {
            const auto [it, fresh] = holder.emplace(c, &s);
            if (!fresh)
                throw data_error("check " + c + " is held by both " + s.path + " and " +
                                 it->second->path);
            if (!s.r->is_group(std::string("/") + check_runs_group() + "/" + c))
                throw data_error(s.path + " names check " + c + " but holds no group for it");
        }
    const auto selection = split(shards.front().selection, ',');
    for (const auto& c : selection)
        if (!holder.count(c)) throw data_error("no shard holds check " + c);
    if (holder.size() != selection.size())
        throw data_error("the shards hold checks the selection '" + shards.front().selection +
                         "' does not name");
}

// The counterexample files of every check of `s`, checked against the count its run stores.
void find_counterexamples(Shard& s) {
    const std::string dir = companion_of(s.path);
    for (const auto& c : s.checks) {
        const std::string g = std::string("/") + check_runs_group() + "/" + c;
        const long want =
            s.r->has_attr(g, kCounterexampleFiles) ? s.r->attr_count(g, kCounterexampleFiles) : 0;
        auto& names = s.files[c];
        const std::string prefix = c + "-instance_";
        std::error_code ec;
        if (want > 0)
            for (const auto& e : fs::directory_iterator(dir, ec)) {
                const std::string name = e.path().filename().string();
                if (name.rfind(prefix, 0) == 0 && e.is_regular_file()) names.push_back(name);
            }
        std::sort(names.begin(), names.end());
        if (static_cast<long>(names.size()) != want)
            throw data_error(s.path + ": check " + c + " wrote " + std::to_string(want) +
                             " counterexample file(s), " + dir + " holds " +
                             std::to_string(names.size()));
    }
}

// The merged report's provenance: the shards' root attributes other than those the writer sets
// and the shard attributes, with this command line.
Provenance merged_provenance(const Shard& first, const std::string& command_line) {
    Provenance p;
    p.command_line = command_line;
    p.seed = std::stoull(first.r->attr_string("/", "seed"));
    std::set<std::string> own = {"schema_version", "command_line", "created_utc", "host", "seed"};
    for (const auto& kv : build_versions()) own.insert(kv.first);
    for (const char* a : kShardAttributes) own.insert(a);
    for (const auto& a : first.r->attr_names("/"))
        if (!own.count(a)) p.extra.emplace_back(a, first.r->attr_as_text("/", a));
    return p;
}

// The build attributes of the merged report are the shards' (they computed the numbers), not
// those of the binary that merges.
void copy_build_attributes(const Shard& first, H5Group& root) {
    for (const auto& kv : build_versions()) {
        if (!first.r->has_attr("/", kv.first)) continue;
        H5Adelete(root.id(), kv.first.c_str());
        root.attr(kv.first, first.r->attr_as_text("/", kv.first));
    }
}

// Copies /checks/<check> of `s` into `checks`, naming the merged companion directory.
void copy_check(const Shard& s, const std::string& check, H5Group& checks,
                const std::string& companion) {
    H5Id src(H5Fopen(s.path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    if (!src.valid()) throw Error(ExitCode::IoError, "report merge: cannot reopen " + s.path);
    const std::string g = std::string("/") + check_runs_group() + "/" + check;
    if (H5Ocopy(src.get(), g.c_str(), checks.id(), check.c_str(), H5P_DEFAULT, H5P_DEFAULT) < 0)
        throw Error(ExitCode::IoError, "report merge: cannot copy " + g + " of " + s.path);
    H5Id dst(H5Gopen2(checks.id(), check.c_str(), H5P_DEFAULT), H5Gclose);
    if (H5Aexists(dst.get(), kCounterexampleDir) > 0) {
        H5Adelete(dst.get(), kCounterexampleDir);
        H5Group(std::move(dst)).attr(kCounterexampleDir, companion);
    }
}

}  // namespace

std::string first_difference(const std::string& a, const std::string& b) {
    const auto la = split(a, '\n'), lb = split(b, '\n');
    for (size_t i = 0; i < std::max(la.size(), lb.size()); ++i) {
        const std::string x = i < la.size() ? la[i] : "(none)",
                          y = i < lb.size() ? lb[i] : "(none)";
        if (x != y) return y + " vs " + x;
    }
    return "";
}

MergedReport merge_shard_reports(const std::vector<std::string>& paths, const std::string& target,
                                 const std::string& command_line) {
    if (paths.empty()) throw Error(ExitCode::Usage, "report merge: give the shard reports");
    check_output_target(target, paths);
    std::vector<Shard> shards;
    shards.reserve(paths.size());
    for (const auto& p : paths) shards.push_back(read_shard(p));
    for (const auto& s : shards) check_same_run(shards.front(), s);
    check_cover(shards);
    for (auto& s : shards) find_counterexamples(s);

    MergedReport m;
    m.target = target;
    m.shards = static_cast<int>(shards.size());
    ReportWriter w(target, merged_provenance(shards.front(), command_line));
    copy_build_attributes(shards.front(), w.root());
    const std::string staging = w.companion_staging();
    const std::string companion = fs::path(w.companion_dir()).filename().string();
    H5Group checks = w.root().group(check_runs_group());
    for (const auto& c : split(shards.front().selection, ',')) {
        const auto holder = std::find_if(shards.begin(), shards.end(), [&](const Shard& s) {
            return std::find(s.checks.begin(), s.checks.end(), c) != s.checks.end();
        });
        copy_check(*holder, c, checks, companion);
        for (const auto& f : holder->files.at(c)) {
            std::error_code ec;
            fs::copy_file(companion_of(holder->path) + "/" + f, staging + "/" + f, ec);
            if (ec)
                throw Error(ExitCode::IoError,
                            "report merge: cannot copy " + f + ": " + ec.message());
            ++m.counterexample_files;
        }
        m.checks.push_back(c);
    }
    w.commit();
    return m;
}

std::string merged_report_text(const MergedReport& m) {
    std::ostringstream os;
    os << "merged " << m.shards << " shard(s), " << m.checks.size() << " check(s) and "
       << m.counterexample_files << " counterexample file(s) into " << m.target << "\n";
    const H5Reader r(m.target);
    os << render_checks_text(read_report_summary(r));
    return os.str();
}

}  // namespace attnspec
