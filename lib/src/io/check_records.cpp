// Check records, check runs and instance files (io/check_records.hpp; reports/SCHEMA.md).
#include "attnspec/io/check_records.hpp"

#include <cmath>

#include "attnspec/io/report_writer.hpp"

namespace attnspec {

// ---------------------------------------------------------------- checks
void write_check_result(H5Group& g, const CheckResult& r) {
    g.attr("check", r.check);
    g.attr("claim", r.claim);
    g.attr("regime", r.regime);
    g.attr("seed", std::to_string(r.seed));
    g.attr("verdict", to_string(r.verdict));
    if (!r.note.empty()) g.attr("note", r.note);
    for (const auto& [k, v] : r.conventions) g.attr("convention:" + k, v);
    {
        H5Group h = g.group("hypotheses");
        for (const auto& hy : r.hypotheses) {
            H5Group x = h.group(hy.name);
            x.attr("met", static_cast<std::int64_t>(hy.met));
            x.attr("detail", hy.detail);
        }
    }
    {
        H5Group c = g.group("comparisons");
        for (const auto& cm : r.comparisons) {
            H5Group x = c.group(cm.name);
            x.attr("relation", to_string(cm.rel));
            x.attr("lhs_name", cm.lhs_name);
            x.attr("rhs_name", cm.rhs_name);
            x.attr("lhs", cm.lhs);
            x.attr("rhs", cm.rhs);
            x.write("lhs_enclosure", std::vector<double>{cm.lhs_enc.lo, cm.lhs_enc.hi});
            x.write("rhs_enclosure", std::vector<double>{cm.rhs_enc.lo, cm.rhs_enc.hi});
            x.attr("margin", cm.margin);
            x.attr("ratio", cm.ratio);
            x.attr("verdict", to_string(cm.verdict));
            x.attr("basis", cm.basis);
            x.attr("attainable", static_cast<std::int64_t>(cm.attainable));
        }
    }
    {
        H5Group t = g.group("tolerances");
        for (const auto& tol : r.tolerances) {
            H5Group x = t.group(tol.name);
            x.attr("value", tol.value);
            x.attr("reason", tol.reason);
        }
    }
    {
        H5Group v = g.group("values");
        for (const auto& [k, x] : r.values) v.attr(k, x);
    }
    {
        H5Group in = g.group("instance");
        for (const auto& [k, m] : r.instance) in.write(k, m);
    }
}

void write_check_run(H5Group& parent, const CheckRun& run) {
    H5Group g = parent.group(run.check);
    g.attr("check", run.check);
    g.attr("claim", run.claim);
    g.attr("verdict", to_string(run.verdict));
    g.attr("seed", std::to_string(run.seed));
    g.attr("instances", static_cast<std::int64_t>(run.results.size()));
    for (int v = 0; v < 4; ++v) g.attr(std::string("n_") + to_string(static_cast<Verdict>(v)), run.count(static_cast<Verdict>(v)));
    g.attr("headline_comparison", run.headline);
    g.attr("seconds", run.seconds);
    if (!run.search_effort.empty()) g.attr("search_effort", run.search_effort);

    // Per-instance table (one row per instance).
    std::vector<std::string> regime, verdict, seeds;
    std::vector<double> lhs, rhs, margin, ratio;
    for (const auto& r : run.results) {
        regime.push_back(r.regime);
        verdict.push_back(to_string(r.verdict));
        seeds.push_back(std::to_string(r.seed));
        const Comparison* c = r.comparison(run.headline);
        const double nan = std::numeric_limits<double>::quiet_NaN();
        lhs.push_back(c ? c->lhs : nan);
        rhs.push_back(c ? c->rhs : nan);
        margin.push_back(c ? c->margin : nan);
        ratio.push_back(c ? c->ratio : nan);
    }
    {
        H5Group t = g.group("instances");
        t.write("regime", regime);
        t.write("verdict", verdict);
        t.write("seed", seeds);
        t.write("lhs", lhs);
        t.write("rhs", rhs);
        t.write("margin", margin);
        t.write("ratio", ratio);
    }
    {
        H5Group t = g.group("regimes");
        std::vector<std::string> names;
        std::vector<std::int64_t> cnt[4];
        std::vector<double> worst, median;
        for (const auto& s : run.regimes) {
            names.push_back(s.regime);
            for (int v = 0; v < 4; ++v) cnt[v].push_back(s.counts[v]);
            worst.push_back(s.worst_ratio);
            median.push_back(s.median_ratio);
        }
        t.write("regime", names);
        for (int v = 0; v < 4; ++v) t.write(std::string("n_") + to_string(static_cast<Verdict>(v)), cnt[v]);
        t.write("worst_ratio", worst);
        t.write("median_ratio", median);
    }
    // Full records: every violated / inconclusive instance, plus the instance with the worst
    // headline ratio (so the tightest case can be replayed even when everything holds).
    H5Group recs = g.group("records");
    int worst = -1;
    double worst_ratio = -std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < run.results.size(); ++i) {
        const Comparison* c = run.results[i].comparison(run.headline);
        if (c && std::isfinite(c->ratio) && c->ratio > worst_ratio &&
            run.results[i].verdict != Verdict::not_applicable) {
            worst_ratio = c->ratio;
            worst = static_cast<int>(i);
        }
    }
    int written = 0;
    for (size_t i = 0; i < run.results.size(); ++i) {
        const auto& r = run.results[i];
        const bool keep = static_cast<int>(i) == worst || r.verdict == Verdict::violated ||
                          r.verdict == Verdict::inconclusive;
        if (!keep || written >= 64) continue;
        H5Group x = recs.group("instance_" + std::to_string(i));
        if (static_cast<int>(i) == worst) x.attr("is_worst", static_cast<std::int64_t>(1));
        write_check_result(x, r);
        ++written;
    }
}

void write_instance_file(const std::string& path, const CheckResult& r, const Provenance& prov) {
    ReportWriter w(path, prov);
    w.root().attr("kind", "attnspec-instance");
    w.root().attr("check", r.check);
    H5Group g = w.root().group("record");
    write_check_result(g, r);
    w.commit();
}

}  // namespace attnspec
