// The record every theorem check returns (CheckResult) and the comparison rule that turns two
// enclosed quantities into a verdict. Verdicts are never a comparison of two raw doubles: each side
// carries an interval that contains the exact value (under the assumptions stated in proofs/*.md),
// and `holds` / `violated` are only returned when the intervals prove them. CPU only.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace attnspec {

enum class Verdict : int { holds = 0, violated = 1, inconclusive = 2, not_applicable = 3 };
const char* to_string(Verdict v);
Verdict verdict_from_string(const std::string& s);  // throws DataError on an unknown name

// Closed interval [lo, hi] that contains an exact quantity; lo = hi for exact values.
struct Interval {
    double lo = 0, hi = 0;
    static Interval point(double x) { return {x, x}; }
    static Interval around(double x, double radius) { return {x - radius, x + radius}; }
    bool contains(double x) const { return lo <= x && x <= hi; }
    double radius() const { return 0.5 * (hi - lo); }
};

// A named tolerance: value = factor * u * scale, with the reason it has that size.
struct Tolerance {
    std::string name;
    double value = 0;
    std::string reason;  // "theorem -> bound -> measured worst ratio -> headroom"
};

enum class Relation { le, eq, lt };
const char* to_string(Relation r);

// One claim `lhs REL rhs` between enclosed quantities.
//  le: holds iff lhs.hi <= rhs.lo (proved); violated iff lhs.lo > rhs.hi (proved false);
//      inconclusive otherwise. With `attainable` (the claim's equality case is reached, e.g.
//      kappa = 2 for a rank-deficient W in Thm 3.5) an overlap counts as holds-within-enclosure.
//  eq: equality can never be proved in floating point: holds iff the enclosures intersect
//      (consistent), violated iff they are disjoint (proved unequal).
//  lt: strict: holds iff lhs.hi < rhs.lo; violated iff lhs.lo >= rhs.hi (equality refutes it);
//      inconclusive otherwise (`attainable` is ignored).
struct Comparison {
    std::string name;
    std::string lhs_name, rhs_name;
    double lhs = 0, rhs = 0;
    Interval lhs_enc, rhs_enc;
    Relation rel = Relation::le;
    bool attainable = false;
    Verdict verdict = Verdict::inconclusive;
    double margin = 0;  // le: rhs - lhs (>= 0 is room); eq: |lhs - rhs|
    double ratio = 0;   // lhs / rhs
    std::string basis;  // "proved by enclosures", "consistent within enclosures", ...
};

Comparison compare(const std::string& name, const std::string& lhs_name, double lhs,
                   Interval lhs_enc, Relation rel, const std::string& rhs_name, double rhs,
                   Interval rhs_enc, bool attainable = false);

struct Hypothesis {
    std::string name;
    bool met = false;
    std::string detail;
};

struct CheckResult {
    std::string check;       // registry name, e.g. "thm3.5"
    std::string claim;       // the statement tested, one line
    std::string regime;      // instance family, e.g. "tall/rank-deficient"
    std::uint64_t seed = 0;  // replay seed of this instance
    Verdict verdict = Verdict::inconclusive;
    std::vector<Hypothesis> hypotheses;
    std::vector<Comparison> comparisons;
    std::vector<Tolerance> tolerances;
    std::vector<std::pair<std::string, std::string>> conventions;
    std::vector<std::pair<std::string, double>> values;             // every factor, named
    std::vector<std::pair<std::string, Eigen::MatrixXd>> instance;  // inputs, for replay
    std::string note;

    // not_applicable if any hypothesis fails; else the worst comparison verdict
    // (violated > inconclusive > holds). A check with no comparison is inconclusive.
    void finalize();
    double value(const std::string& name) const;  // NaN when absent
    const Comparison* comparison(const std::string& name) const;
};

// The result table of an experiment (CheckRun::kind == "experiment"): one row per cell of the
// sweep; text columns name the cell (the axes), numeric columns hold what was measured there.
struct ExperimentTable {
    std::vector<std::string> axis_names;
    std::vector<std::vector<std::string>> axes;  // axes[a][row]
    std::vector<std::string> value_names;
    std::vector<std::vector<double>> values;  // values[v][row]
    // Table-wide (name, text) pairs: conventions (e.g. "kappa", "bias_form") and findings; written
    // as string attributes of the table/ group (reports/SCHEMA.md, "Experiments").
    std::vector<std::pair<std::string, std::string>> attributes;
    std::size_t rows() const { return axes.empty() ? 0 : axes[0].size(); }
};

// A run of one check over many instances, with per-regime counts.
struct RegimeSummary {
    std::string regime;
    int counts[4] = {0, 0, 0, 0};                                   // indexed by Verdict
    double worst_ratio = std::numeric_limits<double>::quiet_NaN();  // of the headline comparison
    double median_ratio = std::numeric_limits<double>::quiet_NaN();
};

struct CheckRun {
    std::string check;
    std::string claim;
    std::uint64_t seed = 0;
    std::string headline;  // name of the comparison whose ratio the summaries quote
    std::vector<CheckResult> results;
    Verdict verdict = Verdict::holds;  // worst over results (not_applicable only if all are)
    std::vector<RegimeSummary> regimes;
    double seconds = 0;
    std::string search_effort;  // how hard a counterexample search looked, if any
    // "theorem" (verdicts that decide verify's exit code), "reading" (verdicts that map where an
    // alternative reading holds; the exit code only with --fail-on ...,readings) or "experiment"
    // (a table, no verdict; reports/SCHEMA.md). Set from the registry (proofs/registry.hpp).
    std::string kind = "theorem";
    ExperimentTable table;  // kind "experiment" only
    std::string source;     // where the statement comes from (docs/SOURCES.md), if known

    void summarize();  // fills verdict and regimes from results
    int count(Verdict v) const;
};

}  // namespace attnspec
