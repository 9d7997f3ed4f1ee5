// Reports (lib/include/attnspec/report/): which kind a report is (report_kind), what `report show`
// reads from it (read_report_summary: provenance, check runs, experiments, other groups,
// conventions), its page (report_page: the summary lines and sections every kind has) and the
// rendering of `attnspec report render FILE --out DIR|F.md` (write_page_dir, page_markdown).
// Results go back as dicts python/attnspec/reports.py turns into objects.
#include <nanobind/eigen/dense.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <utility>
#include <vector>

#include "attnspec/base/errors.hpp"
#include "attnspec/io/h5.hpp"
#include "attnspec/io/report_writer.hpp"
#include "attnspec/report/figures.hpp"
#include "attnspec/report/kinds.hpp"
#include "attnspec/report/page.hpp"
#include "attnspec/report/summary.hpp"
#include "bindings.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace attnspec::python {
namespace {

nb::list pairs(const std::vector<std::pair<std::string, std::string>>& v) {
    nb::list l;
    for (const auto& [k, x] : v) l.append(nb::make_tuple(k, x));
    return l;
}

nb::dict record_dict(const StoredRecord& rec) {
    nb::dict d;
    d["group"] = rec.group, d["check"] = rec.check, d["regime"] = rec.regime;
    d["seed"] = rec.seed, d["verdict"] = rec.verdict, d["is_worst"] = rec.is_worst;
    d["violation_robust"] = rec.violation_robust, d["sigma_ratio"] = rec.sigma_ratio;
    d["replays_from_seed"] = replays_from_seed(rec);
    nb::list cmp;
    for (const StoredComparison& c : rec.comparisons)
        cmp.append(nb::make_tuple(c.name, c.lhs_name, c.lhs, c.relation, c.rhs_name, c.rhs,
                                  c.verdict, c.basis));
    d["comparisons"] = cmp;
    return d;
}

nb::list records(const std::vector<StoredRecord>& v) {
    nb::list l;
    for (const StoredRecord& rec : v) l.append(record_dict(rec));
    return l;
}

nb::dict run_dict(const CheckRunSummary& c) {
    nb::dict d;
    d["name"] = c.name, d["claim"] = c.claim, d["verdict"] = c.verdict;
    d["headline"] = c.headline, d["search_effort"] = c.search_effort, d["source"] = c.source;
    d["kind"] = c.kind, d["instances"] = c.instances, d["seconds"] = c.seconds;
    d["counts"] = nb::make_tuple(c.counts[0], c.counts[1], c.counts[2], c.counts[3]);
    nb::list regimes;
    for (const StoredRegime& s : c.regimes)
        regimes.append(nb::make_tuple(s.regime, s.counts[0], s.counts[1], s.counts[2], s.counts[3],
                                      s.worst_ratio, s.median_ratio));
    d["regimes"] = regimes, d["records"] = records(c.records);
    return d;
}

nb::dict experiment_dict(const StoredExperiment& e) {
    nb::dict d, cols;
    d["name"] = e.name, d["claim"] = e.claim, d["seed"] = e.seed, d["source"] = e.source;
    d["instances"] = e.instances, d["seconds"] = e.seconds, d["records"] = records(e.records);
    const ExperimentTable& t = e.table;
    for (std::size_t a = 0; a < t.axis_names.size(); ++a)
        cols[t.axis_names[a].c_str()] = nb::cast(t.axes[a]);
    for (std::size_t v = 0; v < t.value_names.size(); ++v)  // a copy: the table is a local
        cols[t.value_names[v].c_str()] = Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(
            t.values[v].data(), static_cast<Eigen::Index>(t.values[v].size())));
    d["columns"] = cols, d["attributes"] = pairs(t.attributes);
    return d;
}

nb::dict table_dict(const PageTable& t) {
    nb::dict d;
    d["convention"] = t.convention, d["names"] = nb::cast(t.names);
    nb::list right;  // std::vector<bool> holds proxies: one by one
    for (const bool r : t.right) right.append(r);
    d["cols"] = nb::cast(t.cols), d["right"] = right;
    return d;
}

nb::dict page_dict(const Page& p) {
    nb::dict d;
    d["kind"] = p.kind, d["header"] = nb::cast(p.header), d["summary"] = nb::cast(p.summary);
    nb::list sections;
    for (const PageSection& s : p.sections) {
        nb::list blocks;
        for (const PageBlock& b : s.blocks) {
            const char* kind = b.kind == PageBlock::Table  ? "table"
                               : b.kind == PageBlock::Code ? "code"
                                                           : "paragraph";
            blocks.append(nb::make_tuple(kind, b.text, table_dict(b.table)));
        }
        sections.append(nb::make_tuple(s.id, s.title, blocks));
    }
    d["sections"] = sections;
    return d;
}

// What `report show|render FILE` reads, in its order: the kind first (DataError on an
// unreadable schema or an unknown kind), the summary, the page with the provenance.
struct Loaded {
    std::string kind;
    ReportSummary summary;
    Page page;
};
Loaded load(const std::string& path) {
    H5Reader r(path);
    Loaded l;
    l.kind = report_kind(r);
    l.summary = read_report_summary(r);
    l.page = report_page(r, l.kind, l.summary);
    l.page.provenance = l.summary.provenance;
    return l;
}

nb::dict read(const std::string& path) {
    const Loaded l = load(path);
    const ReportSummary& s = l.summary;
    nb::dict d;
    d["kind"] = l.kind, d["provenance"] = pairs(s.provenance);
    nb::list checks, experiments;
    for (const CheckRunSummary& c : s.checks) checks.append(run_dict(c));
    for (const StoredExperiment& e : s.experiments) experiments.append(experiment_dict(e));
    d["checks"] = checks, d["experiments"] = experiments;
    d["other_groups"] = nb::cast(s.other_groups);
    nb::dict conventions;
    for (const auto& [name, conv] : s.conventions) conventions[name.c_str()] = pairs(conv);
    d["conventions"] = conventions, d["page"] = page_dict(l.page);
    d["text"] = render_show_text(path, s, l.kind == "verify" ? "" : page_text(l.page));
    return d;
}

bool ends_with_md(const std::string& s) { return s.size() > 3 && s.substr(s.size() - 3) == ".md"; }

// `report render FILE --out OUT [--no-figures]`: OUT ending in .md gets the Markdown alone,
// written atomically; else the page directory with the figures. The target is checked before
// anything is read. Returns the number of figures.
long render(const std::string& path, const std::string& out, bool figures) {
    if (out.empty()) fail_usage("render: give the output, a directory or a .md file", "out_dir");
    if (ends_with_md(out))
        check_output_target(out, {path});
    else
        check_page_dir_target(out, path);
    const Loaded l = load(path);
    nb::gil_scoped_release unlocked;
    if (ends_with_md(out)) {
        write_text_file_atomically(out, page_markdown(l.page));
        return 0;
    }
    return static_cast<long>(write_page_dir(path, out, l.page, figures));
}

}  // namespace

void bind_reports(nb::module_& m) {
    m.def("report_read", &read, "path"_a,
          "A report as `attnspec report show` reads it: kind, provenance, check runs, "
          "experiments, other groups, conventions, the page and the show text.");
    m.def(
        "report_markdown", [](const std::string& path) { return page_markdown(load(path).page); },
        "path"_a, "The page of `attnspec report render FILE` (Markdown, no figures).");
    m.def("report_render", &render, "path"_a, "out"_a, "figures"_a,
          "`attnspec report render FILE --out OUT`: the page directory (report.md, figures/) or "
          "a .md file; the number of figures.");
}

}  // namespace attnspec::python
