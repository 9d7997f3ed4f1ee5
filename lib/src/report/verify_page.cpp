// The page of a verify report (/checks): summary with verdict counts and the strongest violation,
// one section per check (regime table, stored records) and per experiment.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "attnspec/base/format.hpp"
#include "attnspec/report/experiment_output.hpp"
#include "attnspec/report/kinds.hpp"

namespace attnspec {

namespace {
// How far the headline comparison of a violated record is from its relation: lhs/rhs for an
// upper bound, rhs/lhs for a lower one (> 1 when violated); 0 when it cannot be said.
double excess(const StoredComparison& c) {
    if (!(c.lhs > 0 && c.rhs > 0)) return 0;
    return c.relation.find('>') != std::string::npos ? c.rhs / c.lhs : c.lhs / c.rhs;
}

// "7 hold, 1 violated" (with ", 2 inconclusive", ", 1 not applicable" when there are any).
std::string verdict_counts(const long n[4]) {
    std::string out = std::to_string(n[0]) + (n[0] == 1 ? " holds, " : " hold, ") +
                      std::to_string(n[1]) + " violated";
    if (n[2] > 0) out += ", " + std::to_string(n[2]) + " inconclusive";
    if (n[3] > 0) out += ", " + std::to_string(n[3]) + " not applicable";
    return out;
}

// The strongest violated record of the checks of `kind` whose violation_robust is `robust`
// (1, 0, or NaN: not classified), by how far its headline comparison fails.
struct Strongest {
    const CheckRunSummary* check = nullptr;
    const StoredRecord* record = nullptr;
    const StoredComparison* comparison = nullptr;
};
Strongest strongest(const ReportSummary& s, const std::string& kind, bool fragile) {
    Strongest w;
    for (const auto& c : s.checks) {
        if (c.kind != kind) continue;
        for (const auto& rec : c.records) {
            if (rec.verdict != "violated" || (rec.violation_robust == 0.0) != fragile) continue;
            for (const auto& cm : rec.comparisons)
                if (cm.name == c.headline && (!w.comparison || excess(cm) > excess(*w.comparison)))
                    w = {&c, &rec, &cm};
        }
    }
    return w;
}

// "thm3.4, regime R, seed S: lhs = .. <= rhs = .. fails by a factor F (replay: `...`)".
std::string violation_text(const Strongest& w, const std::string& file) {
    const StoredComparison& m = *w.comparison;
    return w.check->name + ", regime " + w.record->regime + ", seed " + w.record->seed + ": " +
           m.lhs_name + " = " + format_number(m.lhs, 4) + " " + m.relation + " " + m.rhs_name +
           " = " + format_number(m.rhs, 4) + " fails by a factor " + format_number(excess(m), 3) +
           " (replay: `attnspec verify " + w.check->name + " --instance " + file + " --record " +
           w.record->group.substr(w.record->group.find_last_of('/') + 1) + "`)";
}

// The summary bullets: what was tested, the counts of theorems and readings apart, the strongest
// robust violation of a theorem with the strongest fragile one beside it, what to read first.
std::vector<std::string> summary(const ReportSummary& s, const std::string& file) {
    long n = 0, counts[4] = {0, 0, 0, 0}, theorems[4] = {0, 0, 0, 0}, readings[4] = {0, 0, 0, 0};
    long n_theorems = 0, n_readings = 0;
    for (const auto& c : s.checks) {
        n += c.instances;
        const bool reading = c.kind == "reading";
        (reading ? n_readings : n_theorems) += 1;
        for (int v = 0; v < 4; ++v) counts[v] += c.counts[v];
        for (int v = 0; v < 4; ++v)
            (reading ? readings : theorems)[v] += c.verdict == to_string(Verdict(v)) ? 1 : 0;
    }
    std::vector<std::string> out;
    out.push_back("Tested: " + std::to_string(s.checks.size()) + " checks (" +
                  std::to_string(n_theorems) + (n_theorems == 1 ? " theorem, " : " theorems, ") +
                  std::to_string(n_readings) +
                  (n_readings == 1 ? " reading) over " : " readings) over ") + std::to_string(n) +
                  " instances" +
                  (s.experiments.empty() ? std::string()
                                         : "; " + std::to_string(s.experiments.size()) +
                                               " experiment(s), tables without a verdict") +
                  ".");
    std::string verdicts = "Theorems: " + verdict_counts(theorems);
    if (n_readings > 0)
        verdicts +=
            "; readings (alternative readings, probed to map where they hold; they do not "
            "decide the exit code): " +
            verdict_counts(readings);
    out.push_back(verdicts + ". Instances: " + std::to_string(counts[0]) + " hold, " +
                  std::to_string(counts[1]) + " violated, " + std::to_string(counts[2]) +
                  " inconclusive, " + std::to_string(counts[3]) + " not applicable.");
    // The headline is a theorem's: the strongest violation that is not fragile (robust, or of a
    // check that does not classify), the strongest fragile one beside it. Without a violated
    // theorem, a reading's, said to be one.
    const std::string kind =
        strongest(s, "theorem", false).record || strongest(s, "theorem", true).record ? "theorem"
                                                                                      : "reading";
    const Strongest robust = strongest(s, kind, false), fragile = strongest(s, kind, true);
    const std::string of = kind == "reading" ? " of a reading (not a finding against a paper)" : "";
    if (robust.record) {
        const bool classified = robust.record->violation_robust == 1.0;
        out.push_back((classified ? "Strongest robust violation" : "Strongest violation") + of +
                      ": " + violation_text(robust, file) +
                      (classified ? ": violated at every rank tolerance up to 1e-8"
                                  : ": the check does not classify robustness") +
                      ".");
    }
    if (fragile.record)
        out.push_back(
            std::string(robust.record ? "Beside it, the strongest fragile violation"
                                      : "Strongest violation, fragile") +
            of + " (sigma_min/sigma_max(J) = " + format_number(fragile.record->sigma_ratio, 2) +
            "; fragile: not violated at some rank tolerance up to 1e-8, "
            "reports/SCHEMA.md): " +
            violation_text(fragile, file) + ".");
    std::string first;
    for (const char* k : {"theorem", "reading"})
        for (const char* v : {"violated", "inconclusive"})
            for (const auto& c : s.checks)
                if (first.empty() && c.kind == k && c.verdict == v)
                    first = "Look first at " + c.name + " (" + k + ", " + v + ": " +
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
    p += c.kind == "reading" ? std::string(
                                   "A reading (an alternative reading of an informal "
                                   "claim, probed to map where it holds; it does not "
                                   "decide the exit code). ")
                             : std::string("A theorem. ");
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
    if (!c.records.empty()) sec.para(stored_records_heading(c)).code(stored_record_lines(c));
    return sec;
}

PageSection experiment_section(const StoredExperiment& e, const std::string& conventions) {
    const ExperimentTable& t = e.table;
    PageSection sec{"verify/" + e.name, e.name + " (experiment)", {}};
    sec.para(e.claim);
    if (!e.source.empty()) sec.para("Source: " + e.source + ".");
    const std::string measures = experiment_measures(t);
    if (!measures.empty()) sec.para(measures);
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
    std::vector<std::string> name, kind, claim, verdict;
    std::vector<double> n, h, v, i, na, secs;
    for (const auto& c : s.checks) {
        name.push_back(c.name), kind.push_back(c.kind), claim.push_back(c.claim),
            verdict.push_back("**" + c.verdict + "**");
        n.push_back(double(c.instances)), h.push_back(double(c.counts[0]));
        v.push_back(double(c.counts[1])), i.push_back(double(c.counts[2]));
        na.push_back(double(c.counts[3])), secs.push_back(c.seconds);
    }
    PageTable t;
    t.convention =
        "counts are instances; a check's verdict is the worst over its instances "
        "(violated > inconclusive > holds); kind theorem: a reconstructed statement of a paper, "
        "its verdict decides the exit code; kind reading: an alternative reading, probed to map "
        "where it holds";
    t.text("check", name)
        .text("kind", kind)
        .text("claim", claim)
        .text("verdict", verdict)
        .numbers("instances", n);
    t.numbers("holds", h).numbers("violated", v).numbers("inconclusive", i).numbers("n/a", na);
    all.table(t.durations("time", secs));
    p.sections.push_back(all);
    for (const auto& c : s.checks)
        p.sections.push_back(check_section(c, conventions_of(s, c.name)));
    for (const auto& e : s.experiments)
        p.sections.push_back(experiment_section(e, conventions_of(s, e.name)));
    return p;
}

}  // namespace attnspec
