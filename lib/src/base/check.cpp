#include "attnspec/base/check.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "attnspec/base/enum_names.hpp"
#include "attnspec/base/errors.hpp"

namespace attnspec {

namespace {
// Indexed by the Verdict value (RegimeSummary::counts relies on 0..3).
constexpr EnumName<Verdict> kVerdictNames[] = {{Verdict::holds, "holds"},
                                               {Verdict::violated, "violated"},
                                               {Verdict::inconclusive, "inconclusive"},
                                               {Verdict::not_applicable, "not_applicable"}};
constexpr EnumName<Relation> kRelationNames[] = {
    {Relation::le, "<="}, {Relation::eq, "=="}, {Relation::lt, "<"}};
}  // namespace

const char* to_string(Verdict v) { return enum_name(v, kVerdictNames); }

Verdict verdict_from_string(const std::string& s) {
    return enum_from_name(s, kVerdictNames, "verdict", "", ExitCode::DataError);
}

const char* to_string(Relation r) { return enum_name(r, kRelationNames); }

Comparison compare(const std::string& name, const std::string& lhs_name, double lhs,
                   Interval lhs_enc, Relation rel, const std::string& rhs_name, double rhs,
                   Interval rhs_enc, bool attainable) {
    Comparison c;
    c.name = name;
    c.lhs_name = lhs_name;
    c.rhs_name = rhs_name;
    c.lhs = lhs;
    c.rhs = rhs;
    c.lhs_enc = lhs_enc;
    c.rhs_enc = rhs_enc;
    c.rel = rel;
    c.attainable = attainable;
    c.ratio = lhs / rhs;
    const bool nan = std::isnan(lhs_enc.lo) || std::isnan(lhs_enc.hi) || std::isnan(rhs_enc.lo) ||
                     std::isnan(rhs_enc.hi);
    const bool disjoint = lhs_enc.hi < rhs_enc.lo || rhs_enc.hi < lhs_enc.lo;
    if (nan) {
        c.verdict = Verdict::inconclusive;
        c.basis = "a side is NaN";
        c.margin = std::numeric_limits<double>::quiet_NaN();
        return c;
    }
    if (rel == Relation::le) {
        c.margin = rhs - lhs;
        if (lhs_enc.hi <= rhs_enc.lo) {
            c.verdict = Verdict::holds;
            c.basis = "proved by enclosures";
        } else if (lhs_enc.lo > rhs_enc.hi) {
            c.verdict = Verdict::violated;
            c.basis = "proved false by enclosures";
        } else if (attainable) {
            c.verdict = Verdict::holds;
            c.basis = "equality case: consistent within enclosures";
        } else {
            c.verdict = Verdict::inconclusive;
            c.basis = "enclosures overlap";
        }
    } else if (rel == Relation::lt) {
        c.margin = rhs - lhs;
        c.verdict = lhs_enc.hi < rhs_enc.lo    ? Verdict::holds
                    : lhs_enc.lo >= rhs_enc.hi ? Verdict::violated
                                               : Verdict::inconclusive;
        c.basis = c.verdict == Verdict::holds      ? "proved by enclosures"
                  : c.verdict == Verdict::violated ? "proved false by enclosures"
                                                   : "enclosures overlap";
    } else {
        c.margin = std::fabs(lhs - rhs);
        c.verdict = disjoint ? Verdict::violated : Verdict::holds;
        c.basis = disjoint ? "proved unequal by enclosures" : "consistent within enclosures";
    }
    return c;
}

void CheckResult::finalize() {
    for (const auto& h : hypotheses)
        if (!h.met) {
            verdict = Verdict::not_applicable;
            return;
        }
    if (comparisons.empty()) {
        verdict = Verdict::inconclusive;
        return;
    }
    verdict = Verdict::holds;
    for (const auto& c : comparisons) {
        if (c.verdict == Verdict::violated) verdict = Verdict::violated;
        if (c.verdict == Verdict::inconclusive && verdict == Verdict::holds)
            verdict = Verdict::inconclusive;
    }
}

double CheckResult::value(const std::string& name) const {
    for (const auto& [k, v] : values)
        if (k == name) return v;
    return std::numeric_limits<double>::quiet_NaN();
}

const Comparison* CheckResult::comparison(const std::string& name) const {
    for (const auto& c : comparisons)
        if (c.name == name) return &c;
    return nullptr;
}

int CheckRun::count(Verdict v) const {
    return static_cast<int>(std::count_if(results.begin(), results.end(),
                                          [v](const CheckResult& r) { return r.verdict == v; }));
}

void CheckRun::summarize() {
    std::map<std::string, std::vector<const CheckResult*>> by_regime;
    std::vector<std::string> order;
    for (const auto& r : results) {
        if (!by_regime.count(r.regime)) order.push_back(r.regime);
        by_regime[r.regime].push_back(&r);
    }
    regimes.clear();
    for (const auto& name : order) {
        RegimeSummary s;
        s.regime = name;
        std::vector<double> ratios;
        for (const CheckResult* r : by_regime[name]) {
            s.counts[static_cast<int>(r->verdict)]++;
            if (r->verdict == Verdict::not_applicable) continue;
            if (const Comparison* c = r->comparison(headline))
                if (std::isfinite(c->ratio)) ratios.push_back(c->ratio);
        }
        if (!ratios.empty()) {
            std::sort(ratios.begin(), ratios.end());
            s.worst_ratio = ratios.back();
            const size_t n = ratios.size();
            s.median_ratio = n % 2 ? ratios[n / 2] : 0.5 * (ratios[n / 2 - 1] + ratios[n / 2]);
        }
        regimes.push_back(s);
    }
    const int v = count(Verdict::violated), inc = count(Verdict::inconclusive),
              na = count(Verdict::not_applicable);
    if (v > 0)
        verdict = Verdict::violated;
    else if (inc > 0)
        verdict = Verdict::inconclusive;
    else if (!results.empty() && na == static_cast<int>(results.size()))
        verdict = Verdict::not_applicable;
    else
        verdict = Verdict::holds;
}

}  // namespace attnspec
