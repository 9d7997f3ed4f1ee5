// The page of a verify report (/checks): summary with verdict counts and the strongest violation,
// one section per check (regime table, stored records) and per experiment.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "attnspec/base/format.hpp"
#include "experiment_output.hpp"
#include "report_kinds.hpp"

namespace attnspec::cli {

namespace {
// How far the headline comparison of a violated record is from its relation: lhs/rhs for an
// upper bound, rhs/lhs for a lower one (> 1 when violated); 0 when it cannot be said.
double excess(const StoredComparison& c) {
    if (!(c.lhs > 0 && c.rhs > 0)) return 0;
    return c.relation.find('>') != std::string::npos ? c.rhs / c.lhs : c.lhs / c.rhs;
}

// The summary bullets: what was tested, the counts, the strongest violation, what to read first.
std::vector<std::string> summary(const ReportSummary& s, const std::string& file) {
    long n = 0, counts[4] = {0, 0, 0, 0}, checks[4] = {0, 0, 0, 0};
    for (const auto& c : s.checks) {
        n += c.instances;
        for (int v = 0; v < 4; ++v) counts[v] += c.counts[v];
        for (int v = 0; v < 4; ++v) checks[v] += c.verdict == to_string(Verdict(v)) ? 1 : 0;
    }
    std::vector<std::string> out;
    out.push_back("Tested: " + std::to_string(s.checks.size()) + " checks over " +
                  std::to_string(n) + " instances" +
                  (s.experiments.empty() ? std::string()
                                         : "; " + std::to_string(s.experiments.size()) +
                                               " experiment(s), tables without a verdict") +
                  ".");
    out.push_back("Checks: " + std::to_string(checks[0]) + " hold, " + std::to_string(checks[1]) +
                  " violated, " + std::to_string(checks[2]) + " inconclusive, " +
                  std::to_string(checks[3]) +
                  " not applicable. Instances: " + std::to_string(counts[0]) + " hold, " +
                  std::to_string(counts[1]) + " violated, " + std::to_string(counts[2]) +
                  " inconclusive, " + std::to_string(counts[3]) + " not applicable.");
    const CheckRunSummary* wc = nullptr;
    const StoredRecord* wr = nullptr;
    const StoredComparison* wm = nullptr;
    for (const auto& c : s.checks)
        for (const auto& rec : c.records)
            for (const auto& cm : rec.comparisons)
                if (rec.verdict == "violated" && cm.name == c.headline &&
                    (!wm || excess(cm) > excess(*wm)))
                    wc = &c, wr = &rec, wm = &cm;
    if (wm)
        out.push_back("Strongest violation: " + wc->name + ", regime " + wr->regime + ", seed " +
                      wr->seed + ": " + wm->lhs_name + " = " + format_number(wm->lhs, 4) + " " +
                      wm->relation + " " + wm->rhs_name + " = " + format_number(wm->rhs, 4) +
                      " fails by a factor " + format_number(excess(*wm), 3) +
                      " (replay: `attnspec verify " + wc->name + " --instance " + file +
                      " --record " + wr->group.substr(wr->group.find_last_of('/') + 1) + "`).");
    std::string first;
    for (const char* v : {"violated", "inconclusive"})
        for (const auto& c : s.checks)
            if (first.empty() && c.verdict == v)
                first = "Look first at " + c.name + " (" + v + ": " +
                        std::to_string(c.counts[v[0] == 'v' ? 1 : 2]) + " of " +
                        std::to_string(c.instances) + " instances): " + c.claim + ".";
    out.push_back(first.empty() ? "Nothing to act on: every check holds or does not apply."
                                : first);
    return out;
}

// The conventions the run's records state ("; kappa: strict, ...; svd: eigen-jacobi").
std::string conventions_of(const ReportSummary& s, const std::string& run) {
    std::string out;
    const auto it = s.conventions.find(run);
    if (it == s.conventions.end()) return out;
    for (const auto& [k, v] : it->second) out += "; " + k + ": " + v;
    return out;
}

PageSection check_section(const CheckRunSummary& c, const std::string& conventions) {
    PageSection sec{"verify/" + c.name, c.name, {}};
    sec.para(c.claim);
    std::string p;
    if (!c.source.empty()) p += "Reconstructed statement; source: " + c.source + ". ";
    p += "Verdict **" + c.verdict + "** over " + std::to_string(c.instances) + " instances in " +
         format_duration(c.seconds) + ".";
    if (!c.search_effort.empty())
        p += " Search effort: " + c.search_effort + (c.search_effort.back() == '.' ? "" : ".");
    sec.para(p);
    std::vector<std::string> regime;
    std::vector<double> h, v, i, na, worst, median;
    for (const auto& r : c.regimes) {
        regime.push_back(r.regime), h.push_back(double(r.counts[0]));
        v.push_back(double(r.counts[1])), i.push_back(double(r.counts[2]));
        na.push_back(double(r.counts[3])), worst.push_back(r.worst_ratio);
        median.push_back(r.median_ratio);
    }
    PageTable t;
    t.convention = "ratio = lhs/rhs of the headline comparison `" + c.headline +
                   "` (for a bound, how close the instance came to it)" + conventions;
    t.text("regime", regime).numbers("holds", h).numbers("violated", v);
    t.numbers("inconclusive", i).numbers("n/a", na).numbers("worst ratio", worst);
    sec.table(t.numbers("median ratio", median));
    if (!c.records.empty())
        sec.para("Stored records (replayable from their seeds):").code(stored_record_lines(c));
    return sec;
}

PageSection experiment_section(const StoredExperiment& e, const std::string& conventions) {
    const ExperimentTable& t = e.table;
    PageSection sec{"verify/" + e.name, e.name + " (experiment)", {}};
    sec.para(e.claim);
    sec.para("An experiment has no verdict and does not affect the exit code. " +
             std::to_string(e.instances) + " curves, seed " + e.seed + ", " +
             format_duration(e.seconds) + ". " + experiment_finding(t) + ".");
    PageTable pt;
    pt.convention =
        "one row per cell of the sweep; counts are curves, ratios are medians" + conventions;
    for (std::size_t a = 0; a < t.axes.size(); ++a) pt.text(t.axis_names[a], t.axes[a]);
    for (std::size_t v = 0; v < t.values.size(); ++v) pt.numbers(t.value_names[v], t.values[v]);
    return sec.table(pt);
}
}  // namespace

Page verify_page(const ReportSummary& s, const std::string& file) {
    Page p;
    p.kind = "verify";
    p.provenance = s.provenance;
    for (const auto& [k, v] : s.provenance)
        if (k == "statements") p.header.push_back("Statements: " + v + ".");
    p.header.emplace_back(
        "Every verdict is decided by enclosures (reports/SCHEMA.md): `holds` and `violated` are "
        "proved, `inconclusive` means the enclosures overlap.");
    p.summary = summary(s, file.substr(file.find_last_of('/') + 1));
    PageSection all{"verify", "Checks", {}};
    std::vector<std::string> name, claim, verdict;
    std::vector<double> n, h, v, i, na, secs;
    for (const auto& c : s.checks) {
        name.push_back(c.name), claim.push_back(c.claim),
            verdict.push_back("**" + c.verdict + "**");
        n.push_back(double(c.instances)), h.push_back(double(c.counts[0]));
        v.push_back(double(c.counts[1])), i.push_back(double(c.counts[2]));
        na.push_back(double(c.counts[3])), secs.push_back(c.seconds);
    }
    PageTable t;
    t.convention =
        "counts are instances; a check's verdict is the worst over its instances "
        "(violated > inconclusive > holds)";
    t.text("check", name).text("claim", claim).text("verdict", verdict).numbers("instances", n);
    t.numbers("holds", h).numbers("violated", v).numbers("inconclusive", i).numbers("n/a", na);
    all.table(t.durations("time", secs));
    p.sections.push_back(all);
    for (const auto& c : s.checks)
        p.sections.push_back(check_section(c, conventions_of(s, c.name)));
    for (const auto& e : s.experiments)
        p.sections.push_back(experiment_section(e, conventions_of(s, e.name)));
    return p;
}

}  // namespace attnspec::cli
