#include "report_render.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "attnspec/base/errors.hpp"

namespace attnspec::cli {

namespace {
const char* kVerdicts[4] = {"holds", "violated", "inconclusive", "not_applicable"};

// A Markdown table cell: '|' would end the cell.
std::string cell(const std::string& t) {
    std::string out;
    for (char c : t) out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
}

std::string num(double x) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6g", x);
    return buf;
}
}  // namespace

ReportSummary read_report_summary(const H5Reader& r) {
    ReportSummary s;
    for (const auto& a : r.attr_names("/")) s.provenance.emplace_back(a, r.attr_as_text("/", a));
    for (const auto& g : r.children("/"))
        if (g != "checks") s.other_groups.push_back(g);
    if (!r.exists("/checks")) return s;
    for (const auto& name : r.children("/checks")) {
        const std::string p = "/checks/" + name;
        CheckSummary c;
        c.name = name;
        c.claim = r.attr_string(p, "claim");
        c.verdict = r.attr_string(p, "verdict");
        c.headline = r.attr_string(p, "headline_comparison");
        c.instances = static_cast<long>(r.attr_double(p, "instances"));
        c.seconds = r.attr_double(p, "seconds");
        if (r.has_attr(p, "search_effort")) c.search_effort = r.attr_string(p, "search_effort");
        for (int v = 0; v < 4; ++v) c.counts[v] = static_cast<long>(r.attr_double(p, std::string("n_") + kVerdicts[v]));
        const auto names = r.strings(p + "/regimes/regime");
        std::vector<std::vector<double>> cnt(4);
        for (int v = 0; v < 4; ++v)
            if (!names.empty()) cnt[v] = r.vector(p + "/regimes/n_" + kVerdicts[v]);
        std::vector<double> worst, median;
        if (!names.empty()) {
            worst = r.vector(p + "/regimes/worst_ratio");
            median = r.vector(p + "/regimes/median_ratio");
        }
        for (size_t i = 0; i < names.size(); ++i) {
            RegimeRow row;
            row.regime = names[i];
            for (int v = 0; v < 4; ++v) row.counts[v] = static_cast<long>(cnt[v][i]);
            row.worst_ratio = worst[i];
            row.median_ratio = median[i];
            c.regimes.push_back(row);
        }
        if (r.exists(p + "/records"))
            for (const auto& rec : r.children(p + "/records")) {
                const std::string rp = p + "/records/" + rec;
                std::string head = "[" + r.attr_string(rp, "verdict") + "] regime " +
                                   r.attr_string(rp, "regime") + ", seed " + r.attr_string(rp, "seed") +
                                   (r.has_attr(rp, "is_worst") ? " (tightest)" : "");
                c.record_lines.push_back(head);
                for (const auto& cm : r.children(rp + "/comparisons")) {
                    const std::string cp = rp + "/comparisons/" + cm;
                    c.record_lines.push_back(
                        "    " + cm + ": " + r.attr_string(cp, "lhs_name") + " = " +
                        num(r.attr_double(cp, "lhs")) + " " + r.attr_string(cp, "relation") + " " +
                        r.attr_string(cp, "rhs_name") + " = " + num(r.attr_double(cp, "rhs")) +
                        " -> " + r.attr_string(cp, "verdict") + " (" + r.attr_string(cp, "basis") + ")");
                }
            }
        s.checks.push_back(std::move(c));
    }
    return s;
}

std::string render_checks_text(const ReportSummary& s) {
    std::ostringstream os;
    for (const auto& c : s.checks) {
        os << c.name << ": " << c.verdict << " over " << c.instances << " instances (holds "
           << c.counts[0] << ", violated " << c.counts[1] << ", inconclusive " << c.counts[2]
           << ", not applicable " << c.counts[3] << ") in " << num(c.seconds) << " s\n";
        os << "  claim: " << c.claim << "\n";
        for (const auto& r : c.regimes)
            os << "  " << r.regime << ": " << r.counts[0] << "/" << r.counts[1] << "/" << r.counts[2]
               << "/" << r.counts[3] << "  worst ratio " << num(r.worst_ratio) << ", median "
               << num(r.median_ratio) << "\n";
        for (const auto& l : c.record_lines) os << "  " << l << "\n";
    }
    for (const auto& g : s.other_groups)
        if (g != "checks") os << "group /" << g << " (see --tree)\n";
    return os.str();
}

std::string render_markdown(const ReportSummary& s) {
    std::ostringstream os;
    os << "# attnspec report\n\n";
    os << "Every verdict is decided by enclosures (reports/SCHEMA.md): `holds` and `violated` are "
          "proved, `inconclusive` means the enclosures overlap. Ratios are lhs/rhs of each check's "
          "headline comparison (for a bound, how close the instance came to it).\n\n";
    os << "## Summary\n\n| check | claim | verdict | instances | holds | violated | inconclusive | "
          "n/a | time (s) |\n|---|---|---|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& c : s.checks)
        os << "| " << c.name << " | " << cell(c.claim) << " | **" << c.verdict << "** | " << c.instances
           << " | " << c.counts[0] << " | " << c.counts[1] << " | " << c.counts[2] << " | "
           << c.counts[3] << " | " << num(c.seconds) << " |\n";
    for (const auto& c : s.checks) {
        os << "\n## " << c.name << "\n\n" << c.claim << "\n\nHeadline comparison: `" << c.headline
           << "`.";
        if (!c.search_effort.empty()) os << " Search effort: " << c.search_effort << ".";
        os << "\n\n| regime | holds | violated | inconclusive | n/a | worst ratio | median ratio |\n"
              "|---|---:|---:|---:|---:|---:|---:|\n";
        for (const auto& r : c.regimes)
            os << "| " << r.regime << " | " << r.counts[0] << " | " << r.counts[1] << " | "
               << r.counts[2] << " | " << r.counts[3] << " | " << num(r.worst_ratio) << " | "
               << num(r.median_ratio) << " |\n";
        if (!c.record_lines.empty()) {
            os << "\nStored records (replayable from their seeds):\n\n```\n";
            for (const auto& l : c.record_lines) os << l << "\n";
            os << "```\n";
        }
    }
    os << "\n## Provenance\n\n| key | value |\n|---|---|\n";
    for (const auto& [k, v] : s.provenance) os << "| " << k << " | " << v << " |\n";
    return os.str();
}

void write_text_atomically(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream f(tmp, std::ios::binary);
        if (!f) throw Error(ExitCode::CantCreate, "cannot create '" + path + "': " + std::strerror(errno));
        f << text;
        f.flush();
        if (!f) {
            std::remove(tmp.c_str());
            throw Error(ExitCode::IoError, "cannot write '" + tmp + "'");
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw Error(ExitCode::CantCreate, "cannot rename into '" + path + "': " + std::strerror(errno));
    }
}

}  // namespace attnspec::cli
